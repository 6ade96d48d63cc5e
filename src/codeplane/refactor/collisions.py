"""Would the new name clash with a binding that already exists? (issue 9 item 1: report, never apply silently).

Three checks, all from index facts:
- the scope that binds the target already binds the new name (a sibling def, class member, import); in Go, the
  package (all the files of its directory) already declares it, or the type already has such a method or field;
- a class of the target's family (or an ancestor) already has a member with the new name;
- at a renamed reference, a scope between the reference and the target's binding binds the new name, so
  the renamed reference would be captured by it (shadowing).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from codeplane.refactor.facts import Def, FactReader, Scope
from codeplane.refactor.members import MemberFamily
from codeplane.refactor.models import Collision
from codeplane.refactor.spans import SpanEdit

_LIMIT = 10_000
MAX_COLLISIONS = 50


class _Scopes:
    def __init__(self, reader: FactReader) -> None:
        self.reader = reader
        self._cache: dict[int, Scope | None] = {}

    def get(self, scope_id: int) -> Scope | None:
        if scope_id not in self._cache:
            self._cache[scope_id] = self.reader.scope(scope_id)
        return self._cache[scope_id]

    def chain(self, scope_id: int | None) -> list[int]:
        out: list[int] = []
        current = scope_id
        while current is not None and len(out) < 64:
            out.append(current)
            scope = self.get(current)
            current = scope.parent_id if scope is not None else None
        return out


def find_collisions(reader: FactReader, target: Def, new_name: str, family: MemberFamily | None,
                    ref_scopes: Iterable[tuple[SpanEdit, int | None]]) -> list[Collision]:
    """Clashes of ``new_name`` with existing bindings (sorted, bounded)."""
    scopes = _Scopes(reader)
    found: dict[tuple[str, int, int], Collision] = {}

    def add(at: tuple[str, int, int], kind: str, scope: str, detail: str) -> None:
        found.setdefault(at, Collision(path=at[0], line=at[1], column=at[2], kind=kind, scope=scope, detail=detail))

    def kind_of(scope_id: int) -> str:
        scope = scopes.get(scope_id)
        return scope.kind if scope is not None else "scope"

    if target.scope_id is not None:
        for bind in reader.binds_named([target.scope_id], new_name):
            # Where the existing binding is, when it is a definition: that is what the rename would clash with.
            there = reader.get_def(bind.target_uid) if bind.target_uid else None
            at = (there.path, there.name_line, there.name_column) if there is not None and there.path == target.path \
                else (target.path, target.name_line, target.name_column)
            add(at, "same_scope", kind_of(bind.scope_id),
                f"{new_name!r} is already bound in the scope that defines {target.qualified_name}")
    for d in _go_package_twins(reader, target, new_name):
        add((d.path, d.name_line, d.name_column), "same_scope", "package",
            f"{d.qualified_name} already exists in the package of {target.qualified_name} ({d.path}): Go "
            "declares a package's names, and a type's methods and fields, once across all its files")
    if family is not None:
        owners = set(family.classes) | {d.parent_uid for d in family.overridden if d.parent_uid}
        for d in reader.defs_named(new_name, _LIMIT):
            if d.parent_uid in owners:
                add((d.path, d.name_line, d.name_column), "member", "class",
                    f"{d.qualified_name} already exists in the class hierarchy of {target.qualified_name}")
    for base in family.builtin_bases if family is not None else []:
        add((target.path, target.name_line, target.name_column), "overrides_builtin", "class",
            f"{target.qualified_name} overrides {base}.{target.name}; after the rename callers of .{target.name} "
            f"get {base}.{target.name} instead")
    target_scopes = set(scopes.chain(target.scope_id)) if family is None else set()
    for edit, scope_id in ref_scopes:
        if scope_id is None or family is not None:
            continue
        inner = [s for s in scopes.chain(scope_id) if s not in target_scopes]
        if not inner:
            continue
        for bind in reader.binds_named(inner, new_name):
            add((edit.path, edit.line, edit.column), "shadowed", kind_of(bind.scope_id),
                f"{new_name!r} is already bound where {edit.path}:{edit.line} refers to {target.name}; "
                "the renamed reference would denote that binding instead")
    return [found[k] for k in sorted(found)][:MAX_COLLISIONS]


def _go_package_twins(reader: FactReader, target: Def, new_name: str) -> list[Def]:
    """Definitions the renamed Go definition would clash with: ``pkg.<new>`` (package level) or
    ``pkg.Type.<new>`` (a method or field of the same type) in any file of the package's directory."""
    if target.language != "go" or not target.qualified_name.endswith(target.name):
        return []
    renamed = target.qualified_name[: len(target.qualified_name) - len(target.name)] + new_name
    package_dir = posixpath.dirname(target.path)
    return [d for d in reader.defs_named(new_name, _LIMIT) if d.language == "go" and d.qualified_name == renamed
            and posixpath.dirname(d.path) == package_dir]
