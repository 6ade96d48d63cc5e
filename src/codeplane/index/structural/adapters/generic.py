"""The query-driven adapter: one tree-sitter query per language (``patterns/<lang>.scm``) plus a small
``LanguageSpec`` turn any grammar into defs, scopes, bindings, imports and refs.

Capture names the engine understands:
``@definition.<kind>`` (with ``@name``, or ``@names``: a destructuring pattern whose every name is one; optional
``@owner`` naming e.g. a Go receiver type),
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
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from tree_sitter import Node, Query, QueryCursor

from codeplane.index.structural import grammars
from codeplane.index.structural.adapters.base import Extracted
from codeplane.index.structural.adapters.scoping import Resolver
from codeplane.index.structural.adapters.spec import Context, ImportBinding, LanguageSpec
from codeplane.index.structural.facts import (
    DEF_IN_SCOPE,
    IMPORT_ALIAS,
    LOCAL_ASSIGN,
    PARAM,
    TARGET_DEF,
    TARGET_IMPORT,
    TARGET_UNKNOWN,
    DefRow,
    ScopeRow,
)
from codeplane.index.structural.identity import UidAllocator, signature_hash

__all__ = ["Context", "ImportBinding", "LanguageSpec", "extract_generic"]
from codeplane.index.structural.source import SourceText


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
    #: Owned by the class around it, not by the definition it sits in (a constructor's parameter property).
    in_class: bool = False


def extract_generic(spec: LanguageSpec, grammar: str, src: SourceText, root: Node, uids: UidAllocator) -> Extracted:
    query = _query(grammar, spec.patterns)
    raw_defs: dict[tuple[int, int], _Def] = {}
    scope_nodes: dict[int, tuple[Node, str]] = {}
    locals_: dict[int, tuple[Node, str]] = {}
    refs: dict[int, Node] = {}
    members: dict[int, tuple[Node, Node | None]] = {}
    stores: set[int] = set()
    statements: dict[int, Node] = {}
    package: str | None = None
    for pattern_index, caps in QueryCursor(query).matches(root):
        single = caps.get("name")
        names = single[:1] if single else [n for pattern in caps.get("names", []) for n in _names_in(spec, pattern)]
        for cap, nodes in caps.items():
            if cap.startswith(("definition.", "container.")) and names:
                owner = caps.get("owner", [None])[0]
                for node, name_node in ((node, name_node) for node in nodes for name_node in names):
                    # One declaration may name several things (``var a, b int``, ``int x, y;``): a match per name
                    # (tree-sitter's), or one match naming them all (``@names``).
                    key = (node.id, name_node.id)
                    known = raw_defs.get(key)
                    # Two patterns capturing one node: the earlier pattern in the .scm file is the specific one.
                    if known is None or pattern_index < known.pattern:
                        raw_defs[key] = _Def(node, cap.split(".", 1)[1], name_node,
                                             _owner_text(src, owner, name_node) if owner is not None else None,
                                             cap.startswith("container."), pattern_index, "in_class" in caps)
            elif cap.startswith("scope."):
                for node in nodes:
                    scope_nodes.setdefault(node.id, (node, cap.split(".", 1)[1]))
            elif cap in ("local.param", "local.definition", "local.var"):
                for node in nodes:
                    if cap == "local.param" and spec.binds_param is not None and not spec.binds_param(node):
                        continue
                    for name_node in _names_in(spec, node):
                        locals_.setdefault(name_node.id, (name_node, cap))
            elif cap in ("reference", "definition_name"):
                for node in nodes:
                    refs[node.id] = node
            elif cap in ("member", "member.store"):
                receiver = caps.get("receiver", [None])[0]
                for node in nodes:
                    if receiver is not None or node.id not in members:  # a pattern naming the receiver wins
                        members[node.id] = (node, receiver)
                    if cap == "member.store":
                        stores.add(node.id)
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
        while parent >= 0 and (ordered[parent].node.id == d.node.id  # a sibling name of the same declaration
                               or (d.in_class and kinds[parent] not in spec.class_kinds)):
            parent = def_intervals.parent[parent]
        name = " ".join(src.text(d.name_node).split())  # headings and qualified names may span lines
        enclosing = paths[parent] if parent >= 0 else ""
        # ``namespace ns { int K::m() {} }`` is ``ns.K.m`` (only a namespace can hold a definition with an owner).
        prefix = ".".join(p for p in (enclosing, _owner_path(d.owner)) if p) if d.owner else enclosing
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
    owners, bases = _class_links(spec, src, ordered, kinds, scope_index) if spec.owner_members_visible else ({}, {})
    if spec.imports is not None:
        for statement in sorted(statements.values(), key=lambda n: n.start_byte):
            spec.imports(ctx, statement)
    resolver = Resolver(spec, src, scopes, scope_of, owners=owners, bases=bases)
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
        elif kinds[i] in spec.binding_kinds and d.name_node.type != "property_identifier" and d.owner is None:
            # (nor does a member defined outside its class, ``int K::size() {...}``: its class declares it)
            # (a definition named by a property, ``exports.f = ...`` or an object's key, binds no plain name)
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
    if spec.member_kept is not None:
        members = {k: m for k, m in members.items() if spec.member_kept(m[0])}
    for member_id, (node, _) in members.items():
        refs.pop(member_id, None)  # a member access is never a plain name
        _drop_name_around(spec, refs, node)
    for d in ordered:
        if not d.container:
            refs.setdefault(d.name_node.id, d.name_node)
            members.pop(d.name_node.id, None)  # ``exports.f = ...`` names its definition: not also a member use
            _drop_name_around(spec, refs, d.name_node)
    binds, ref_rows = resolver.finish(refs, members, def_names, import_nodes, originals, stores=stores)
    if spec.exports is not None:
        spec.exports(ctx, root, resolver.file_bindings())
    return Extracted(package, defs, scopes, binds, [b.row for b in ctx.imports], ref_rows, ctx.exports, ctx.thunks,
                     [])


def _drop_name_around(spec: LanguageSpec, refs: dict[int, Node], node: Node) -> None:
    """A member or a definition named inside a name node (PHP's ``$n`` of ``K::$n`` or ``public static $n``) leaves
    that node no variable: bound as one, a local ``$n``'s rename rewrote the static property."""
    if node.parent is not None and node.parent.type in spec.identifier_types:
        refs.pop(node.parent.id, None)


def _owner_text(src: SourceText, owner: Node, name_node: Node) -> str:
    """What an ``@owner`` capture names: a whole qualified declarator (C++ ``ns::K::m``) names ``ns::K``."""
    text = src.text(owner)
    if owner.start_byte <= name_node.start_byte < owner.end_byte:
        text = text[:len(text) - len(src.text(name_node))].rstrip(": \t\r\n")
    return text


def _owner_path(owner: str) -> str:
    """An owner as a lexical path: C++ ``ns::Box<T>`` is ``ns.Box`` (template arguments are no part of a name)."""
    while "<" in owner:
        stripped = _TEMPLATE_ARGUMENTS.sub("", owner)
        if stripped == owner:
            break
        owner = stripped
    return ".".join(part.strip() for part in owner.split("::")) if "::" in owner else owner


_TEMPLATE_ARGUMENTS = re.compile(r"<[^<>]*>")


def _class_links(spec: LanguageSpec, src: SourceText, ordered: list[_Def], kinds: list[str],
                 scope_index: dict[int, int]) -> tuple[dict[int, int], dict[int, tuple[int, ...]]]:
    """(owners, bases) by member scope, for the classes the file defines once under their name: the scope of a
    member defined outside its class -> its class's (``template <class T> int Box<T>::get()`` names ``Box``; two
    ``Box`` in two namespaces leave it out), and a class's -> its base classes' (``struct D : public B, ns::C``;
    a template ``E<T>`` is no base looked in, as C++ does not look in a dependent one)."""
    classes: dict[str, list[int]] = {}
    bodies: list[tuple[_Def, int]] = []
    for d, kind in zip(ordered, kinds, strict=True):
        body = d.node.child_by_field_name("body") if kind in spec.class_kinds and d.owner is None else None
        if body is not None and body.id in scope_index:
            classes.setdefault(src.text(d.name_node), []).append(scope_index[body.id])
            bodies.append((d, scope_index[body.id]))

    def one(name: str) -> int:
        found = classes.get(name.rsplit("::", maxsplit=1)[-1].split("<", 1)[0].strip(), [])
        return found[0] if len(found) == 1 else -1

    owners: dict[int, int] = {}
    for d, kind in zip(ordered, kinds, strict=True):
        scope = scope_index.get(d.node.id, -1)
        if d.owner is not None and kind == "method" and scope >= 0 and (owner := one(d.owner)) >= 0:
            owners[scope] = owner
    bases: dict[int, tuple[int, ...]] = {}
    for d, scope in bodies:
        clause = next((c for c in d.node.named_children if c.type == "base_class_clause"), None)
        named = [one(src.text(c)) for c in clause.named_children
                 if c.type in ("type_identifier", "qualified_identifier")] if clause is not None else []
        if any(b >= 0 for b in named):
            bases[scope] = tuple(b for b in named if b >= 0)
    return owners, bases


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
    """End of a definition's header (up to its body), for signatures and display names. A name bound to a
    function or class (``var f = function f(a) {...}``, ``const g = (a) => a``) ends where the value's body starts:
    else its first 200 bytes, body included, were its signature, and any change inside them a changed signature."""
    body = node.child_by_field_name("body")
    # (``exports.f = function (a) {...}`` holds its value in ``right``)
    value = (node.child_by_field_name("value") or node.child_by_field_name("right")) if body is None else None
    if value is not None:
        body = value.child_by_field_name("body")
    if body is not None and body.start_byte > node.start_byte:
        return body.start_byte
    return min(node.end_byte, node.start_byte + 200)


