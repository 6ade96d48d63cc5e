"""Rewriting the facts of a file already indexed, keeping the rows that did not change.

An edit changes a few of a file's facts, yet a file's references are hundreds of rows in a table with four
indexes, and deleting and re-inserting all of them is what a checkout cost: 1,000 edited files of the
133k-file corpus are ~480k reference rows, each removed from and added to five b-trees, most of them the same
row again. Here a rewritten file's new scopes, binds and references are matched with its stored ones:

- scopes by their place in extraction order: the i-th keeps the i-th stored id, and a scope whose span moved
  (the file scope, whenever a line is added) is updated in place; extra stored scopes are deleted;
- binds by (scope, name), updated in place where their target changed;
- references by every field extraction sets, with scope and bind ids mapped, in SQL (``rewrite_refs``): one
  that did not change keeps its row, its id and what linking stored on it. Linking then decides every
  reference of a changed file from its same-file fields (``local_tier``, ``local_target_uid``) exactly as for
  a new row, and writes only what differs, so a kept row ends as a new one would.

Definitions are matched by ``def_uid`` (``_write_defs``): one that came out the same keeps its row. The small
tables are replaced whole, as for any file. New rows take ids from the same
counters as new files' (:class:`IdCounters`); ids of a file are therefore not contiguous after an edit, and
nothing may assume they are (queries order by position, with the id last).
"""

from __future__ import annotations

import sqlite3
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codeplane.index.structural import rewrite_refs

_CHUNK = 500

_OLD_SCOPES = ("SELECT file_id, scope_id, parent_scope_id, kind, start_line, start_col, end_line, end_col "
               "FROM st_scope WHERE file_id IN ({})")
_OLD_BINDS = ("SELECT file_id, bind_id, scope_id, name, target_kind, target_uid, certainty, reason_code "
              "FROM st_bind WHERE file_id IN ({})")
_NEW = {
    "scope_rows": "file, parent, kind, sl, sc, el, ec",
    "bind_rows": "file, scope, name, target_kind, target_uid, certainty, reason",
}
#: The maps ``rewrite_refs`` reads: the batch's rewritten files, and their scope and bind ids by local index.
_MAPS = (
    "CREATE TEMP TABLE IF NOT EXISTS rw_file (file INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, "
    "pair INTEGER NOT NULL, shift INTEGER NOT NULL)",
    "CREATE TEMP TABLE IF NOT EXISTS rw_scope (file INTEGER, local INTEGER, id INTEGER NOT NULL, "
    "PRIMARY KEY (file, local)) WITHOUT ROWID",
    "CREATE TEMP TABLE IF NOT EXISTS rw_bind (file INTEGER, local INTEGER, id INTEGER NOT NULL, "
    "PRIMARY KEY (file, local)) WITHOUT ROWID",
)


@dataclass
class IdCounters:
    """The next free scope, bind and ref ids of the batch being written (max + 1 when it began)."""

    scope: int
    bind: int
    ref: int

    @classmethod
    def of(cls, conn: sqlite3.Connection) -> IdCounters:
        def next_id(table: str, column: str) -> int:
            row = conn.execute(f"SELECT max({column}) FROM {table}").fetchone()
            return int(row[0] or 0) + 1
        return cls(next_id("st_scope", "scope_id"), next_id("st_bind", "bind_id"), next_id("st_ref", "ref_id"))


@dataclass
class RewriteReport:
    """Reference rows of rewritten files kept (as they were, or only moved), and those written (inserted, deleted,
    or moved: their lines updated)."""

    refs_kept: int = 0
    refs_written: int = 0


def _marks(count: int) -> str:
    return ",".join("?" * count)


def _by_file(conn: sqlite3.Connection, query: str, file_ids: Sequence[int]) -> dict[int, list[tuple[Any, ...]]]:
    """Stored rows per file, in id order. (Sorted here: ``ORDER BY`` the id could make SQLite walk the whole
    table in id order rather than the file index.)"""
    out: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    for start in range(0, len(file_ids), _CHUNK):
        part = list(file_ids[start:start + _CHUNK])
        for row in conn.execute(query.format(_marks(len(part))), part):
            out[row[0]].append(row[1:])
    for rows in out.values():
        rows.sort(key=lambda row: row[0])
    return out


def _staged(conn: sqlite3.Connection, source: str, table: str,
            files: Iterable[int]) -> dict[int, list[tuple[Any, ...]]]:
    wanted = sorted(files)
    out: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    for start in range(0, len(wanted), _CHUNK):
        part = wanted[start:start + _CHUNK]
        for row in conn.execute(f"SELECT {_NEW[table]} FROM {source}.{table} WHERE file IN ({_marks(len(part))}) "
                                "ORDER BY rowid", part):
            out[row[0]].append(row[1:])
    return out


def rewrite(conn: sqlite3.Connection, source: str, paths: Sequence[str], *, files: Mapping[str, int],
            counters: IdCounters, report: RewriteReport) -> dict[str, list[int]]:
    """Write the staged scopes, binds, defs and refs of the rewritten files among ``paths`` (a staged batch's
    files, readable in schema ``source``; ``files``: path -> file id of every rewritten file), keeping the
    stored rows that match. Returns each file's scope ids, by
    the scope's index in extraction order (imports are written by the caller with them)."""
    local = {n: files[p] for n, p in enumerate(paths) if p in files}
    if not local:
        return {}
    file_ids = sorted(local.values())
    old_scopes = _by_file(conn, _OLD_SCOPES, file_ids)
    old_binds = _by_file(conn, _OLD_BINDS, file_ids)
    new_scopes = _staged(conn, source, "scope_rows", local)
    new_binds = _staged(conn, source, "bind_rows", local)
    writer = _Writer(counters)
    scope_ids: dict[str, list[int]] = {}
    scope_map: list[tuple[int, int, int]] = []
    bind_map: list[tuple[int, int, int]] = []
    rewritten: list[tuple[int, int, bool, int]] = []
    for n, file_id in sorted(local.items()):
        scopes, pair, shift = writer.scopes(file_id, old_scopes.get(file_id, []), new_scopes.get(n, []))
        rewritten.append((n, file_id, pair, shift))
        binds = writer.binds(file_id, scopes, old_binds.get(file_id, []), new_binds.get(n, []))
        scope_map.extend((n, i, scope_id) for i, scope_id in enumerate(scopes))
        bind_map.extend((n, i, bind_id) for i, bind_id in enumerate(binds))
        scope_ids[paths[n]] = scopes
    writer.flush(conn)
    for statement in _MAPS:
        conn.execute(statement)
    for table in ("rw_file", "rw_scope", "rw_bind"):
        conn.execute(f"DELETE FROM temp.{table}")
    conn.executemany("INSERT INTO temp.rw_file VALUES (?, ?, ?, ?)", rewritten)
    conn.executemany("INSERT INTO temp.rw_scope VALUES (?, ?, ?)", scope_map)
    conn.executemany("INSERT INTO temp.rw_bind VALUES (?, ?, ?)", bind_map)
    _write_defs(conn, source)
    counts = rewrite_refs.pair_and_write(conn, source, counters.ref)
    counters.ref += counts.inserted
    report.refs_kept += counts.same + counts.moved
    report.refs_written += counts.inserted + counts.deleted + counts.moved
    return scope_ids


#: A rewritten file's definitions as extraction gave them, with database scope ids (``ord``: the staged order).
_DEF_COLUMNS = ("file_id", "kind", "name", "lexical_path", "start_line", "start_col", "end_line", "end_col",
                "name_line", "name_col", "signature_hash", "display_name", "parent_uid", "scope_id", "name_lc")
_NEW_DEFS = (f"CREATE TEMP TABLE IF NOT EXISTS rw_def (def_uid TEXT PRIMARY KEY, ord INTEGER NOT NULL, "
             f"{', '.join(_DEF_COLUMNS)})")


def _write_defs(conn: sqlite3.Connection, source: str) -> None:
    """Write the staged definitions of the files in ``temp.rw_file``, keeping each stored row that comes out the
    same (by ``def_uid``): an edit moves or changes a few of a file's definitions, and deleting and inserting all of
    them rewrote four b-trees keyed by hashes and names (~40 % of a 20-file edit's WAL pages on Django). A row
    whose lexical path changed takes it as its qualified name, as a new row does (linking prefixes the module name
    where it differs); a new row is inserted in staged order. A ``def_uid`` another file holds still fails the
    insert, as it always did."""
    conn.execute(_NEW_DEFS)
    conn.execute("DELETE FROM temp.rw_def")
    conn.execute(f"INSERT INTO temp.rw_def SELECT r.uid, r.rowid, m.file_id, r.kind, r.name, r.lexical, r.sl, r.sc, "
                 "r.el, r.ec, r.nl, r.nc, r.sig, r.display, r.parent_uid, s.id, r.name_lc "
                 f"FROM {source}.def_rows r JOIN temp.rw_file m ON m.file = r.file "
                 "LEFT JOIN temp.rw_scope s ON s.file = r.file AND s.local = r.scope")
    held = "SELECT file_id FROM temp.rw_file"
    conn.execute(f"DELETE FROM st_def WHERE file_id IN ({held}) AND def_uid NOT IN (SELECT def_uid FROM temp.rw_def)")
    same = " AND ".join(f"o.{c} IS n.{c}" for c in _DEF_COLUMNS)
    # (No ``UPDATE … FROM``: it needs SQLite 3.33, and the rest of the index runs on older ones.)
    conn.execute(
        f"UPDATE st_def SET (qualified_name, {', '.join(_DEF_COLUMNS)}) = (SELECT CASE WHEN st_def.lexical_path IS "
        "n.lexical_path THEN st_def.qualified_name ELSE n.lexical_path END, "
        f"{', '.join(f'n.{c}' for c in _DEF_COLUMNS)} FROM temp.rw_def n WHERE n.def_uid = st_def.def_uid) "
        "WHERE def_uid IN (SELECT n.def_uid FROM temp.rw_def n "
        f"JOIN st_def o ON o.def_uid = n.def_uid WHERE o.file_id IN ({held}) AND NOT ({same}))")
    conn.execute(
        "INSERT INTO st_def(def_uid, qualified_name, " + ", ".join(_DEF_COLUMNS) + ") SELECT n.def_uid, "
        "n.lexical_path, " + ", ".join(f"n.{c}" for c in _DEF_COLUMNS) + " FROM temp.rw_def n WHERE NOT EXISTS "
        "(SELECT 1 FROM st_def d WHERE d.def_uid = n.def_uid AND d.file_id = n.file_id) ORDER BY n.ord")


class _Writer:
    """The scope and bind matching of one batch's rewritten files, and the writes it decided (:meth:`flush`)."""

    def __init__(self, counters: IdCounters) -> None:
        self.counters = counters
        self.scope_updates: list[tuple[Any, ...]] = []
        self.scope_inserts: list[tuple[Any, ...]] = []
        self.bind_updates: list[tuple[Any, ...]] = []
        self.bind_inserts: list[tuple[Any, ...]] = []
        self.deleted_scopes: list[tuple[int]] = []
        self.deleted_binds: list[tuple[int]] = []

    def scopes(self, file_id: int, old: list[tuple[Any, ...]],
               new: list[tuple[Any, ...]]) -> tuple[list[int], bool, int]:
        """The file's scope ids by index; whether its refs are worth pairing where they were: not when most of its
        nested scopes moved (a line inserted above them), which moved most refs too; pairing them finds nothing and
        costs a lookup each (the file scope is left out: any added line moves its end); and by how many lines most
        of the moved scopes moved whole (0: none did), where the refs below the edit are looked for."""
        ids = [row[0] for row in old[:len(new)]]
        for _ in range(len(old), len(new)):
            ids.append(self.counters.scope)
            self.counters.scope += 1
        same = moved = 0
        shifts: Counter[int] = Counter()
        for i, (parent, kind, sl, sc, el, ec) in enumerate(new):
            row = (ids[parent] if parent >= 0 else None, kind, sl, sc, el, ec)
            if i >= len(old):
                self.scope_inserts.append((ids[i], file_id, *row))
            elif tuple(old[i][1:]) != row:
                self.scope_updates.append((*row, ids[i]))
                moved += parent >= 0
                _, _, old_kind, old_sl, old_sc, old_el, old_ec = old[i]
                if parent >= 0 and (old_kind, old_sc, old_ec, old_el - old_sl) == (kind, sc, ec, el - sl):
                    shifts[sl - old_sl] += 1
            else:
                same += parent >= 0
        self.deleted_scopes.extend((row[0],) for row in old[len(new):])
        shift = min(shifts, key=lambda d: (-shifts[d], d)) if shifts else 0
        return ids, same >= moved, shift

    def binds(self, file_id: int, scopes: list[int], old: list[tuple[Any, ...]],
              new: list[tuple[Any, ...]]) -> list[int]:
        stored: dict[tuple[int, str], list[tuple[Any, ...]]] = defaultdict(list)
        for row in old:
            stored[(row[1], row[2])].append(row)
        ids: list[int] = []
        for scope, name, target_kind, target_uid, certainty, reason in new:
            scope_id = scopes[scope]
            rest = (target_kind, target_uid, certainty, reason)
            same = stored.get((scope_id, name))
            if same:
                kept = same.pop(0)
                bind_id = kept[0]
                if tuple(kept[3:]) != rest:
                    self.bind_updates.append((*rest, bind_id))
            else:
                bind_id = self.counters.bind
                self.counters.bind += 1
                self.bind_inserts.append((bind_id, file_id, scope_id, name, *rest))
            ids.append(bind_id)
        self.deleted_binds.extend((row[0],) for rows in stored.values() for row in rows)
        return ids

    def flush(self, conn: sqlite3.Connection) -> None:
        conn.executemany("DELETE FROM st_bind WHERE bind_id = ?", self.deleted_binds)
        conn.executemany("DELETE FROM st_scope WHERE scope_id = ?", self.deleted_scopes)
        conn.executemany("UPDATE st_scope SET parent_scope_id = ?, kind = ?, start_line = ?, start_col = ?, "
                         "end_line = ?, end_col = ? WHERE scope_id = ?", self.scope_updates)
        conn.executemany("INSERT INTO st_scope(scope_id, file_id, parent_scope_id, kind, start_line, start_col, "
                         "end_line, end_col) VALUES (?,?,?,?,?,?,?,?)", self.scope_inserts)
        conn.executemany("UPDATE st_bind SET target_kind = ?, target_uid = ?, certainty = ?, reason_code = ? "
                         "WHERE bind_id = ?", self.bind_updates)
        conn.executemany("INSERT INTO st_bind(bind_id, file_id, scope_id, name, target_kind, target_uid, certainty, "
                         "reason_code) VALUES (?,?,?,?,?,?,?,?)", self.bind_inserts)
