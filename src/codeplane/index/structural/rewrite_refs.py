"""Pairing a rewritten file's new references with its stored ones, in SQL (``rewrite.py`` maps scopes and binds).

References are most of a file's rows (a 1,000-file checkout of the 133k-file corpus holds ~480k), so the
pairing runs inside SQLite, never as Python rows: a new ref equal to a stored one in every field extraction
sets (position included) keeps the stored row untouched, with its id and what linking stored on it. Stored refs
left unpaired are deleted; new refs left unpaired are inserted with fresh ids, in staged order.

A ref that only moved is looked for too, by the lines most of the file's moved scopes moved by (``shift``,
from ``rewrite._Writer.scopes``): a line inserted above the rest moves every ref below it by one line. A stored
ref equal to a new one in every other field, ``shift`` lines above it, keeps its row and gets its lines updated:
an update rewrites the row and the one index holding the line (``st_ref_file``), where deleting and inserting
it touches the row and all five of its b-trees. (Numbering both sides' leftovers by group to pair them was tried
before, and cost more than deleting and inserting: in-process, 1,000 files of the 133k-file corpus with a line
above everything, 9.7 s of writing against 6 s.) Any pairing is sound: a kept row ends with every field a new
row would have, and linking decides the rest as for a new row.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

#: The fields extraction sets, as named in ``temp.rw_new``, and their stored columns (the same-file tier and
#: target: what linking stored on top is kept with the row).
_FIXED = ("scope_id", "token", "role", "tier", "bind_id", "target", "via", "member", "shape")
_STORED = {"scope_id": "scope_id", "token": "token_text", "role": "role_code", "tier": "local_tier_code",
           "bind_id": "bind_id", "target": "local_target_uid", "via": "via_import_uid", "member": "is_member",
           "shape": "receiver_shape", "sl": "start_line", "sc": "start_col", "el": "end_line", "ec": "end_col"}
_COLUMNS = "file_id INTEGER, pair INTEGER, shift INTEGER, " + ", ".join((*_FIXED, "sl", "sc", "el", "ec"))

_SETUP = (
    f"CREATE TEMP TABLE IF NOT EXISTS rw_new (row INTEGER PRIMARY KEY, {_COLUMNS})",
    "CREATE TEMP TABLE IF NOT EXISTS rw_pair (ref_id INTEGER PRIMARY KEY, row INTEGER NOT NULL UNIQUE)",
    "CREATE TEMP TABLE IF NOT EXISTS rw_moved (ref_id INTEGER PRIMARY KEY, row INTEGER NOT NULL UNIQUE, "
    "shift INTEGER NOT NULL)",
)


@dataclass
class RefCounts:
    same: int = 0
    moved: int = 0
    inserted: int = 0
    deleted: int = 0


def _same(conn: sqlite3.Connection) -> int:
    """Pair each new ref with a stored one equal in every field, found through the file's index. Rows equal to
    each other pair one to one: the first pair of each row and of each stored ref wins (``OR IGNORE`` on both
    keys), in order, which pairs a group of equal rows completely."""
    equal = " AND ".join(f"o.{_STORED[c]} IS n.{c}" for c in (*_FIXED, "el", "ec"))
    return conn.execute(
        "INSERT OR IGNORE INTO rw_pair(ref_id, row) SELECT o.ref_id, n.row FROM rw_new n "
        "JOIN st_ref o ON o.file_id = n.file_id AND o.start_line = n.sl AND o.start_col = n.sc "
        f"WHERE n.pair AND {equal} ORDER BY n.row, o.ref_id").rowcount


def _moved(conn: sqlite3.Connection) -> int:
    """Pair each new ref left over with a stored one left over, equal in every field but its lines, which are
    its file's ``shift`` above the new ones; then count those pairs as paired (``rw_pair``)."""
    equal = " AND ".join(f"o.{_STORED[c]} IS n.{c}" for c in (*_FIXED, "ec"))
    moved = conn.execute(
        "INSERT OR IGNORE INTO rw_moved(ref_id, row, shift) SELECT o.ref_id, n.row, n.shift FROM rw_new n "
        "JOIN st_ref o ON o.file_id = n.file_id AND o.start_line = n.sl - n.shift AND o.start_col = n.sc "
        f"WHERE n.shift != 0 AND o.end_line = n.el - n.shift AND {equal} "
        "AND n.row NOT IN (SELECT row FROM rw_pair) AND o.ref_id NOT IN (SELECT ref_id FROM rw_pair) "
        "ORDER BY n.row, o.ref_id").rowcount
    if moved:
        conn.execute("INSERT INTO rw_pair(ref_id, row) SELECT ref_id, row FROM rw_moved")
    return moved


def pair_and_write(conn: sqlite3.Connection, source: str, next_ref: int) -> RefCounts:
    """Write the refs of the files in ``temp.rw_file`` (``file`` in the staged batch -> ``file_id``, and whether
    to look for stored refs to keep, ``pair``: else all are written again), whose scope
    and bind ids are in ``temp.rw_scope``/``temp.rw_bind`` (``file, local -> id``); new rows get ids from
    ``next_ref`` on. The staged batch is readable in schema ``source``."""
    for statement in _SETUP:
        conn.execute(statement)
    for table in ("rw_new", "rw_pair", "rw_moved"):
        conn.execute(f"DELETE FROM {table}")
    conn.execute(
        f"INSERT INTO rw_new SELECT r.rowid, m.file_id, m.pair, m.shift, s.id, r.token, r.role, r.tier, b.id, "
        f"r.target, r.via, r.member, r.shape, r.sl, r.sc, r.el, r.ec FROM {source}.ref_rows r JOIN rw_file m "
        "ON m.file = r.file "
        "LEFT JOIN rw_scope s ON s.file = r.file AND s.local = r.scope "
        "LEFT JOIN rw_bind b ON b.file = r.file AND b.local = r.bind")
    counts = RefCounts(same=_same(conn))
    counts.moved = _moved(conn)
    counts.deleted = conn.execute(
        "DELETE FROM st_ref WHERE file_id IN (SELECT file_id FROM rw_file) AND ref_id NOT IN "
        "(SELECT ref_id FROM rw_pair)").rowcount
    if counts.moved:
        conn.execute("UPDATE st_ref SET start_line = start_line + (SELECT shift FROM rw_moved m WHERE m.ref_id = "
                     "st_ref.ref_id), end_line = end_line + (SELECT shift FROM rw_moved m WHERE m.ref_id = "
                     "st_ref.ref_id) WHERE ref_id IN (SELECT ref_id FROM rw_moved)")
    counts.inserted = conn.execute(
        "INSERT INTO st_ref(ref_id, file_id, scope_id, token_text, start_line, start_col, end_line, end_col, "
        "role_code, tier_code, bind_id, target_uid, via_import_uid, is_member, receiver_shape, local_tier_code, "
        "local_target_uid) SELECT ? + row_number() OVER (ORDER BY n.row) - 1, n.file_id, n.scope_id, n.token, "
        "n.sl, n.sc, n.el, n.ec, n.role, n.tier, n.bind_id, n.target, n.via, n.member, n.shape, n.tier, n.target "
        "FROM rw_new n WHERE n.row NOT IN (SELECT row FROM rw_pair) ORDER BY n.row", (next_ref,)).rowcount
    return counts
