"""What the class-based linkers read from the index: a file's reference rows (``Ref``), the language's types
with their members and written supertypes (``classhierarchy.TypeInfo``), class-body scopes, a file's scopes and
same-file bindings, and the declared types of variables, fields and parameters."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Callable
from typing import NamedTuple

from codeplane.index.structural.classhierarchy import UNSETTLED, TypeInfo, parameter_key
from codeplane.index.structural.facts import CERTAIN
from codeplane.index.structural.store import chunked, marks


class Ref(NamedTuple):
    ref_id: int
    scope: int | None
    token: str
    role: str
    line: int
    col: int
    end_col: int
    member: int
    shape: str | None
    via: str | None
    local_tier: str
    local_target: str | None
    tier: str
    target: str | None
    certainty: str
    bind: int | None


_REF_COLUMNS = ("ref_id, scope_id, token_text, role, start_line, start_col, end_col, is_member, receiver_shape, "
                "via_import_uid, local_tier, local_target_uid, ref_tier, target_uid, certainty, bind_id")


def file_refs(conn: sqlite3.Connection, file_ids: list[int]) -> dict[int, list[Ref]]:
    """Every reference row of the files, in source order (definitions included: they carry declared types)."""
    out: dict[int, list[Ref]] = defaultdict(list)
    for part in chunked(file_ids):
        for file_id, *row in conn.execute(
                f"SELECT file_id, {_REF_COLUMNS} FROM st_ref WHERE file_id IN ({marks(len(part))}) "
                "ORDER BY file_id, start_line, start_col", part):
            out[file_id].append(Ref(*row))
    return out


def type_defs(conn: sqlite3.Connection, language: str, type_kinds: frozenset[str],
              full_name: Callable[[int, str, str, str | None], str]) -> tuple[dict[str, TypeInfo], dict[int, list[tuple[
                  str, str, str | None, tuple[int, int, int, int]]]]]:
    """The language's types (with their members) and, per file, every def as (uid, kind, parent, span) in
    source order. ``full_name(file_id, lexical_path, name, parent_uid)`` spells a type's full name."""
    types: dict[str, TypeInfo] = {}
    members: list[tuple[str, str, str, str, str]] = []
    spans: dict[int, list[tuple[str, str, str | None, tuple[int, int, int, int]]]] = defaultdict(list)
    for (file_id, uid, kind, name, lexical, line, col, end_line, end_col, parent, scope,
         display) in conn.execute(
            "SELECT d.file_id, d.def_uid, d.kind, d.name, d.lexical_path, d.start_line, d.start_col, d.end_line, "
            "d.end_col, d.parent_uid, d.scope_id, d.display_name FROM st_def d JOIN st_file f "
            "ON f.file_id = d.file_id WHERE f.language = ? ORDER BY d.file_id, d.start_line, d.start_col", (language,)):
        span = (line, col, end_line, end_col)
        spans[file_id].append((uid, kind, parent, span))
        if kind in type_kinds:
            types[uid] = TypeInfo(uid, name, kind, file_id, full_name(file_id, lexical, name, parent), parent, span,
                                  scope)
        if parent is not None:
            members.append((parent, name, uid, kind, display))
    for parent, name, uid, kind, display in members:
        owner = types.get(parent)
        if owner is not None:
            key = parameter_key(display, name) if kind in ("method", "function", "constructor") else None
            owner.members[name].append((uid, kind, key))
    return types, spans


def innermost_def(spans: list[tuple[str, str, str | None, tuple[int, int, int, int]]],
                  line: int, col: int) -> tuple[str, str] | None:
    """(uid, kind) of the innermost definition of a file whose extent holds the position."""
    best: tuple[str, str] | None = None
    for uid, kind, _, (start_line, start_col, end_line, end_col) in spans:
        if (start_line, start_col) > (line, col):
            break
        if (line, col) < (end_line, end_col):
            best = (uid, kind)
    return best


def attach_supers(conn: sqlite3.Connection, language: str, types: dict[str, TypeInfo],
                  spans: dict[int, list[tuple[str, str, str | None, tuple[int, int, int, int]]]]) -> None:
    """Header references of shape ``super:<written>`` become the written supertypes of the innermost type whose
    extent holds them (an anonymous class's header sits inside a method, so it is nobody's)."""
    for file_id, scope, line, col, shape in conn.execute(
            "SELECT r.file_id, r.scope_id, r.start_line, r.start_col, r.receiver_shape FROM st_ref r JOIN st_file f "
            "ON f.file_id = r.file_id WHERE f.language = ? AND r.receiver_shape LIKE 'super:%' "
            "ORDER BY r.file_id, r.start_line, r.start_col", (language,)):
        holder = innermost_def(spans.get(file_id, []), line, col)
        if holder is not None and holder[0] in types:
            types[holder[0]].written.append((shape[6:], file_id, scope))


def body_types(conn: sqlite3.Connection, file_id: int, types: dict[str, TypeInfo],
               spans: list[tuple[str, str, str | None, tuple[int, int, int, int]]]) -> dict[int, str | None]:
    """Class-body scope → the type it belongs to (None: an anonymous class body)."""
    out: dict[int, str | None] = {}
    for scope_id, line, col in conn.execute(
            "SELECT scope_id, start_line, start_col FROM st_scope WHERE file_id = ? AND kind = 'class'", (file_id,)):
        holder = innermost_def(spans, line, col)
        out[scope_id] = holder[0] if holder is not None and holder[0] in types else None
    return out


class Bind(NamedTuple):
    """A same-file binding of a name in a scope (``st_bind``)."""

    kind: str
    uid: str | None
    single: bool
    reason: str


class FileFacts:
    """Scopes and bindings of files, read on demand (declared types are resolved where they are written)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._scopes: dict[int, dict[int, tuple[int | None, str]]] = {}
        self._binds: dict[int, dict[tuple[int, str], Bind]] = {}

    def scopes(self, file_id: int) -> dict[int, tuple[int | None, str]]:
        found = self._scopes.get(file_id)
        if found is None:
            found = {s: (p, k) for s, p, k in self._conn.execute(
                "SELECT scope_id, parent_scope_id, kind FROM st_scope WHERE file_id = ?", (file_id,))}
            self._scopes[file_id] = found
        return found

    def binds(self, file_id: int) -> dict[tuple[int, str], Bind]:
        found = self._binds.get(file_id)
        if found is None:
            found = {(s, n): Bind(k, u, c == CERTAIN, r) for s, n, k, u, c, r in self._conn.execute(
                "SELECT scope_id, name, target_kind, target_uid, certainty, reason_code FROM st_bind WHERE file_id = ?",
                (file_id,))}
            self._binds[file_id] = found
        return found

    def chain(self, file_id: int, scope: int | None) -> list[tuple[int, str]]:
        """(scope, kind) from ``scope`` outwards to the file scope."""
        scopes = self.scopes(file_id)
        out: list[tuple[int, str]] = []
        while scope is not None and scope in scopes and len(out) < 256:
            parent, kind = scopes[scope]
            out.append((scope, kind))
            scope = parent
        return out


class DeclaredTypes:
    """The declared class of a variable, field or parameter, from the ``type:<written>`` shape its definition
    carries, resolved where it is written by ``resolve(written, file, scope)``. The definition sites of the
    language's defs are read in one pass: ``st_ref.target_uid`` has no index while a cold build links."""

    def __init__(self, conn: sqlite3.Connection, resolve: Callable[[str, int, int | None], str | None],
                 language: str) -> None:
        self._resolve = resolve
        self._of_def: dict[str, str | None] = {}
        self._sites: dict[str, list[tuple[int, int | None, str | None]]] = defaultdict(list)
        for uid, file_id, scope, shape in conn.execute(
                "SELECT r.target_uid, r.file_id, r.scope_id, r.receiver_shape FROM st_ref r JOIN st_file f "
                "ON f.file_id = r.file_id WHERE f.language = ? AND r.role = 'DEFINITION' "
                "AND r.target_uid IS NOT NULL", (language,)):
            self._sites[uid].append((file_id, scope, shape))

    def of_def(self, uid: str) -> str | None:
        """Declared type uid of a field/property definition (every definition site agreeing), else None."""
        if uid not in self._of_def:
            self._of_def[uid] = self._agree(self._sites.get(uid, []))
        return self._of_def[uid]

    def of_sites(self, file_id: int, sites: list[Ref]) -> str | None:
        return self._agree([(file_id, r.scope, r.shape) for r in sites])

    def _agree(self, sites: list[tuple[int, int | None, str | None]]) -> str | None:
        if not sites or any(not (shape or "").startswith("type:") for _, _, shape in sites):
            return None
        found = {self._resolve(str(shape)[5:], file_id, scope) for file_id, scope, shape in sites}
        if len(found) != 1:
            return None
        uid = found.pop()
        return uid if uid != UNSETTLED else None
