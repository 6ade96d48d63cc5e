"""The declared types ``rustlink`` follows members through (``x.f`` / ``x.m()`` where the syntax spells ``x``'s type).

- ``self.m`` inside a method of ``impl T`` / ``impl Trait for T`` (the method's lexical path is ``T.m``);
- ``v.m`` where ``v`` is a name whose declaration spells its type (the Rust adapter's ``type:T`` / ``type:a::T``
  on a parameter ``v: T`` / ``&T`` / ``&mut T`` / ``Self``, ``let v: T``, ``let v = T { .. }``); the type is
  resolved as a path from the file's module.
``T.m`` is then the one method or field the crate declares for ``T``, when the crate declares the type name
``T`` once: the file's own crate, or a repository library it names (``use mylib::T``; every Rust file is
relinked when a library changes). Struct literal and pattern keys (``T { f: .. }``) and ``self.f`` / ``v.f``
inside a macro's tokens are followed the same way, and ``x.f.m`` through the type field ``f`` is declared with
(:class:`FieldTypes`; resolved from the module declaring the field). Where ``T`` has a field and a method of
the name (``len`` and ``len()``), the syntax picks: ``x.len`` (shape ``obj.$``) is the field, ``x.len()`` the method.
Deref, trait default methods and a call's result stay ANCHORED.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from codeplane.index.structural.store import marks

#: Def kinds a value's member (``x.name``) may denote.
VALUE_KINDS = frozenset({"method", "function", "field"})
#: Plain tokens in a macro's token tree that read like ``self.f`` / ``v.f`` (the Rust adapter's shapes).
MACRO_SHAPES = {"mself.": "self.", "mobj.": "obj."}


@dataclass
class FileTypes:
    """What one file's syntax spells about its receivers."""

    #: (line, end column) of a plain reference → its binding id (the receiver ending right before a ``.``).
    receivers: dict[tuple[int, int], int] = field(default_factory=dict)
    #: binding id → the type its declaration spells.
    spelled: dict[int, str] = field(default_factory=dict)
    #: methods as (start, end, type name of the ``impl``), for the ``self`` of a position.
    methods: list[tuple[tuple[int, int], tuple[int, int], str]] = field(default_factory=list)

    def self_type(self, line: int, col: int) -> str | None:
        """The ``impl`` type of the innermost method around (line, col)."""
        best: tuple[tuple[int, int], str] | None = None
        for start, end, name in self.methods:
            if start <= (line, col) < end and (best is None or start > best[0]):
                best = (start, name)
        return best[1] if best is not None else None


def load(conn: sqlite3.Connection, part: Sequence[int]) -> dict[int, FileTypes]:
    """Receiver facts of the files ``part``."""
    q = marks(len(part))
    files: dict[int, FileTypes] = defaultdict(FileTypes)
    for file_id, line, end_col, bind in conn.execute(
            f"SELECT file_id, start_line, end_col, bind_id FROM st_ref WHERE file_id IN ({q}) "
            "AND role = 'REFERENCE' AND is_member = 0 AND bind_id IS NOT NULL", list(part)):
        files[file_id].receivers[(line, end_col)] = bind
    spelled: dict[tuple[int, int], set[str]] = defaultdict(set)
    for file_id, bind, shape in conn.execute(
            f"SELECT file_id, bind_id, receiver_shape FROM st_ref WHERE file_id IN ({q}) "
            "AND role = 'DEFINITION' AND bind_id IS NOT NULL AND receiver_shape LIKE 'type:%'", list(part)):
        spelled[(file_id, bind)].add(shape[5:])
    for (file_id, bind), written in spelled.items():
        if len(written) == 1:
            files[file_id].spelled[bind] = next(iter(written))
    for file_id, lexical, line, col, end_line, end_col in conn.execute(
            "SELECT file_id, lexical_path, start_line, start_col, end_line, end_col FROM st_def "
            f"WHERE file_id IN ({q}) AND kind = 'method'", list(part)):
        path = lexical.split(".")
        if len(path) >= 2:
            files[file_id].methods.append(((line, col), (end_line, end_col), path[-2]))
    return files


#: A crate's type names and value members: ``(types, values)`` of ``rustlink``'s crate.
CrateMembers = tuple[Mapping[str, list[str]], Mapping[tuple[str, str], list[str]]]


#: A type as the members of ``value.member`` are looked up: its crate's value members and its name.
TypeMembers = tuple[Mapping[tuple[str, str], list[str]], str]
#: What a file's module sees: a path resolver from it and the crates it can name (its own first).
ModuleView = tuple[Callable[[list[str]], str | None], Sequence[CrateMembers]]


def _home(crates: Sequence[CrateMembers], resolved: str | None, name: str) -> CrateMembers | None:
    """The crate that declares the type ``resolved`` under ``name``, once."""
    return next((c for c in crates if c[0].get(name, []) == [resolved]), None) if resolved else None


class FieldTypes:
    """The declared type of a struct field (``ftype:`` on its line), resolved from the module that declares it;
    for ``x.f.m``. ``view_of(file_id)`` is that file's :data:`ModuleView` (None: not in a loaded crate)."""

    def __init__(self, conn: sqlite3.Connection, view_of: Callable[[int], ModuleView | None]) -> None:
        self._conn = conn
        self._view_of = view_of
        self._found: dict[str, TypeMembers | None] = {}

    def of(self, field_uid: str) -> TypeMembers | None:
        if field_uid not in self._found:
            self._found[field_uid] = self._resolve(field_uid)
        return self._found[field_uid]

    def _resolve(self, field_uid: str) -> TypeMembers | None:
        row = self._conn.execute("SELECT file_id, name_line, kind FROM st_def WHERE def_uid = ?",
                                 (field_uid,)).fetchone()
        if row is None or row[2] != "field":
            return None
        shapes = {s for (s,) in self._conn.execute(
            "SELECT receiver_shape FROM st_ref WHERE file_id = ? AND start_line = ? AND receiver_shape LIKE 'ftype:%'",
            (row[0], row[1]))}
        view = self._view_of(row[0])
        if len(shapes) != 1 or view is None:
            return None
        segments = next(iter(shapes))[6:].split("::")
        resolve, crates = view
        home = _home(crates, resolve(segments), segments[-1])
        return (home[1], segments[-1]) if home is not None else None


def _of_kind(found: Sequence[str], shape: str | None, fields: Collection[str]) -> list[str]:
    """The candidates the use's syntax allows: a field for ``x.f`` (shape ending ``$``) or a literal's key, a
    method for ``x.f()`` (``self.``, ``obj.``, ``expr.``); either inside a macro's tokens (not parsed)."""
    if shape is not None and (shape.endswith("$") or shape.startswith("struct:")):
        return [u for u in found if u in fields]
    if shape in ("self.", "obj.", "expr."):
        return [u for u in found if u not in fields]
    return list(found)


def member_target(crates: Sequence[CrateMembers], resolve: Callable[[list[str]], str | None] | None, *,
                  facts: FileTypes | None, shape: str | None, token: str, line: int, col: int,
                  typed_at: Mapping[tuple[int, int], TypeMembers] | None = None,
                  fields: Collection[str]) -> str | None:
    """The def ``self.token`` / ``v.token`` / ``T { token: .. }`` at (line, col) denotes, through the type the
    syntax spells: of a type's field and method of one name (``len`` and ``len()``), the one the syntax names.

    ``crates`` are the file's own crate first, then the repository libraries it can name (every file is relinked
    when a library changes); ``resolve`` resolves a path from the reference's module (None inside an inline ``mod``
    the linker could not place, where only ``self`` is followed); ``fields``: the uids of their struct fields."""
    written_shape = shape
    shape = shape[:-1] if shape is not None and shape.endswith("$") else shape
    if shape == "expr." and typed_at is not None:  # ``x.f.token``: the type field ``f`` is declared with
        chained = typed_at.get((line, col - 1))
        found_chained = _of_kind(chained[0].get((chained[1], token), []) if chained is not None else [],
                                 written_shape, fields)
        return found_chained[0] if len(found_chained) == 1 else None
    if facts is None or not crates:
        return None
    shape = MACRO_SHAPES.get(shape or "", shape)
    if shape is not None and shape.startswith("struct:") and resolve is not None:
        written: str | None = shape[7:]  # ``T { f: .. }``: the key is a field of the struct named
    elif shape == "obj." and resolve is not None:
        bind = facts.receivers.get((line, col - 1))  # ``v.token`` on one line
        written = facts.spelled.get(bind) if bind is not None else None
    else:
        written = None
    if shape == "self.":
        types, values = crates[0]
        name = facts.self_type(line, col)
        declared = types.get(name, []) if name is not None else []
        if name is None or len(declared) != 1:
            return None
        resolved = resolve([name]) if resolve is not None else None
        if resolved is not None and resolved != declared[0]:
            return None  # ``impl LocalTrait for Foreign`` where the crate also declares that name
    elif written and resolve is not None:
        segments = written.split("::")
        name = segments[-1]
        home = _home(crates, resolve(segments), name)
        if home is None:
            return None  # not a type of these crates, or a name its crate declares twice
        values = home[1]
    else:
        return None
    found = _of_kind(values.get((name, token), []), written_shape, fields)
    return found[0] if len(found) == 1 else None
