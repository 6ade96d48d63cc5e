"""Would the new name clash with a binding that already exists? (issue 9 item 1: report, never apply silently).

The checks, all from index facts:
- the scope that binds the target already binds the new name (a sibling def, class member, import); in Go, the
  package (all the files of its directory) already declares it, or the type already has such a method or field
  (also one promoted from an embedded field), or a type embedding the target's owner has one, or an import in the
  package binds it (:mod:`gocollisions`);
- Go renames that break what no name spells: an embedded field (named by its type) and a method a standard-library
  interface requires (:mod:`gostdlib`); reported as collisions so nothing is applied without ``accept_collisions``;
- a class of the target's family (or an ancestor of one) already has a member with the new name: renamed onto a
  name only a base class has, the method would silently override it (``GiftCart.wipe`` -> ``clear`` where ``Cart``
  has ``clear()``: its body's ``clear()`` now calls itself);
- a Rust method and another associated item of its type, in any ``impl`` block (:mod:`rustcollisions`);
- a top-level or local binding hiding a predeclared name a use still means (Go's ``len``, Python's builtins,
  TypeScript's ``Math``, Rust's ``Option``, Java's ``String``: :mod:`predeclared`);
- at a renamed reference, a scope between the reference and the target's binding binds the new name, so
  the renamed reference would be captured by it (shadowing).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from codeplane.refactor.facts import Bind, Def, FactReader, Scope
from codeplane.refactor.gocollisions import embedded_field_clash, hidden_by_embedders, import_clashes, promoted_clashes
from codeplane.refactor.gostdlib import std_interface
from codeplane.refactor.members import ClassGraph, MemberFamily, apart_by_kind
from codeplane.refactor.models import Collision
from codeplane.refactor.predeclared import predeclared_clashes
from codeplane.refactor.rustcollisions import same_type_clashes
from codeplane.refactor.spans import SpanEdit

_LIMIT = 10_000
_CALLABLE = frozenset({"method", "function", "constructor"})
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
    ref_scopes = list(ref_scopes)
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
    # A Go interface method's implementations are renamed with it (goimpls): each must not clash either.
    for renamed in [target, *(family.overrides if family is not None and target.language == "go" else [])]:
        for d in _go_package_twins(reader, renamed, new_name):
            add((d.path, d.name_line, d.name_column), "same_scope", "package",
                f"{d.qualified_name} already exists in the package of {renamed.qualified_name} ({d.path}): Go "
                "declares a package's names, and a type's methods and fields, once across all its files")
        for at in import_clashes(reader, renamed, new_name):
            add(at, "same_scope", "file", f"an import binds {new_name!r} in {at[0]}, a file of the package of "
                f"{renamed.qualified_name}: Go declares no name in both a file and its package")
        for d in promoted_clashes(reader, renamed, new_name):
            add((d.path, d.name_line, d.name_column), "member", "type",
                f"{d.qualified_name} is promoted into the type of {renamed.qualified_name} by an embedded field; "
                "the renamed member would hide it")
        for d in hidden_by_embedders(reader, renamed, new_name):
            add((d.path, d.name_line, d.name_column), "member", "type",
                f"{d.qualified_name} exists in a type that embeds the owner of {renamed.qualified_name}: there "
                f"x.{new_name} would denote it instead of the renamed member")
        if (interface := std_interface(reader, renamed)) is not None:
            add((renamed.path, renamed.name_line, renamed.name_column), "interface", "type",
                f"{renamed.qualified_name} is the method {renamed.name} of {interface}: a value used as one (a "
                "conversion here, or fmt/encoding at run time) stops being one after the rename; pass "
                f"accept_collisions=true if the type is never used as {interface}")
    for renamed in [target, *(family.overrides if family is not None else [])]:
        for d in same_type_clashes(reader, renamed, new_name):
            add((d.path, d.name_line, d.name_column), "member", "type",
                f"{d.qualified_name} is already an associated item of the type of {renamed.qualified_name}: two "
                "of one name are E0592, or ambiguous (E0034), or the inherent one silently wins at every call")
    for at, detail in predeclared_clashes(reader, target, new_name, family is not None,
                                          sorted({e.path for e, _ in ref_scopes})):
        add(at, "shadowed", "predeclared", detail)
    embedded = embedded_field_clash(reader, target)
    if embedded is not None:
        add((target.path, target.name_line, target.name_column), "embedded_field", "type", embedded)
    if family is not None:
        owners = set(family.classes) | {d.parent_uid for d in family.overridden if d.parent_uid}
        if target.language != "go":  # Go's embedded types are promoted_clashes' (hidden, never overridden)
            # Every ancestor, not only those with the old name: one that has the new name would be overridden.
            graph = ClassGraph(reader)
            owners |= {a.def_uid for c in family.classes.values() for a in graph.ancestors(c)}
        for d in reader.defs_named(new_name, _LIMIT):
            if d.parent_uid in owners and not apart_by_kind(d, target):
                add((d.path, d.name_line, d.name_column), "member", "class",
                    f"{d.qualified_name} already exists in the class hierarchy of {target.qualified_name}")
    for base in family.builtin_bases if family is not None else []:
        add((target.path, target.name_line, target.name_column), "overrides_builtin", "class",
            f"{target.qualified_name} overrides {base}.{target.name}; after the rename callers of .{target.name} "
            f"get {base}.{target.name} instead")
    target_scopes = set(scopes.chain(target.scope_id))
    for edit, scope_id in ref_scopes:
        inner = [s for s in scopes.chain(scope_id) if s not in target_scopes] if scope_id is not None else []
        binds = [b for b in reader.binds_named(inner, new_name) if family is None
                 or _hides_member(reader, target, b)] if inner else []
        if not binds or not _capturable(reader, edit, member=family is not None):
            continue
        for bind in binds:
            add((edit.path, edit.line, edit.column), "shadowed", kind_of(bind.scope_id),
                f"{new_name!r} is already bound where {edit.path}:{edit.line} refers to {target.name}; "
                "the renamed reference would denote that binding instead")
    return [found[k] for k in sorted(found)][:MAX_COLLISIONS]


def _capturable(reader: FactReader, edit: SpanEdit, *, member: bool) -> bool:
    """Whether a binding of the new name around ``edit`` would capture it: not when it renames the member of a
    receiver (``lib.LIMIT``, ``x.side``: looked up in ``lib``, never in the scopes around). A member is captured
    only where it is spelled bare (Java's ``return side * f;``, an implicit ``this``)."""
    here = [r for r in reader.refs_on_line(edit.path, edit.line) if r.column == edit.column]
    if member:
        return any(r.role == "REFERENCE" and not r.is_member for r in here)
    return not any(r.is_member for r in here)


def _hides_member(reader: FactReader, target: Def, bind: Bind) -> bool:
    """A binding that captures a bare use of the member ``target``: any, but for a Java method, whose bare calls
    look up methods only (``int f; f(2)`` still calls the method ``f``; C#, C++ and Kotlin find the local)."""
    if target.kind not in _CALLABLE or not target.path.endswith(".java"):
        return True
    there = reader.get_def(bind.target_uid) if bind.target_uid else None
    return there is not None and there.kind in _CALLABLE


def _go_package_twins(reader: FactReader, target: Def, new_name: str) -> list[Def]:
    """Definitions the renamed Go definition would clash with: ``pkg.<new>`` (package level) or
    ``pkg.Type.<new>`` (a method or field of the same type) in any file of the package's directory."""
    if target.language != "go" or not target.qualified_name.endswith(target.name):
        return []
    renamed = target.qualified_name[: len(target.qualified_name) - len(target.name)] + new_name
    package_dir = posixpath.dirname(target.path)
    return [d for d in reader.defs_named(new_name, _LIMIT) if d.language == "go" and d.qualified_name == renamed
            and posixpath.dirname(d.path) == package_dir]
