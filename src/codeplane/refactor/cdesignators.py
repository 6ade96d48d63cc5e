"""The struct a C/C++ designated initializer's field belongs to (QA18 #8).

``.x`` in ``struct point q = {.x = 1}`` names a field of ``point``: left unresolved, a rename of ``point.x``
listed it ``low`` and the default apply left gcc a ``.x`` that ``struct point`` no longer has. The adapter gives
the designator the type as written and the fields down to it (``init:line.a`` for ``{.a = {.x = 1}}``,
``adapters/c_family.py``); here that type is the one struct or union the repository's C/C++ files declare under
that name (a typedef of a struct standing for the struct, as for declared receivers), and each field is followed
through its declared type.
"""

from __future__ import annotations

from collections.abc import Callable

from codeplane.refactor.facts import Def, FactReader, Ref

_LIMIT = 50
_STRUCTS = frozenset({"struct", "class", "union"})
_C_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tcc")


def initialized_struct(reader: FactReader, ref: Ref, typedef_struct: Callable[[Def], Def | None],
                       declared: Callable[[Ref], Def | None]) -> Def | None:
    """The struct whose field the designator ``ref`` (shape ``init:T.f...``) names, or None when unsure.

    ``typedef_struct`` unwraps a typedef to its struct; ``declared`` gives the class a field's definition site
    declares (its ``type:`` shape)."""
    shape = ref.receiver_shape or ""
    if not shape.startswith("init:"):
        return None
    written, *fields = shape[5:].split(".")
    found: dict[str, Def] = {}
    for d in reader.defs_named(written, _LIMIT):
        if not d.path.endswith(_C_SUFFIXES):
            continue
        struct = typedef_struct(d) if d.kind == "type" else d if d.kind in _STRUCTS else None
        if struct is not None:
            found[struct.def_uid] = struct
    cls = next(iter(found.values())) if len(found) == 1 else None
    for name in fields:
        field = next((d for d in reader.defs_named(name, _LIMIT) if cls is not None and d.parent_uid == cls.def_uid
                      and d.kind == "field"), None) if cls is not None else None
        site = next((r for r in reader.refs_on_line(field.path, field.name_line) if r.role == "DEFINITION"
                     and r.column == field.name_column), None) if field is not None else None
        cls = declared(site) if site is not None else None
    return cls
