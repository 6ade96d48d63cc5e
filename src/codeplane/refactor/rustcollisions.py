"""Rust methods that clash with another associated item of the same type (QA45 F3), which scopes cannot show.

The index keeps an ``impl`` block as a scope, not a definition: a method has no owning definition, only the
lexical path ``Type.method`` its block gives it. So two blocks of one type (``impl Sq`` and ``impl Area for Sq``)
are two scopes, and a name one binds is not bound in the other. Yet Rust reads them together:

- two inherent items of one name are E0592 (duplicate definitions), an inherent and a trait method of one name
  compile, but ``sq.area()`` then calls the inherent one (inherent methods come first), and two trait methods of
  one name make every ``sq.area()`` ambiguous (E0034);
- a trait's provided (default) method is the type's too once the type implements the trait.

So a method ``T.m`` renamed to ``n`` clashes with any ``T.n`` of an ``impl`` block of the crate, and with a
method ``n`` of a repository trait an ``impl Trait for T`` header names.
"""

from __future__ import annotations

import posixpath

from codeplane.refactor.facts import Def, FactReader

_LIMIT = 10_000
_TYPE_KINDS = frozenset({"struct", "enum", "union", "type"})


def same_type_clashes(reader: FactReader, method: Def, new_name: str) -> list[Def]:
    """The associated items named ``new_name`` of the type whose ``impl`` block defines ``method``, sorted."""
    if not method.path.endswith(".rs") or method.parent_uid is not None or method.lexical_path.count(".") != 1:
        return []
    scope = reader.scope(method.scope_id) if method.scope_id is not None else None
    if scope is None or scope.kind != "impl":
        return []
    type_name = method.lexical_path.split(".", 1)[0]
    crate = _crate(method.path)
    found = {d.def_uid: d for d in reader.defs_named(new_name, _LIMIT)
             if d.path.endswith(".rs") and d.lexical_path == f"{type_name}.{new_name}" and _crate(d.path) == crate
             and d.scope_id is not None and (s := reader.scope(d.scope_id)) is not None and s.kind == "impl"}
    for trait in _traits_of(reader, type_name, crate):
        found.update({d.def_uid: d for d in reader.defs_named(new_name, _LIMIT) if d.parent_uid == trait.def_uid})
    return sorted(found.values(), key=lambda d: (d.path, d.name_line, d.name_column))


def _traits_of(reader: FactReader, type_name: str, crate: str) -> list[Def]:
    """The repository traits ``impl Trait for type_name`` headers of the crate name (the trait before the type
    on the header's line)."""
    traits: dict[str, Def] = {}
    for typ in reader.defs_named(type_name, _LIMIT):
        if not typ.path.endswith(".rs") or typ.kind not in _TYPE_KINDS or _crate(typ.path) != crate:
            continue
        for ref in reader.refs_to(typ.def_uid, _LIMIT):
            scope = reader.scope(ref.scope_id) if ref.scope_id is not None else None
            if scope is None or scope.kind != "impl" or ref.line != scope.line:
                continue
            for other in reader.refs_on_line(ref.path, ref.line):
                trait = reader.get_def(other.target_uid) if other.target_uid and other.column < ref.column else None
                if trait is not None and trait.kind == "trait":
                    traits[trait.def_uid] = trait
    return list(traits.values())


def _crate(path: str) -> str:
    """The package directory of a Rust file: what precedes its ``src/`` (``tests/``, ``examples/`` …, else its
    directory)."""
    slashed = "/" + path
    for marker in ("/src/", "/tests/", "/examples/", "/benches/"):
        at = slashed.find(marker)
        if at >= 0:
            return slashed[:at]
    return posixpath.dirname(slashed)
