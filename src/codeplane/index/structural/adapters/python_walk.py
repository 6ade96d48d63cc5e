"""Python, pass 1: walk the tree-sitter tree once and record scopes, binding sites and name occurrences.

Python's scoping needs every binding of a scope before any name in it can be resolved (a name assigned
anywhere in a function is local to all of it), so resolution is a second pass (``python_bind``). This pass
mirrors the compiler's symbol table: decorators, defaults, annotations and base classes are evaluated in
the enclosing scope; a comprehension's first iterable too; ``:=`` binds outside comprehensions; ``global``
and ``nonlocal`` redirect bindings. The walk is iterative so deeply nested expressions cannot overflow
the interpreter stack.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from tree_sitter import Node

from codeplane.index.structural import grammars
from codeplane.index.structural.facts import CERTAIN, UNCERTAIN, DynamicRow, ImportRow
from codeplane.index.structural.identity import UidAllocator
from codeplane.index.structural.source import SourceText

LOAD, STORE, DEL = 0, 1, 2
# Occurrence kinds
NAME, MEMBER, KWARG, IMPORTED, EXPORTED = 0, 1, 2, 3, 4
_PATTERN_CONTAINERS = frozenset({
    "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "parenthesized_expression",
    "list_splat_pattern", "list_splat", "as_pattern_target", "expression_list"})
_COMPREHENSIONS = frozenset(
    {"list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression"})
_CONDITIONAL = frozenset({"if_statement", "try_statement", "with_statement", "for_statement",
                          "while_statement", "match_statement", "elif_clause", "else_clause"})
_DYNAMIC_CALLS = {"getattr": "getattr", "setattr": "setattr", "hasattr": "hasattr", "delattr": "delattr",
                  "eval": "eval", "exec": "exec", "compile": "eval", "__import__": "dynamic_import"}
_LONGEST_DYNAMIC = len(b"importlib.import_module")


class Site(NamedTuple):
    """One syntactic binding of a name: ``kind`` is def, class, import, param, assign, del."""

    kind: str
    line: int
    col: int
    occurrence: int  # index into Walk.occurrences (-1 if none)
    uid: str | None  # def_uid / import_uid for def, class and import sites
    stmt: tuple[int, int, int, int] | None  # assignment span, for module/class variables


@dataclass
class Scope:
    kind: str  # file | class | function | lambda | comprehension
    parent: int
    prefix: str  # lexical path of the enclosing definition ("" at file level)
    span: tuple[int, int, int, int]
    def_uid: str | None = None
    #: Class name used for private-name mangling (``__x`` -> ``_C__x``) inside a class, else None.
    mangle: str | None = None
    sites: dict[str, list[Site]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    star_import: bool = False

    @property
    def function_like(self) -> bool:
        return self.kind in ("function", "lambda", "comprehension")

    def key(self, name: str) -> str:
        """The name as the compiler stores it: private names are mangled inside classes."""
        if self.mangle and name.startswith("__") and not name.endswith("__") and "." not in name:
            return f"_{self.mangle}{name}"
        return name


@dataclass
class PendingDef:
    kind: str
    name: str
    lexical_path: str
    span: tuple[int, int, int, int]
    name_line: int
    name_col: int
    signature: str
    display_name: str
    parent_uid: str | None
    scope: int
    uid: str = ""


#: One name occurrence: (scope, name, span, kind, ctx, receiver, shape, import_uid). ``kind`` is NAME, MEMBER,
#: KWARG, IMPORTED or EXPORTED; ``ctx`` LOAD / STORE / DEL for names, a role hint otherwise; ``receiver`` (MEMBER)
#: the occurrence index of a plain-name receiver, else -1. A plain tuple: most nodes of a file are occurrences, and
#: ``python_bind`` only unpacks them.
Span = tuple[int, int, int, int]
Occurrence = tuple[int, str, Span, int, int, int, str | None, str | None]
_new_tuple = tuple.__new__


def _ascii_span(node: Node) -> Span:
    """``SourceText.span`` of a file with no wide line: byte columns are character columns."""
    (sr, sc), (er, ec) = node.start_point, node.end_point
    return sr + 1, sc, er + 1, ec


class Walk:
    """Pass 1 over one module. Results are public attributes read by ``python_bind``."""

    def __init__(self, src: SourceText, uids: UidAllocator) -> None:
        self.src = src
        self.uids = uids
        self.scopes: list[Scope] = []
        self.occurrences: list[Occurrence] = []
        self.defs: list[PendingDef] = []
        #: def_uids of ``@overload`` signatures: with the implementation after them, one name.
        self.overloads: set[str] = set()
        self.imports: list[ImportRow] = []
        self.dynamic: list[DynamicRow] = []
        self.star_imports: list[ImportRow] = []
        self.all_names: list[str] = []
        self.all_literal = True
        self.all_seen = False
        self._stack: list[tuple[Node, int, int]] = []
        #: ``text``/``span`` of a node, called for most nodes. In an all-ASCII file (most files) byte offsets and
        #: columns are character ones: text is sliced from one decoded string, no per-node decoding or conversion.
        self.text: Callable[[Node], str] = src.text
        self.span: Callable[[Node], Span] = src.span
        if src.data.isascii():
            chars = src.data.decode("ascii")
            self.text = lambda node: chars[node.start_byte:node.end_byte]
            self.span = _ascii_span

    # -- driver -------------------------------------------------------------------------------------
    def run(self, root: Node) -> None:
        self.scopes.append(Scope("file", -1, "", self.span(root)))
        self._stack.append((root, 0, LOAD))
        self._drain()

    def embedded(self, node: Node, scope: int, text: Callable[[Node], str], span: Callable[[Node], Span]) -> None:
        """Walks ``node`` of another tree, an expression parsed from a string of this file (a forward reference
        ``"Widget"``), as if it stood in ``scope``; ``text``/``span`` place its nodes in this file."""
        saved = self._stack, self.text, self.span
        self._stack, self.text, self.span = [(node, scope, LOAD)], text, span
        try:
            self._drain()
        finally:
            self._stack, self.text, self.span = saved

    def _drain(self) -> None:
        # Dispatch on the grammar's integer node kind: ``Node.type`` builds a new string on every access.
        handlers, identifiers, containers, inert = _dispatch()
        stack = self._stack
        occurrences, text, span = self.occurrences, self.text, self.span
        while stack:
            node, scope, ctx = stack.pop()
            kind = node.kind_id
            if kind in identifiers:
                if ctx == LOAD:  # most names: ``bind_name`` inlined
                    occurrences.append((scope, text(node), span(node), NAME, LOAD, -1, None, None))
                else:
                    self.bind_name(node, scope, ctx)
                continue
            handler = handlers.get(kind)
            if handler is not None:
                handler(self, node, scope, ctx)
                continue
            child_ctx = ctx if kind in containers else LOAD
            for child in node.named_children:
                # A leaf that records nothing (a literal, a string's delimiters and content, a comment) is not pushed:
                # visiting it would do nothing, and strings alone are about a third of the nodes walked.
                if child.kind_id not in inert:
                    stack.append((child, scope, child_ctx))

    def push(self, node: Node | None, scope: int, ctx: int = LOAD) -> None:
        if node is not None:
            self._stack.append((node, scope, ctx))

    # -- occurrences and sites ----------------------------------------------------------------------
    def occur(self, node: Node, scope: int, kind: int, ctx: int = LOAD, *, name: str | None = None,
              receiver: int = -1, shape: str | None = None, import_uid: str | None = None) -> int:
        occurrences = self.occurrences
        occurrences.append((scope, name if name is not None else self.text(node), self.span(node), kind, ctx,
                            receiver, shape, import_uid))
        return len(occurrences) - 1

    def site(self, scope: int, name: str, kind: str, node: Node, *, occurrence: int, uid: str | None = None,
             stmt: Node | None = None) -> None:
        line, col = node.start_point
        entry = _new_tuple(Site, (kind, line + 1, self.src.col(line, col), occurrence, uid,
                                  self.span(stmt) if stmt is not None else None))
        owner = self.scopes[scope]
        owner.sites.setdefault(owner.key(name) if owner.mangle else name, []).append(entry)

    def bind_name(self, node: Node, scope: int, ctx: int, stmt: Node | None = None) -> None:
        name = self.text(node)
        if ctx == LOAD:
            self.occur(node, scope, NAME, LOAD, name=name)
            return
        occurrence = self.occur(node, scope, NAME, ctx, name=name)
        # Only module and class assignments become variable definitions (``python_bind``).
        stmt = stmt if self.scopes[scope].kind in ("file", "class") else None
        self.site(scope, name, "assign" if ctx == STORE else "del", node, occurrence=occurrence, stmt=stmt)

    def new_scope(self, kind: str, parent: int, node: Node, prefix: str, def_uid: str | None = None) -> int:
        mangle = self.scopes[parent].mangle if parent >= 0 else None
        if kind == "class":
            stripped = prefix.rsplit(".", 1)[-1].lstrip("_")
            mangle = stripped or None
        self.scopes.append(Scope(kind, parent, prefix, self.span(node), def_uid, mangle))
        return len(self.scopes) - 1

    def conditional(self, node: Node) -> bool:
        """Whether ``node`` sits under an if/try/with/loop inside its scope (a conditional import)."""
        parent = node.parent
        while parent is not None and parent.type not in ("module", "function_definition", "class_definition"):
            if parent.type in _CONDITIONAL:
                return True
            parent = parent.parent
        return False

    def add_import(self, node: Node, scope: int, name: str, *, alias: str | None, source: str | None,
                   kind: str) -> ImportRow:
        row = ImportRow(self.uids.import_uid(source, name, alias), scope, name, alias, source, kind,
                        UNCERTAIN if self.conditional(node) else CERTAIN, *self.span(node))
        self.imports.append(row)
        return row


def _visit_comprehension(w: Walk, node: Node, scope: int, ctx: int) -> None:
    inner = w.new_scope("comprehension", scope, node, w.scopes[scope].prefix)
    first = True
    for child in node.named_children:
        if child.type == "for_in_clause":
            w.push(child.child_by_field_name("left"), inner, STORE)
            for right in child.children_by_field_name("right"):
                # The outermost iterable is evaluated in the enclosing scope (language reference 6.2.4).
                w.push(right, scope if first else inner)
            first = False
        else:
            w.push(child, inner)


def _visit_assignment(w: Walk, node: Node, scope: int, ctx: int) -> None:
    left = node.child_by_field_id(_FIELDS["left"])
    right = node.child_by_field_id(_FIELDS["right"])
    w.push(node.child_by_field_id(_FIELDS["type"]), scope)
    w.push(right, scope)
    if left is None:
        return
    if left.type == "identifier":
        name = w.text(left)
        if name == "__all__" and scope == 0:
            _record_all(w, right, augment=node.type == "augmented_assignment")
        # ``x += 1`` reads and rebinds x; its one occurrence is recorded as the rebinding.
        w.bind_name(left, scope, STORE, stmt=node if node.type == "assignment" else None)
        return
    if node.type == "assignment" and w.scopes[scope].kind in ("file", "class"):
        _bind_unpacked(w, left, scope, node)
        return
    w.push(left, scope, STORE)


def _bind_unpacked(w: Walk, target: Node, scope: int, stmt: Node) -> None:
    """``A, (B, *C) = ...`` in a module or class: each name is a variable assigned by the statement, as ``A = ...``
    is (an attribute or subscript target stores into something else, walked as a store)."""
    if target.type == "identifier":
        w.bind_name(target, scope, STORE, stmt=stmt)
    elif target.type in _PATTERN_CONTAINERS:
        for child in target.named_children:
            _bind_unpacked(w, child, scope, stmt)
    else:
        w.push(target, scope, STORE)


def _visit_type_alias(w: Walk, node: Node, scope: int, ctx: int) -> None:
    """``type Alias[T] = ...`` (PEP 695) binds ``Alias`` where it stands, like ``Alias: TypeAlias = ...``; the
    value and the type parameters are read."""
    left = node.child_by_field_name("left")
    target = left.named_children[0] if left is not None and left.named_children else None
    name = target.named_children[0] if target is not None and target.type == "generic_type" else target
    for child in node.named_children:
        if child != left:  # (tree-sitter hands out a new Node object on each access: compare, never ``is``)
            w.push(child, scope)
    if name is None or name.type != "identifier":
        w.push(left, scope)
        return
    w.bind_name(name, scope, STORE, stmt=node)
    if target is not None and target != name:
        for child in target.named_children[1:]:
            w.push(child, scope)


def _record_all(w: Walk, value: Node | None, *, augment: bool) -> None:
    w.all_seen = True
    if value is None or value.type not in ("list", "tuple"):
        w.all_literal = False
        return
    if not augment:
        w.all_names = []
    for item in value.named_children:
        content = [c for c in item.named_children if c.type == "string_content"] if item.type == "string" else []
        if item.type != "string" or len(content) != 1 or len(item.named_children) != 3:
            w.all_literal = False
            continue
        name = w.text(content[0])
        w.all_names.append(name)
        w.occur(content[0], 0, EXPORTED, name=name)


def _visit_for(w: Walk, node: Node, scope: int, ctx: int) -> None:
    left = node.child_by_field_name("left")
    for child in node.named_children:
        w.push(child, scope, STORE if child == left else LOAD)


def _visit_as_pattern(w: Walk, node: Node, scope: int, ctx: int) -> None:
    alias = node.child_by_field_name("alias")
    for child in node.named_children:
        w.push(child, scope, STORE if child == alias else ctx if ctx == STORE else LOAD)


def _visit_named_expression(w: Walk, node: Node, scope: int, ctx: int) -> None:
    # PEP 572: the target binds in the nearest enclosing scope that is not a comprehension.
    target = scope
    while w.scopes[target].kind == "comprehension":
        target = w.scopes[target].parent
    name = node.child_by_field_name("name")
    if name is not None:
        occurrence = w.occur(name, scope, NAME, STORE)
        w.site(target, w.text(name), "assign", name, occurrence=occurrence)
    w.push(node.child_by_field_name("value"), scope)


def _visit_delete(w: Walk, node: Node, scope: int, ctx: int) -> None:
    for child in node.named_children:
        w.push(child, scope, DEL)


def _visit_global(w: Walk, node: Node, scope: int, ctx: int) -> None:
    names = w.scopes[scope].globals if node.type == "global_statement" else w.scopes[scope].nonlocals
    for child in node.named_children:
        if child.type == "identifier":
            names.add(w.scopes[scope].key(w.text(child)))
            w.occur(child, scope, NAME, LOAD)


def _visit_attribute(w: Walk, node: Node, scope: int, ctx: int) -> None:
    # The most frequent handler: ``occur`` inlined.
    obj = node.child_by_field_id(_FIELDS["object"])
    attr = node.child_by_field_id(_FIELDS["attribute"])
    occurrences, text, span = w.occurrences, w.text, w.span
    receiver = -1
    shape = "expr."
    if obj is not None and obj.type == "identifier":
        name = text(obj)
        receiver = len(occurrences)
        occurrences.append((scope, name, span(obj), NAME, LOAD, -1, None, None))
        shape = f"{name}." if name in ("self", "cls") else "obj."
    else:
        w.push(obj, scope)
    if attr is not None:
        occurrences.append((scope, text(attr), span(attr), MEMBER, ctx, receiver, shape, None))


def _visit_keyword_argument(w: Walk, node: Node, scope: int, ctx: int) -> None:
    name = node.child_by_field_id(_FIELDS["name"])
    if name is not None:
        w.occur(name, scope, KWARG, shape="kwarg=")
    w.push(node.child_by_field_id(_FIELDS["value"]), scope)


def _visit_call(w: Walk, node: Node, scope: int, ctx: int) -> None:
    function = node.child_by_field_id(_FIELDS["function"])
    args = node.child_by_field_id(_FIELDS["arguments"])
    # A callee longer than every dynamic one cannot be one: most calls skip decoding their callee's text.
    if function is not None and function.end_byte - function.start_byte <= _LONGEST_DYNAMIC:
        callee = w.text(function) if function.type in ("identifier", "attribute") else ""
        pattern = _DYNAMIC_CALLS.get(callee) or ("dynamic_import" if callee == "importlib.import_module" else None)
        if pattern is not None:
            positional = [a for a in (args.named_children if args is not None else [])
                          if a.type not in ("keyword_argument", "comment")]
            key_index = 1 if pattern in ("getattr", "setattr", "hasattr", "delattr") else 0
            _dynamic_site(w, node, pattern, positional[key_index] if len(positional) > key_index else None)
    w.push(function, scope)
    w.push(args, scope)


def _visit_subscript(w: Walk, node: Node, scope: int, ctx: int) -> None:
    value = node.child_by_field_name("value")
    if value is not None:
        text = w.text(value)
        if (text in ("globals()", "locals()", "sys.modules") or text.endswith(".__dict__")
                or (value.type == "call" and text.startswith("vars("))):
            keys = node.children_by_field_name("subscript")
            _dynamic_site(w, node, "bracket_access", keys[0] if len(keys) == 1 else None)
    for child in node.named_children:
        w.push(child, scope)


def _dynamic_site(w: Walk, node: Node, pattern: str, key: Node | None) -> None:
    literal = key is not None and key.type == "string" and len(key.named_children) == 3 \
        and key.named_children[1].type == "string_content"
    literals = (w.text(key.named_children[1]),) if literal and key is not None else ()
    line, col = node.start_point
    w.dynamic.append(DynamicRow(line + 1, w.src.col(line, col), pattern, literals, not literal))


def _visit_decorated(w: Walk, node: Node, scope: int, ctx: int) -> None:
    for child in node.named_children:
        w.push(child, scope)


#: Kinds whose visit records nothing: terminals (a token never has children) and the no-op handlers' kinds.
#: Not pushed at all (``Walk.run``): a string alone is four nodes walked, and literals are many.
_INERT = frozenset({"string_start", "string_end", "string_content", "comment", "integer", "float", "true", "false",
                    "none", "ellipsis", "escape_sequence", "type_conversion", "line_continuation"})
#: Field ids of the fields the most frequent handlers read (``child_by_field_name`` looks a name up every call).
_HOT_FIELDS = ("object", "attribute", "function", "arguments", "name", "value", "left", "right", "type")
_FIELDS: dict[str, int] = {}
_Dispatch = tuple[dict[int, "Handler"], frozenset[int], frozenset[int], frozenset[int]]
_DISPATCH: list[_Dispatch] = []


def _dispatch() -> _Dispatch:
    """``HANDLERS``, identifier, pattern-container and inert kinds keyed by the Python grammar's node kind ids
    (every id of a name: aliased nodes share a name but not an id). Computed once."""
    if not _DISPATCH:
        lang = grammars.language("python")
        assert lang is not None
        names = {i: lang.node_kind_for_id(i) for i in range(lang.node_kind_count) if lang.node_kind_is_named(i)}
        handlers = {i: HANDLERS[n] for i, n in names.items() if n in HANDLERS}
        identifiers = frozenset(i for i, n in names.items() if n == "identifier")
        containers = frozenset(i for i, n in names.items() if n in _PATTERN_CONTAINERS)
        inert = frozenset(i for i, n in names.items() if n in _INERT)
        for field in _HOT_FIELDS:
            _FIELDS[field] = lang.field_id_for_name(field)  # type: ignore[assignment]  # every one is a Python field
        _DISPATCH.append((handlers, identifiers, containers, inert))
    return _DISPATCH[0]


Handler = Callable[["Walk", Node, int, int], None]
#: Node type -> handler; ``python_defs`` adds definitions, parameters, imports and match patterns.
HANDLERS: dict[str, Handler] = {
    **{name: _visit_comprehension for name in _COMPREHENSIONS},
    "assignment": _visit_assignment,
    "augmented_assignment": _visit_assignment,
    "type_alias_statement": _visit_type_alias,
    "for_statement": _visit_for,
    "as_pattern": _visit_as_pattern,
    "named_expression": _visit_named_expression,
    "delete_statement": _visit_delete,
    "global_statement": _visit_global,
    "nonlocal_statement": _visit_global,
    "attribute": _visit_attribute,
    "keyword_argument": _visit_keyword_argument,
    "call": _visit_call,
    "subscript": _visit_subscript,
    "decorated_definition": _visit_decorated,
    "comment": lambda w, n, s, c: None,
    "string_content": lambda w, n, s, c: None,
}
