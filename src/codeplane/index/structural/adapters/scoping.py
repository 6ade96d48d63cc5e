"""Same-file resolution for query-driven languages: bindings per (scope, name) and the conservative lookup
that makes a reference PROVEN only when the nearest declaring scope declares it once and it is visible."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from codeplane.index.structural.adapters.spec import LanguageSpec
from codeplane.index.structural.facts import (
    ANCHORED,
    CERTAIN,
    DEFINITION,
    IMPORT,
    LOCAL_ASSIGN,
    PROVEN,
    REFERENCE,
    TARGET_DEF,
    TARGET_IMPORT,
    TARGET_UNKNOWN,
    UNCERTAIN,
    UNKNOWN,
    BindRow,
    RefRow,
    ScopeRow,
)
from codeplane.index.structural.source import SourceText


def visible_from(spec: LanguageSpec, name_node: Node) -> int:
    parent = name_node.parent
    while parent is not None:
        if parent.type in spec.declaration_types:
            return parent.end_byte
        if parent.type.endswith(("statement", "block", "body")):
            break
        parent = parent.parent
    return name_node.end_byte


@dataclass
class _Binding:
    name_node: Node
    reason: str
    target_kind: str
    target_uid: str | None
    visible_from: int


def _declaration_type(binding: _Binding) -> str | None:
    parent = binding.name_node.parent
    return parent.type if parent is not None else None


class Resolver:
    def __init__(self, spec: LanguageSpec, src: SourceText, scopes: list[ScopeRow],
                 scope_of: Callable[[Node], int], *, owners: dict[int, int] | None = None,
                 bases: dict[int, tuple[int, ...]] | None = None) -> None:
        self.spec = spec
        self.src = src
        self.scopes = scopes
        self.scope_of = scope_of
        #: A member function defined outside its class -> its class's scope, looked in after the function's own.
        self.owners = owners or {}
        #: A class's scope -> the scopes of its base classes the file defines, looked in for a name it lacks.
        self.bases = bases or {}
        self.table: dict[tuple[int, str], list[_Binding]] = {}
        #: Binding name node -> its table key: a declaration resolves to itself, whatever its visibility.
        self.declared: dict[int, tuple[int, str]] = {}

    def bind(self, name_node: Node, reason: str, target_kind: str, target_uid: str | None, scope: int, *,
             hoisted: bool) -> None:
        visible = 0 if hoisted else visible_from(self.spec, name_node)
        key = (scope, self.src.text(name_node))
        self.table.setdefault(key, []).append(_Binding(name_node, reason, target_kind, target_uid, visible))
        self.declared[name_node.id] = key

    def file_bindings(self) -> dict[str, tuple[str, str | None]]:
        """Unambiguous file-scope names: what a same-file ``export { name }`` refers to."""
        out: dict[str, tuple[str, str | None]] = {}
        for (scope, name), entries in self.table.items():
            chosen = self._chosen(entries) if scope == 0 else None
            if chosen is not None:
                out[name] = (chosen.target_kind, chosen.target_uid)
        return out

    def _lookup(self, scope: int, name: str, position: int) -> tuple[int, str] | None:
        current = scope
        passed_class = False
        #: A use inside a function nested in the declaring scope runs when the function is called, not where
        #: it is written (``closures_see_later_bindings``): a later declaration is visible to it.
        crossed_function = False
        constant = self.spec.lexical_constant is not None and self.spec.lexical_constant(name)
        while current >= 0:
            kind = self.scopes[current].kind
            parent = self.scopes[current].parent
            if kind in self.spec.class_kinds:
                if not self.spec.members_visible and not constant:
                    current = parent  # class bodies bind nothing visible to their methods (JS, Rust, ...)
                    continue
                if passed_class:
                    return None  # beyond the innermost class an inherited member could shadow anything
                passed_class = True
            elif kind == "file" and (passed_class or not self.spec.resolve_file_scope):
                return None
            found = self.table.get((current, name))
            if found and self.spec.shadowing_falls_through and kind != "file" \
                    and min(b.visible_from for b in found) > position:
                found = None  # ``let x = x.f();``: this block's ``x`` begins after its statement
            if found:
                if not self._single(found) or (min(b.visible_from for b in found) > position
                                               and not crossed_function):
                    return None  # ambiguous or not yet declared: never fall through to an outer scope
                return (current, name)
            if not found and current in self.bases:
                inherited = self._inherited(current, name)
                if inherited is not None:
                    return inherited
            if kind in self.spec.opaque_scopes and not constant:
                return None
            crossed_function = crossed_function or (kind == "function" and (
                self.spec.closures_see_later_bindings or constant))
            current = self.owners.get(current, parent) if self.owners else parent
        return None

    def _single(self, entries: list[_Binding]) -> bool:
        return self._chosen(entries) is not None

    def _chosen(self, entries: list[_Binding]) -> _Binding | None:
        """The binding a name denotes in its scope, or None when its declarations there are rival ones."""
        if len(entries) == 1:
            return entries[0]
        if self.spec.rebinding_is_assignment and all(b.reason == LOCAL_ASSIGN for b in entries):
            return entries[0]
        overloads = self.spec.overload_types
        if overloads and all(_declaration_type(b) in overloads for b in entries[:-1]) and all(
                b.reason == entries[0].reason and b.target_kind == entries[0].target_kind for b in entries):
            # Overload signatures, then the implementation (or, in a declaration file, one more signature):
            # one function; the implementation is the definition whatever the call site's overload.
            return entries[-1]
        merging = self.spec.merging_types
        if merging:
            values = [b for b in entries if _declaration_type(b) not in merging]
            if len(values) <= 1 and all(b.target_kind == TARGET_DEF and b.target_uid for b in entries):
                return values[0] if values else entries[0]
        return None

    def finish(self, refs: dict[int, Node], members: dict[int, tuple[Node, Node | None]], def_names: dict[int, str],
               import_names: set[int], originals: dict[int, str], *,
               stores: set[int] | None = None) -> tuple[list[BindRow], list[RefRow]]:
        """Bind rows and ref rows; ``stores``: member nodes an assignment stores to (role DEFINITION)."""
        keys = sorted(self.table, key=lambda k: (k[0], k[1]))
        index = {k: i for i, k in enumerate(keys)}
        binds = []
        for scope, name in keys:
            entries = self.table[(scope, name)]
            single = self._chosen(entries)
            binds.append(BindRow(scope, name, single.target_kind if single else TARGET_UNKNOWN,
                                 single.target_uid if single else None, CERTAIN if single else UNCERTAIN,
                                 entries[0].reason))
        rows: list[RefRow] = []
        plain_shape, file_scope_shape = self.spec.plain_shape, self.spec.file_scope_shape
        declared_shape = self.spec.declared_shape
        member_name_parents = self.spec.member_name_parents
        for node in sorted(refs.values(), key=lambda n: n.start_byte):
            name = self.src.text(node)
            scope = self.scope_of(node)
            shape = plain_shape(node) if plain_shape is not None else None
            if shape is None and file_scope_shape is not None and self.scopes[scope].kind == "file":
                shape = file_scope_shape(node)
            if node.id in originals:
                rows.append(RefRow(scope, name, *self.src.span(node), IMPORT, UNKNOWN, UNCERTAIN, -1, None,
                                   originals[node.id], False, shape))
                continue
            declared = self.declared.get(node.id)
            if shape is None and declared_shape is not None and (declared is not None or node.id in def_names):
                shape = declared_shape(node)
            if declared is None and node.id in def_names:
                # The name of a definition that binds nothing lexically (a method): it denotes its def.
                rows.append(RefRow(scope, name, *self.src.span(node), DEFINITION, PROVEN, CERTAIN, -1,
                                   def_names[node.id], None, False, shape))
                continue
            role = (DEFINITION if node.id in def_names else IMPORT if node.id in import_names
                    else DEFINITION if declared is not None else REFERENCE)
            if declared is not None:
                found = self._own(declared)
            elif shape is not None and shape.startswith("q:"):
                found = None  # C++ ``K::x``: where the qualifier says, never the ``x`` a scope around binds
            elif member_name_parents and node.parent is not None and node.parent.type in member_name_parents:
                owner = self._class_of(scope)
                found = self._lookup(owner, name, node.start_byte) if owner >= 0 else None
            else:
                found = self._lookup(scope, name, node.start_byte)
            if found is None:
                rows.append(RefRow(scope, name, *self.src.span(node), role, UNKNOWN, UNCERTAIN, -1, None,
                                   self._own_import(declared, node) if role == IMPORT else None, False, shape))
                continue
            bind = binds[index[found]]
            via = bind.target_uid if bind.target_kind == TARGET_IMPORT else None
            rows.append(RefRow(scope, name, *self.src.span(node), role, PROVEN, CERTAIN, index[found],
                               bind.target_uid, via, False, shape))
        for node, receiver in sorted(members.values(), key=lambda m: m[0].start_byte):
            shape = self.spec.bare_member_shape
            via = None
            if receiver is not None:
                text = self.src.text(receiver)
                plain = receiver.type.endswith("identifier")
                path = self.spec.path_shape(receiver) if self.spec.path_shape is not None else None
                shape = path or self.spec.receiver_shapes.get(text, "obj." if plain else "expr.")
                found = self._lookup(self.scope_of(receiver), text, receiver.start_byte) if plain else None
                if found is not None and binds[index[found]].target_kind == TARGET_IMPORT:
                    via = binds[index[found]].target_uid  # ``ns.member`` through ``import * as ns``
            role = DEFINITION if stores and node.id in stores else REFERENCE
            rows.append(RefRow(self.scope_of(node), self.src.text(node), *self.src.span(node), role, ANCHORED,
                               UNCERTAIN, -1, None, via, True, shape))
        rows.sort(key=lambda r: (r.start_line, r.start_col))
        return binds, rows

    def _inherited(self, scope: int, name: str) -> tuple[int, str] | None:
        """The one base class (transitively, the nearest declaring one on each path) declaring ``name`` once."""
        declaring: set[int] = set()
        seen = {scope}
        pending = list(self.bases[scope])
        while pending:
            base = pending.pop()
            if base in seen:
                continue
            seen.add(base)
            if (base, name) in self.table:
                declaring.add(base)  # it hides what its own bases declare
            else:
                pending.extend(self.bases.get(base, ()))
        if len(declaring) != 1:
            return None
        (base,) = declaring
        return (base, name) if self._single(self.table[(base, name)]) else None

    def _class_of(self, scope: int) -> int:
        """The innermost class scope around ``scope`` (through a member defined outside its class), or -1."""
        while scope >= 0 and self.scopes[scope].kind not in self.spec.class_kinds:
            scope = self.owners.get(scope, self.scopes[scope].parent)
        return scope

    def _own_import(self, declared: tuple[int, str] | None, node: Node) -> str | None:
        """The import an import statement's own token binds, even where the name is bound twice (``use`` under
        opposite ``#[cfg]``s): its uses stay unbound, but the token itself denotes what its statement imports."""
        own = next((b for b in self.table.get(declared, []) if b.name_node.id == node.id), None) if declared else None
        return own.target_uid if own is not None and own.target_kind == TARGET_IMPORT else None

    def _own(self, key: tuple[int, str]) -> tuple[int, str] | None:
        return key if self._single(self.table.get(key, [])) else None

