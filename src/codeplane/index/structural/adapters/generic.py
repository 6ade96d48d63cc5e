"""The query-driven adapter: one tree-sitter query per language (``patterns/<lang>.scm``) plus a small
``LanguageSpec`` turn any grammar into defs, scopes, bindings, imports and refs.

Capture names the engine understands:
``@definition.<kind>`` (with ``@name``, optional ``@owner`` naming e.g. a Go receiver type),
``@container.<kind>`` (with ``@name``: nests lexical paths like a Rust ``impl``, creates no DefFact),
``@scope.<kind>``, ``@local.param`` / ``@local.definition`` (binding names), ``@reference`` (plain names),
``@member`` (with optional ``@receiver``), ``@import`` (statements, handed to the spec's ``imports`` hook),
``@package`` (package/namespace name).

Same-file resolution is deliberately conservative, because PROVEN must never be wrong: a reference binds
when the nearest scope declaring its name declares it exactly once and the declaration is already visible
(parameters and hoisted definitions always are; a local after its declaration ends). Otherwise it stays
UNKNOWN — it never falls through to an outer scope past an ambiguous or not-yet-visible declaration.
Languages whose file-level names can be changed from elsewhere (C/C++ macros, PHP/Ruby globals) resolve
only locals and parameters.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from tree_sitter import Node, Query, QueryCursor

from codeplane.index.structural import grammars
from codeplane.index.structural.adapters.base import Extracted
from codeplane.index.structural.facts import (
    ANCHORED,
    CERTAIN,
    DEF_IN_SCOPE,
    DEFINITION,
    IMPORT,
    IMPORT_ALIAS,
    LOCAL_ASSIGN,
    PARAM,
    PROVEN,
    REFERENCE,
    TARGET_DEF,
    TARGET_IMPORT,
    TARGET_UNKNOWN,
    UNCERTAIN,
    UNKNOWN,
    BindRow,
    DefRow,
    ExportRow,
    ImportRow,
    RefRow,
    ScopeRow,
    ThunkRow,
)
from codeplane.index.structural.identity import UidAllocator, signature_hash
from codeplane.index.structural.source import SourceText


@dataclass(frozen=True)
class ImportBinding:
    """An import row and the identifier node (if any) that binds a local name to it."""

    row: ImportRow
    name_node: Node | None
    #: The imported name as written when an alias binds it (``{ a as b }``: ``a``); a cross-file reference.
    original: Node | None = None


@dataclass
class Context:
    """What language hooks see: the source, the uid allocator and the scope finder."""

    src: SourceText
    uids: UidAllocator
    scope_of: Callable[[Node], int]
    imports: list[ImportBinding] = field(default_factory=list)
    exports: list[ExportRow] = field(default_factory=list)
    thunks: list[ThunkRow] = field(default_factory=list)

    def add_import(self, statement: Node, name_node: Node | None, *, name: str, alias: str | None,
                   source: str | None, kind: str, original: Node | None = None) -> ImportRow:
        row = ImportRow(self.uids.import_uid(source, name, alias), self.scope_of(statement), name, alias, source, kind,
                        CERTAIN, *self.src.span(statement))
        self.imports.append(ImportBinding(row, name_node, original))
        return row


@dataclass(frozen=True)
class LanguageSpec:
    language: str
    patterns: tuple[str, ...]
    #: Def kinds that hold members (a function directly inside becomes a ``method``).
    class_kinds: frozenset[str] = frozenset({"class", "interface", "struct", "trait", "enum", "object", "module"})
    #: Whether names bound in a class body are visible unqualified inside its methods (Java, C#, Kotlin).
    members_visible: bool = False
    #: Whether file-level definitions may be resolved (False where macros or globals can rebind them).
    resolve_file_scope: bool = True
    #: Def kinds whose names are lexical bindings of their scope, visible throughout it (hoisted).
    binding_kinds: frozenset[str] = frozenset({"function", "class"})
    #: Node types whose end makes a local declaration visible (``let x = x + 1`` reads the outer x).
    declaration_types: frozenset[str] = frozenset()
    imports: Callable[[Context, Node], None] | None = None
    #: Records ExportRows from the tree, given file-scope bindings name -> (target kind, uid).
    exports: Callable[[Context, Node, dict[str, tuple[str, str | None]]], None] | None = None
    receiver_shapes: dict[str, str] = field(default_factory=dict)
    #: Node types that are names; a ``@local.*`` capture of another type is a pattern to expand.
    identifier_types: frozenset[str] = frozenset({"identifier"})
    #: Names a destructuring pattern declares (default: every identifier-typed descendant).
    pattern_names: Callable[[Node], list[Node]] | None = None
    #: Scope kinds that ``@local.var`` declarations (JS ``var``) bind in, skipping blocks.
    function_scopes: frozenset[str] = frozenset({"function", "file"})
    #: Scope kinds that do not see their enclosing scopes' locals (Ruby ``def``, PHP functions).
    opaque_scopes: frozenset[str] = frozenset()
    #: Whether a second assignment to a local names the same variable (Ruby, PHP) rather than a new one.
    rebinding_is_assignment: bool = False


@cache
def _query(grammar: str, patterns: tuple[str, ...]) -> Query:
    lang = grammars.language(grammar)
    if lang is None:
        raise RuntimeError(f"grammar {grammar} is missing")
    base = resources.files("codeplane.index.structural") / "patterns"
    return Query(lang, "\n".join((base / name).read_text("utf-8") for name in patterns))


class _Intervals:
    """Innermost enclosing interval lookup over properly nested (start, end) byte ranges."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        order = sorted(range(len(spans)), key=lambda i: (spans[i][0], -spans[i][1]))
        self.spans = spans
        self.order = order
        self.starts = [spans[i][0] for i in order]
        self.parent: list[int] = [-1] * len(spans)
        stack: list[int] = []
        for index in order:
            start, end = spans[index]
            while stack and not (spans[stack[-1]][0] <= start and end <= spans[stack[-1]][1]):
                stack.pop()
            self.parent[index] = stack[-1] if stack else -1
            stack.append(index)

    def innermost(self, start: int, end: int, *, exclude: int = -1) -> int:
        position = bisect.bisect_right(self.starts, start) - 1
        candidate = self.order[position] if position >= 0 else -1
        while candidate >= 0:
            s, e = self.spans[candidate]
            if s <= start and end <= e and candidate != exclude:
                return candidate
            candidate = self.parent[candidate]
        return -1


@dataclass
class _Def:
    node: Node
    kind: str
    name_node: Node
    owner: str | None
    container: bool
    pattern: int


def _visible_from(spec: LanguageSpec, name_node: Node) -> int:
    parent = name_node.parent
    while parent is not None:
        if parent.type in spec.declaration_types:
            return parent.end_byte
        if parent.type.endswith(("statement", "block", "body")):
            break
        parent = parent.parent
    return name_node.end_byte


def extract_generic(spec: LanguageSpec, grammar: str, src: SourceText, root: Node, uids: UidAllocator) -> Extracted:
    query = _query(grammar, spec.patterns)
    raw_defs: dict[int, _Def] = {}
    scope_nodes: dict[int, tuple[Node, str]] = {}
    locals_: dict[int, tuple[Node, str]] = {}
    refs: dict[int, Node] = {}
    members: dict[int, tuple[Node, Node | None]] = {}
    statements: dict[int, Node] = {}
    package: str | None = None
    for pattern_index, caps in QueryCursor(query).matches(root):
        names = caps.get("name", [])
        for cap, nodes in caps.items():
            if cap.startswith(("definition.", "container.")) and names:
                owner = caps.get("owner", [None])[0]
                for node in nodes:
                    known = raw_defs.get(node.id)
                    # Two patterns capturing one node: the earlier pattern in the .scm file is the specific one.
                    if known is None or pattern_index < known.pattern:
                        raw_defs[node.id] = _Def(node, cap.split(".", 1)[1], names[0],
                                                 src.text(owner) if owner is not None else None,
                                                 cap.startswith("container."), pattern_index)
            elif cap.startswith("scope."):
                for node in nodes:
                    scope_nodes.setdefault(node.id, (node, cap.split(".", 1)[1]))
            elif cap in ("local.param", "local.definition", "local.var"):
                for node in nodes:
                    for name_node in _names_in(spec, node):
                        locals_.setdefault(name_node.id, (name_node, cap))
            elif cap in ("reference", "definition_name"):
                for node in nodes:
                    refs[node.id] = node
            elif cap == "member":
                receiver = caps.get("receiver", [None])[0]
                for node in nodes:
                    members[node.id] = (node, receiver)
            elif cap == "import":
                for node in nodes:
                    statements[node.id] = node
            elif cap == "package" and package is None and nodes:
                package = src.text(nodes[0]).strip()
    # -- scopes --------------------------------------------------------------------------------------
    scope_list = [(root, "file"), *sorted(scope_nodes.values(), key=lambda s: (s[0].start_byte, -s[0].end_byte))]
    scope_index = {node.id: i for i, (node, _) in enumerate(scope_list)}
    intervals = _Intervals([(n.start_byte, n.end_byte) for n, _ in scope_list])

    def scope_of(node: Node) -> int:
        found = intervals.innermost(node.start_byte, node.end_byte, exclude=scope_index.get(node.id, -1))
        return max(found, 0)

    scopes = [ScopeRow(intervals.parent[i] if i else -1, kind, *src.span(node)) for i, (node, kind) in
              enumerate(scope_list)]
    # -- definitions -----------------------------------------------------------------------------------
    ordered = sorted(raw_defs.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte))
    def_intervals = _Intervals([(d.node.start_byte, d.node.end_byte) for d in ordered])
    paths: list[str] = []
    kinds: list[str] = []
    uid_of: list[str | None] = []
    defs: list[DefRow] = []
    for i, d in enumerate(ordered):
        parent = def_intervals.innermost(d.node.start_byte, d.node.end_byte, exclude=i)
        name = " ".join(src.text(d.name_node).split())  # headings and qualified names may span lines
        prefix = d.owner or (paths[parent] if parent >= 0 else "")
        lexical = f"{prefix}.{name}" if prefix else name
        kind = d.kind
        if kind == "function" and parent >= 0 and kinds[parent] in spec.class_kinds:
            kind = "method"
        paths.append(lexical)
        kinds.append(kind)
        if d.container:
            uid_of.append(uid_of[parent] if parent >= 0 else None)
            continue
        header = src.data[d.node.start_byte:_header_end(d.node)].decode("utf-8", "replace")
        sig = signature_hash(header[len(name):] if header.startswith(name) else header)
        uid = uids.def_uid(kind, lexical, sig)
        uid_of.append(uid)
        defs.append(DefRow(uid, kind, name, lexical, *src.span(d.node), *src.span(d.name_node)[:2], sig,
                           " ".join(header.split())[:200], uid_of[parent] if parent >= 0 else None,
                           scope_of(d.node)))
    ctx = Context(src, uids, scope_of)
    if spec.imports is not None:
        for statement in sorted(statements.values(), key=lambda n: n.start_byte):
            spec.imports(ctx, statement)
    resolver = _Resolver(spec, src, scopes, scope_of)
    import_nodes = {b.name_node.id for b in ctx.imports if b.name_node is not None}

    def local_scope(node: Node, cap: str) -> int:
        scope = scope_of(node)
        while cap == "local.var" and scopes[scope].kind not in spec.function_scopes and scope > 0:
            scope = scopes[scope].parent  # ``var`` is function-scoped
        return scope

    def_names: dict[int, str] = {}
    for i, d in enumerate(ordered):
        if d.container or uid_of[i] is None:
            continue
        def_names[d.name_node.id] = uid_of[i] or ""
        if d.name_node.id in import_nodes:
            continue  # ``const fs = require("fs")``: the import binds the name
        local = locals_.get(d.name_node.id)
        if local is not None:
            # ``const f = () => ...``: a definition bound like the variable it is.
            resolver.bind(d.name_node, LOCAL_ASSIGN, TARGET_DEF, uid_of[i], local_scope(d.name_node, local[1]),
                          hoisted=local[1] != "local.definition")
        elif kinds[i] in spec.binding_kinds:
            resolver.bind(d.name_node, DEF_IN_SCOPE, TARGET_DEF, uid_of[i], scope_of(d.node), hoisted=True)
    for node, cap in locals_.values():
        if node.id not in def_names and node.id not in import_nodes:
            resolver.bind(node, PARAM if cap == "local.param" else LOCAL_ASSIGN, TARGET_UNKNOWN, None,
                          local_scope(node, cap), hoisted=cap != "local.definition")
    for binding in ctx.imports:
        if binding.name_node is not None:
            resolver.bind(binding.name_node, IMPORT_ALIAS, TARGET_IMPORT, binding.row.import_uid,
                          binding.row.scope, hoisted=True)
    originals = {b.original.id: b.row.import_uid for b in ctx.imports if b.original is not None}
    for member_id in members:
        refs.pop(member_id, None)  # a member access is never a plain name
    for d in ordered:
        if not d.container:
            refs.setdefault(d.name_node.id, d.name_node)
    binds, ref_rows = resolver.finish(refs, members, def_names, import_nodes, originals)
    if spec.exports is not None:
        spec.exports(ctx, root, resolver.file_bindings())
    return Extracted(package, defs, scopes, binds, [b.row for b in ctx.imports], ref_rows, ctx.exports, ctx.thunks,
                     [])


def _names_in(spec: LanguageSpec, node: Node) -> list[Node]:
    if node.type in spec.identifier_types:
        return [node]
    if spec.pattern_names is not None:
        return spec.pattern_names(node)
    out: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in spec.identifier_types:
            out.append(current)
        else:
            stack.extend(current.named_children)
    return out


def _header_end(node: Node) -> int:
    """End of a definition's header (up to its body), for signatures and display names."""
    body = node.child_by_field_name("body")
    if body is not None and body.start_byte > node.start_byte:
        return body.start_byte
    return min(node.end_byte, node.start_byte + 200)


@dataclass
class _Binding:
    name_node: Node
    reason: str
    target_kind: str
    target_uid: str | None
    visible_from: int


class _Resolver:
    def __init__(self, spec: LanguageSpec, src: SourceText, scopes: list[ScopeRow],
                 scope_of: Callable[[Node], int]) -> None:
        self.spec = spec
        self.src = src
        self.scopes = scopes
        self.scope_of = scope_of
        self.table: dict[tuple[int, str], list[_Binding]] = {}
        #: Binding name node -> its table key: a declaration resolves to itself, whatever its visibility.
        self.declared: dict[int, tuple[int, str]] = {}

    def bind(self, name_node: Node, reason: str, target_kind: str, target_uid: str | None, scope: int, *,
             hoisted: bool) -> None:
        visible = 0 if hoisted else _visible_from(self.spec, name_node)
        key = (scope, self.src.text(name_node))
        self.table.setdefault(key, []).append(_Binding(name_node, reason, target_kind, target_uid, visible))
        self.declared[name_node.id] = key

    def file_bindings(self) -> dict[str, tuple[str, str | None]]:
        """Unambiguous file-scope names: what a same-file ``export { name }`` refers to."""
        return {name: (entries[0].target_kind, entries[0].target_uid)
                for (scope, name), entries in self.table.items() if scope == 0 and len(entries) == 1}

    def _lookup(self, scope: int, name: str, position: int) -> tuple[int, str] | None:
        current = scope
        passed_class = False
        while current >= 0:
            kind = self.scopes[current].kind
            parent = self.scopes[current].parent
            if kind in self.spec.class_kinds:
                if not self.spec.members_visible:
                    current = parent  # class bodies bind nothing visible to their methods (JS, Rust, ...)
                    continue
                if passed_class:
                    return None  # beyond the innermost class an inherited member could shadow anything
                passed_class = True
            elif kind == "file" and (passed_class or not self.spec.resolve_file_scope):
                return None
            found = self.table.get((current, name))
            if found:
                if not self._single(found) or min(b.visible_from for b in found) > position:
                    return None  # ambiguous or not yet declared: never fall through to an outer scope
                return (current, name)
            if kind in self.spec.opaque_scopes:
                return None
            current = parent
        return None

    def _single(self, entries: list[_Binding]) -> bool:
        if len(entries) == 1:
            return True
        return self.spec.rebinding_is_assignment and all(b.reason == LOCAL_ASSIGN for b in entries)

    def finish(self, refs: dict[int, Node], members: dict[int, tuple[Node, Node | None]], def_names: dict[int, str],
               import_names: set[int], originals: dict[int, str]) -> tuple[list[BindRow], list[RefRow]]:
        keys = sorted(self.table, key=lambda k: (k[0], k[1]))
        index = {k: i for i, k in enumerate(keys)}
        binds = []
        for scope, name in keys:
            entries = self.table[(scope, name)]
            single = entries[0] if self._single(entries) else None
            binds.append(BindRow(scope, name, single.target_kind if single else TARGET_UNKNOWN,
                                 single.target_uid if single else None, CERTAIN if single else UNCERTAIN,
                                 entries[0].reason))
        rows: list[RefRow] = []
        for node in sorted(refs.values(), key=lambda n: n.start_byte):
            name = self.src.text(node)
            scope = self.scope_of(node)
            if node.id in originals:
                rows.append(RefRow(scope, name, *self.src.span(node), IMPORT, UNKNOWN, UNCERTAIN, -1, None,
                                   originals[node.id], False, None))
                continue
            declared = self.declared.get(node.id)
            if declared is None and node.id in def_names:
                # The name of a definition that binds nothing lexically (a method): it denotes its def.
                rows.append(RefRow(scope, name, *self.src.span(node), DEFINITION, PROVEN, CERTAIN, -1,
                                   def_names[node.id], None, False, None))
                continue
            role = (DEFINITION if node.id in def_names else IMPORT if node.id in import_names
                    else DEFINITION if declared is not None else REFERENCE)
            found = self._lookup(scope, name, node.start_byte) if declared is None else self._own(declared)
            if found is None:
                rows.append(RefRow(scope, name, *self.src.span(node), role, UNKNOWN, UNCERTAIN, -1, None, None,
                                   False, None))
                continue
            bind = binds[index[found]]
            via = bind.target_uid if bind.target_kind == TARGET_IMPORT else None
            rows.append(RefRow(scope, name, *self.src.span(node), role, PROVEN, CERTAIN, index[found],
                               bind.target_uid, via, False, None))
        for node, receiver in sorted(members.values(), key=lambda m: m[0].start_byte):
            shape = "expr."
            via = None
            if receiver is not None:
                text = self.src.text(receiver)
                plain = receiver.type.endswith("identifier")
                shape = self.spec.receiver_shapes.get(text, "obj." if plain else shape)
                found = self._lookup(self.scope_of(receiver), text, receiver.start_byte) if plain else None
                if found is not None and binds[index[found]].target_kind == TARGET_IMPORT:
                    via = binds[index[found]].target_uid  # ``ns.member`` through ``import * as ns``
            rows.append(RefRow(self.scope_of(node), self.src.text(node), *self.src.span(node), REFERENCE, ANCHORED,
                               UNCERTAIN, -1, None, via, True, shape))
        rows.sort(key=lambda r: (r.start_line, r.start_col))
        return binds, rows

    def _own(self, key: tuple[int, str]) -> tuple[int, str] | None:
        return key if self._single(self.table.get(key, [])) else None

