"""Go clashes :mod:`collisions` cannot see in scopes, which gopls refuses:

- a package-level name equal to a name an ``import`` binds in any file of the package: Go forbids one identifier in
  both a file block and the package block (``strings already declared through import of package strings``). An
  external test package (a ``_test.go`` file importing the package itself) is another package, and is skipped;
- a method or field equal to one the type gets from an embedded field (``struct { shape.Square }`` promotes
  ``Square.Area``): the type's own member wins over the promoted one, so ``s.Area()`` silently changes meaning or
  stops compiling (``not enough arguments in call to s.Area``);
- the other way round, a member promoted into a type that embeds its owner, renamed onto a name that type (or
  a shallower embedded field of it) already has: ``o.Val`` of ``struct { *Inner; Extra int }`` would read
  ``Outer.Extra`` after ``Inner.Val`` → ``Extra``, and still compile (gopls: "would change the referent");
- an embedded field itself (``struct { *Inner }``): its name is its type's, so renaming it alone leaves
  ``undefined: Core``; the type is what to rename (it takes the field along, :mod:`goembed`).

An import without alias binds its package's name, read here as its path's last element (with the usual
``/v2`` and ``.v2`` suffixes dropped, :func:`gopackage.default_names`).
"""

from __future__ import annotations

import posixpath

from codeplane.refactor.facts import Def, FactReader
from codeplane.refactor.gopackage import default_names, package_names

_LIMIT = 100_000
_TYPE_KINDS = frozenset({"struct", "interface", "type"})
#: Embedding levels followed (``A`` embeds ``B`` embeds ``C``).
_DEPTH = 4


def import_clashes(reader: FactReader, target: Def, new_name: str) -> list[tuple[str, int, int]]:
    """Where an import in the target's package binds ``new_name`` (path, line, column), for a package-level
    target."""
    if target.language != "go" or "." in target.lexical_path or target.kind == "method":
        return []
    package_dir = posixpath.dirname(target.path)
    found: list[tuple[str, int, int]] = []
    for info in reader.files():
        if not info.path.endswith(".go") or posixpath.dirname(info.path) != package_dir:
            continue
        imports = list(reader.imports_in_file(info.path, _LIMIT))
        if info.path.endswith("_test.go") and package_names(imports, package_dir):
            continue  # ``package p_test`` importing ``p``: its file block is not p's package's
        for fact in imports:
            if fact.kind != "go_import" or fact.alias in ("_", "."):
                continue
            source = fact.source_literal or fact.imported_name
            binds = {fact.alias} if fact.alias else default_names(source)
            if new_name in binds:
                found.append((fact.path, fact.line, fact.column))
    return found


def promoted_clashes(reader: FactReader, target: Def, new_name: str) -> list[Def]:
    """The members named ``new_name`` that the target's type gets from its embedded fields (any depth up to
    :data:`_DEPTH`), for a method or field ``T.M``."""
    if target.language != "go" or target.lexical_path.count(".") != 1:
        return []
    owner_name = target.lexical_path.split(".", 1)[0]
    owner = type_in(reader, owner_name, posixpath.dirname(target.path))
    found: list[Def] = []
    seen: set[str] = set()
    level = [owner] if owner is not None else []
    for _ in range(_DEPTH):
        embedded = [e for t in level if t.def_uid not in seen for e in embedded_types(reader, t)]
        seen.update(t.def_uid for t in level)
        found += [d for e in embedded for d in members_named(reader, e, new_name)]
        level = embedded
        if not level:
            break
    return sorted({d.def_uid: d for d in found}.values(), key=lambda d: (d.path, d.name_line, d.name_column))


def hidden_by_embedders(reader: FactReader, target: Def, new_name: str) -> list[Def]:
    """The members named ``new_name`` that a type embedding the target's owner (any depth up to :data:`_DEPTH`) has
    itself or gets from an embedded field shallower than the owner: there ``x.<new_name>`` would denote that member,
    not the renamed one, for a method or field ``T.M``."""
    if target.language != "go" or target.lexical_path.count(".") != 1:
        return []
    owner = type_in(reader, target.lexical_path.split(".", 1)[0], posixpath.dirname(target.path))
    found: list[Def] = []
    seen = {owner.def_uid} if owner is not None else set()
    level = [owner] if owner is not None else []
    for depth in range(1, _DEPTH + 1):
        level = [e for t in level for e in embedders(reader, t) if e.def_uid not in seen]
        seen.update(e.def_uid for e in level)
        found += [d for e in level for d in _members_within(reader, e, new_name, depth)]
        if not level:
            break
    return sorted({d.def_uid: d for d in found}.values(), key=lambda d: (d.path, d.name_line, d.name_column))


def _members_within(reader: FactReader, owner: Def, name: str, levels: int) -> list[Def]:
    """Members ``name`` of ``owner`` itself and of the types it embeds less than ``levels`` deep (Go's selector
    takes the shallowest)."""
    found: list[Def] = []
    level: list[Def] = [owner]
    seen: set[str] = set()
    for _ in range(levels):
        found += [d for t in level for d in members_named(reader, t, name)]
        seen.update(t.def_uid for t in level)
        level = [e for t in level for e in embedded_types(reader, t) if e.def_uid not in seen]
    return found


def embedders(reader: FactReader, embedded: Def) -> list[Def]:
    """The repository's types with a field embedding the type ``embedded`` (``struct { *Inner }``)."""
    found: dict[str, Def] = {}
    for field in reader.defs_named(embedded.name, _LIMIT):
        if field.language != "go" or field.kind != "field" or field.parent_uid is None:
            continue
        holder = reader.get_def(field.parent_uid)
        if holder is not None and holder.def_uid not in found and embedded_type(reader, field) == (True, embedded):
            found[holder.def_uid] = holder
    return sorted(found.values(), key=lambda d: (d.path, d.name_line))


def embedded_field_clash(reader: FactReader, target: Def) -> str | None:
    """Why the Go field ``target`` cannot be renamed alone when it is an embedded field, else ``None``."""
    if target.language != "go" or target.kind != "field":
        return None
    embedded, typ = embedded_type(reader, target)
    if not embedded:
        return None
    if typ is None:
        return (f"{target.qualified_name} is an embedded field, named by its type: renaming it alone leaves the type's "
                "name, undefined under the new one; give the field a name of its own instead (`Name T`)")
    return (f"{target.qualified_name} is an embedded field, named by its type: renaming it alone leaves "
            f"{typ.name} undefined under the new name; rename the type {typ.qualified_name} instead (its embedded "
            "fields are renamed with it)")


def type_in(reader: FactReader, name: str, package_dir: str) -> Def | None:
    types = [d for d in reader.defs_named(name, _LIMIT) if d.language == "go" and d.kind in _TYPE_KINDS
             and d.lexical_path == name and posixpath.dirname(d.path) == package_dir]
    return types[0] if len(types) == 1 else None


def members_named(reader: FactReader, owner: Def, name: str) -> list[Def]:
    """The Go type ``owner``'s own methods and fields named ``name`` (by lexical path: a method has no parent)."""
    package_dir = posixpath.dirname(owner.path)
    return [d for d in reader.defs_named(name, _LIMIT) if d.language == "go"
            and d.lexical_path == f"{owner.name}.{name}" and posixpath.dirname(d.path) == package_dir]


def embedded_types(reader: FactReader, owner: Def) -> list[Def]:
    """The repository types ``owner``'s embedded fields name."""
    found: list[Def] = []
    for field in reader.defs_in_file(owner.path, _LIMIT):
        if field.parent_uid == owner.def_uid and field.kind == "field":
            embedded, typ = embedded_type(reader, field)
            if embedded and typ is not None:
                found.append(typ)
    return found


def embedded_type(reader: FactReader, field: Def) -> tuple[bool, Def | None]:
    """Whether the Go struct field ``field`` is embedded, and the repository type it embeds (``None``: one from
    outside, ``sync.Mutex``). Embedded: its own name token is its type's (``T``, ``*T``) or the name after the
    qualifier (``pkg.T``), as the index's ``ftype:`` shape on that line spells it."""
    for ref in reader.refs_on_line(field.path, field.name_line):
        written = (ref.receiver_shape or "").removeprefix("ftype:").lstrip("*")
        if not (ref.receiver_shape or "").startswith("ftype:") or written.startswith("[]"):
            continue
        qualifier, _, name = written.rpartition(".")
        if name != field.name or ref.column != field.name_column - (len(qualifier) + 1 if qualifier else 0):
            continue
        here = posixpath.dirname(field.path)
        if not qualifier:
            return True, type_in(reader, name, here)
        imports = list(reader.imports_in_file(field.path, _LIMIT))
        choices = [d for d in reader.defs_named(name, _LIMIT) if d.language == "go"
                   and d.kind in _TYPE_KINDS and d.lexical_path == name
                   and qualifier in package_names(imports, posixpath.dirname(d.path))]
        return True, choices[0] if len(choices) == 1 else None
    return False, None
