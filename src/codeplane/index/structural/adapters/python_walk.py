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


class Occurrence(NamedTuple):
    scope: int
    name: str
    span: tuple[int, int, int, int]
    kind: int  # NAME, MEMBER, KWARG, IMPORTED, EXPORTED
    ctx: int  # LOAD / STORE / DEL for names; role hint otherwise
    receiver: int  # MEMBER: occurrence index of a plain-name receiver, else -1
    shape: str | None
    import_uid: str | None


_new_tuple = tuple.__new__


class Walk:
    """Pass 1 over one module. Results are public attributes read by ``python_bind``."""

    def __init__(self, src: SourceText, uids: UidAllocator) -> None:
        self.src = src
        self.uids = uids
        self.scopes: list[Scope] = []
        self.occurrences: list[Occurrence] = []
        self.defs: list[PendingDef] = []
        self.imports: list[ImportRow] = []
        self.dynamic: list[DynamicRow] = []
        self.star_imports: list[ImportRow] = []
        self.all_names: list[str] = []
        self.all_literal = True
        self.all_seen = False
        self._stack: list[tuple[Node, int, int]] = []

    # -- driver -------------------------------------------------------------------------------------
    def run(self, root: Node) -> None:
        self.scopes.append(Scope("file", -1, "", self.src.span(root)))
        self._stack.append((root, 0, LOAD))
        # Dispatch on the grammar's integer node kind: ``Node.type`` builds a new string on every access.
        handlers, identifiers, containers = _dispatch()
        stack = self._stack
        occurrences, text, span = self.occurrences, self.src.text, self.src.span
        while stack:
            node, scope, ctx = stack.pop()
            kind = node.kind_id
            if kind in identifiers:
                if ctx == LOAD:  # most names: ``bind_name`` inlined
                    occurrences.append(_new_tuple(Occurrence, (scope, text(node), span(node), NAME, LOAD, -1, None,
                                                               None)))
                else:
                    self.bind_name(node, scope, ctx)
                continue
            handler = handlers.get(kind)
            if handler is not None:
                handler(self, node, scope, ctx)
                continue
            child_ctx = ctx if kind in containers else LOAD
            for child in node.named_children:
                stack.append((child, scope, child_ctx))

    def push(self, node: Node | None, scope: int, ctx: int = LOAD) -> None:
        if node is not None:
            self._stack.append((node, scope, ctx))

    # -- occurrences and sites ----------------------------------------------------------------------
    def occur(self, node: Node, scope: int, kind: int, ctx: int = LOAD, *, name: str | None = None,
              receiver: int = -1, shape: str | None = None, import_uid: str | None = None) -> int:
        occurrences = self.occurrences
        # ``tuple.__new__`` skips the NamedTuple's Python-level ``__new__``: most nodes of a file are occurrences.
        occurrences.append(_new_tuple(Occurrence, (scope, name if name is not None else self.src.text(node),
                                                   self.src.span(node), kind, ctx, receiver, shape, import_uid)))
        return len(occurrences) - 1

    def site(self, scope: int, name: str, kind: str, node: Node, *, occurrence: int, uid: str | None = None,
             stmt: Node | None = None) -> None:
        line, col = node.start_point
        entry = _new_tuple(Site, (kind, line + 1, self.src.col(line, col), occurrence, uid,
                                  self.src.span(stmt) if stmt is not None else None))
        owner = self.scopes[scope]
        owner.sites.setdefault(owner.key(name) if owner.mangle else name, []).append(entry)

    def bind_name(self, node: Node, scope: int, ctx: int, stmt: Node | None = None) -> None:
        name = self.src.text(node)
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
        self.scopes.append(Scope(kind, parent, prefix, self.src.span(node), def_uid, mangle))
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
                        UNCERTAIN if self.conditional(node) else CERTAIN, *self.src.span(node))
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
    left = node.child_by_field_name("left")
    right = node.child_by_field_name("right")
    w.push(node.child_by_field_name("type"), scope)
    w.push(right, scope)
    if left is None:
        return
    if left.type == "identifier":
        name = w.src.text(left)
        if name == "__all__" and scope == 0:
            _record_all(w, right, augment=node.type == "augmented_assignment")
        # ``x += 1`` reads and rebinds x; its one occurrence is recorded as the rebinding.
        w.bind_name(left, scope, STORE, stmt=node if node.type == "assignment" else None)
        return
    w.push(left, scope, STORE)


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
        name = w.src.text(content[0])
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
        w.site(target, w.src.text(name), "assign", name, occurrence=occurrence)
    w.push(node.child_by_field_name("value"), scope)


def _visit_delete(w: Walk, node: Node, scope: int, ctx: int) -> None:
    for child in node.named_children:
        w.push(child, scope, DEL)


def _visit_global(w: Walk, node: Node, scope: int, ctx: int) -> None:
    names = w.scopes[scope].globals if node.type == "global_statement" else w.scopes[scope].nonlocals
    for child in node.named_children:
        if child.type == "identifier":
            names.add(w.scopes[scope].key(w.src.text(child)))
            w.occur(child, scope, NAME, LOAD)


def _visit_attribute(w: Walk, node: Node, scope: int, ctx: int) -> None:
    obj = node.child_by_field_name("object")
    attr = node.child_by_field_name("attribute")
    receiver = -1
    shape = "expr."
    if obj is not None and obj.type == "identifier":
        text = w.src.text(obj)
        receiver = w.occur(obj, scope, NAME, LOAD, name=text)
        shape = f"{text}." if text in ("self", "cls") else "obj."
    else:
        w.push(obj, scope)
    if attr is not None:
        w.occur(attr, scope, MEMBER, ctx, receiver=receiver, shape=shape)


def _visit_keyword_argument(w: Walk, node: Node, scope: int, ctx: int) -> None:
    name = node.child_by_field_name("name")
    if name is not None:
        w.occur(name, scope, KWARG, shape="kwarg=")
    w.push(node.child_by_field_name("value"), scope)


def _visit_call(w: Walk, node: Node, scope: int, ctx: int) -> None:
    function = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    # A callee longer than every dynamic one cannot be one: most calls skip decoding their callee's text.
    if function is not None and function.end_byte - function.start_byte <= _LONGEST_DYNAMIC:
        callee = w.src.text(function) if function.type in ("identifier", "attribute") else ""
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
        text = w.src.text(value)
        if (text in ("globals()", "locals()", "sys.modules") or text.endswith(".__dict__")
                or (value.type == "call" and text.startswith("vars("))):
            keys = node.children_by_field_name("subscript")
            _dynamic_site(w, node, "bracket_access", keys[0] if len(keys) == 1 else None)
    for child in node.named_children:
        w.push(child, scope)


def _dynamic_site(w: Walk, node: Node, pattern: str, key: Node | None) -> None:
    literal = key is not None and key.type == "string" and len(key.named_children) == 3 \
        and key.named_children[1].type == "string_content"
    literals = (w.src.text(key.named_children[1]),) if literal and key is not None else ()
    line, col = node.start_point
    w.dynamic.append(DynamicRow(line + 1, w.src.col(line, col), pattern, literals, not literal))


def _visit_decorated(w: Walk, node: Node, scope: int, ctx: int) -> None:
    for child in node.named_children:
        w.push(child, scope)


_DISPATCH: list[tuple[dict[int, Handler], frozenset[int], frozenset[int]]] = []


def _dispatch() -> tuple[dict[int, Handler], frozenset[int], frozenset[int]]:
    """``HANDLERS``, identifier and pattern-container kinds keyed by the Python grammar's node kind ids
    (every id of a name: aliased nodes share a name but not an id). Computed once."""
    if not _DISPATCH:
        lang = grammars.language("python")
        assert lang is not None
        names = {i: lang.node_kind_for_id(i) for i in range(lang.node_kind_count) if lang.node_kind_is_named(i)}
        handlers = {i: HANDLERS[n] for i, n in names.items() if n in HANDLERS}
        identifiers = frozenset(i for i, n in names.items() if n == "identifier")
        containers = frozenset(i for i, n in names.items() if n in _PATTERN_CONTAINERS)
        _DISPATCH.append((handlers, identifiers, containers))
    return _DISPATCH[0]


Handler = Callable[["Walk", Node, int, int], None]
#: Node type -> handler; ``python_defs`` adds definitions, parameters, imports and match patterns.
HANDLERS: dict[str, Handler] = {
    **{name: _visit_comprehension for name in _COMPREHENSIONS},
    "assignment": _visit_assignment,
    "augmented_assignment": _visit_assignment,
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
