"""Anchor groups (§7.3.9): member references that no import chain resolves, bucketed by
(unit, member token, receiver shape), with the true count and at most ``MAX_EXEMPLARS`` exemplar ref ids in
(path, line, column) order.

Maintained incrementally: after a batch, a group's count is adjusted by the refs the changed files lost and
gained, and its exemplars are the best of the surviving old exemplars and the new refs. Only when a removed
exemplar leaves a gap that the rest of the population must fill is the group recomputed from ``st_ref``.
Exemplars the batch deleted are known by id with their old place (``removed_refs``, read before the delete): a
rewritten file's new refs may be given the very ids its old refs had, so an id is never taken as a survivor on
its own.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import NamedTuple

from codeplane.index.structural.bulk import covers_most
from codeplane.index.structural.facts import ANCHORED
from codeplane.index.structural.schema import TIER_CODE

MAX_EXEMPLARS = 10
Key = tuple[int, str, str]  # (unit_id, member_token, receiver_shape)
Candidate = tuple[str, int, int, int]  # (path, line, col, ref_id): the exemplar order
Position = tuple[int, str, int, int, int]  # (unit_id, path, line, col, ref_id)

#: The ranking of every group in one sort: the count shares the rank's window (a frame over the whole partition),
#: and files sort by their place in path order (``_PATH_RANK``), an integer key instead of the path's text.
_RANKED = f"""
SELECT f.unit_id, r.token_text, coalesce(r.receiver_shape, ''), r.ref_id,
       row_number() OVER w AS rn, count(*) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS total
FROM st_ref r CROSS JOIN temp.anchor_path_rank f ON f.file_id = r.file_id
WHERE r.is_member = 1 AND r.tier_code = {TIER_CODE[ANCHORED]}
WINDOW w AS (PARTITION BY f.unit_id, r.token_text, coalesce(r.receiver_shape, '')
             ORDER BY f.path_rank, r.start_line, r.start_col, r.ref_id)
"""
#: ``st_ref`` is read in one pass (``CROSS JOIN`` keeps it the outer loop) and each row finds its file by rowid: the
#: planner's own choice, every file's refs through ``st_ref_file``, took 17-21 s against 14-15 s on the 133k-file
#: corpus for the same rows.
_PATH_RANK = ("CREATE TEMP TABLE anchor_path_rank (file_id INTEGER PRIMARY KEY, unit_id INTEGER, path_rank INTEGER)",
              "INSERT INTO temp.anchor_path_rank SELECT file_id, unit_id, row_number() OVER (ORDER BY path) "
              "FROM st_file")
#: Helper threads SQLite may sort the ranking with (``PRAGMA threads``): by then the extraction workers are gone.
_SORT_THREADS = min(4, os.cpu_count() or 1) if (os.cpu_count() or 1) > 1 else 0
_ANCHORED_IN_FILES = ("SELECT f.unit_id, r.token_text, coalesce(r.receiver_shape, ''), f.path, r.start_line, "
                      "r.start_col, r.ref_id FROM st_ref r JOIN st_file f ON f.file_id = r.file_id "
                      f"WHERE r.is_member = 1 AND r.tier_code = {TIER_CODE[ANCHORED]} AND r.file_id IN ({{}})")


def _marks(count: int) -> str:
    return ",".join("?" * count)


def _write(conn: sqlite3.Connection, rows: Iterable[tuple[int, str, str, int, int, int]]) -> int:
    groups: dict[Key, tuple[int, list[tuple[int, int]]]] = {}
    for unit, token, shape, ref_id, rank, total in rows:
        key = (unit, token, shape)
        if key not in groups:
            groups[key] = (total, [])
        if rank <= MAX_EXEMPLARS:
            groups[key][1].append((rank, ref_id))
    # Exemplars in rank order, whatever order the rows came in: ``apply`` reads the last one as the group's bound.
    conn.executemany(
        "INSERT INTO st_anchor_group(unit_id, member_token, receiver_shape, total_count, exemplar_ids) "
        "VALUES (?,?,?,?,?)",
        [(u, t, s, total, json.dumps([i for _, i in sorted(ids)])) for (u, t, s), (total, ids)
         in sorted(groups.items())])
    return len(groups)


@contextmanager
def _ranking(conn: sqlite3.Connection) -> Iterator[None]:
    previous = int(conn.execute("PRAGMA threads").fetchone()[0])
    conn.execute("DROP TABLE IF EXISTS temp.anchor_path_rank")
    for statement in _PATH_RANK:
        conn.execute(statement)
    conn.execute(f"PRAGMA threads = {_SORT_THREADS}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA threads = {previous}")
        conn.execute("DROP TABLE IF EXISTS temp.anchor_path_rank")


def rebuild_all(conn: sqlite3.Connection) -> int:
    conn.execute("DELETE FROM st_anchor_group")
    with _ranking(conn):
        return _write(conn, conn.execute(_RANKED))


def rank_all(conn: sqlite3.Connection) -> int:
    """Every group from ``st_ref``, ranked by SQLite: memory follows the number of groups, not of references
    (a cold index of a big tree). Only the exemplars reach Python. The groups are those ``apply`` writes from no
    groups and every file; their ids follow key order."""
    conn.execute("DELETE FROM st_anchor_group")
    with _ranking(conn):
        return _write(conn, conn.execute(f"SELECT * FROM ({_RANKED}) WHERE rn <= ?", (MAX_EXEMPLARS,)))


class Candidates(NamedTuple):
    """The ANCHORED member refs of some files, as ``group`` takes them: rows (file id, token, shape, line,
    column, ref id) and, once per file, its (unit, path), which rows would otherwise each carry a copy of."""

    files: dict[int, tuple[int, str]]
    rows: list[tuple[int, str, str, int, int, int]]


_MEMBERS = ("SELECT file_id, token_text, coalesce(receiver_shape, ''), start_line, start_col, ref_id FROM st_ref "
            f"WHERE is_member = 1 AND tier_code = {TIER_CODE[ANCHORED]}")


def candidates(conn: sqlite3.Connection, changed_files: list[int]) -> Candidates:
    """The rows ``group`` takes: ANCHORED member refs of ``changed_files``, in no particular order."""
    wanted = set(changed_files)
    files: dict[int, tuple[int, str]] = {}
    rows: list[tuple[int, str, str, int, int, int]] = []
    if covers_most(conn, changed_files):  # one pass over each table, not a lookup per file
        files = {f: (unit, path) for f, unit, path in conn.execute("SELECT file_id, unit_id, path FROM st_file")
                 if f in wanted}
        rows = [row for row in conn.execute(_MEMBERS) if row[0] in wanted]
        return Candidates(files, rows)
    for start in range(0, len(changed_files), 500):
        part = changed_files[start:start + 500]
        marks = _marks(len(part))
        files.update((f, (unit, path)) for f, unit, path in conn.execute(
            f"SELECT file_id, unit_id, path FROM st_file WHERE file_id IN ({marks})", part))
        rows += conn.execute(f"{_MEMBERS} AND file_id IN ({marks})", part)
    return Candidates(files, rows)


class Removed(NamedTuple):
    """The ANCHORED member refs some files held: how many per group, and where each was (by ref id)."""

    counts: dict[Key, int]
    positions: dict[int, Position]


def removed_refs(conn: sqlite3.Connection, file_ids: list[int]) -> Removed:
    """ANCHORED member refs held by ``file_ids`` (call before their facts are deleted)."""
    counts: dict[Key, int] = defaultdict(int)
    positions: dict[int, Position] = {}
    for start in range(0, len(file_ids), 500):
        part = file_ids[start:start + 500]
        for unit, token, shape, path, line, col, ref_id in conn.execute(_ANCHORED_IN_FILES.format(_marks(len(part))),
                                                                        part):
            counts[(unit, token, shape)] += 1
            positions[ref_id] = (unit, path, line, col, ref_id)
    return Removed(dict(counts), positions)


def removed_counts(conn: sqlite3.Connection, file_ids: list[int]) -> dict[Key, int]:
    """ANCHORED member refs per group held by ``file_ids`` (call before their facts are deleted)."""
    return removed_refs(conn, file_ids).counts


def _recompute(conn: sqlite3.Connection, pairs: set[tuple[str, str]]) -> None:
    """Groups of these (token, shape) pairs in every unit, straight from ``st_ref`` (token index per pair)."""
    rows: list[tuple[int, str, str, int, int, int]] = []
    for token, shape in sorted(pairs):
        conn.execute("DELETE FROM st_anchor_group WHERE member_token = ? AND receiver_shape = ?", (token, shape))
        members: dict[int, list[Candidate]] = defaultdict(list)
        for unit, ref_id, path, line, col in conn.execute(
                "SELECT f.unit_id, r.ref_id, f.path, r.start_line, r.start_col FROM st_ref r JOIN st_file f "
                "ON f.file_id = r.file_id WHERE r.token_text = ? AND r.is_member = 1 AND r.ref_tier = 'ANCHORED' "
                "AND coalesce(r.receiver_shape, '') = ?", (token, shape)):
            members[unit].append((path, line, col, ref_id))
        for unit, found in members.items():
            found.sort()
            rows += [(unit, token, shape, c[3], rank, len(found)) for rank, c in enumerate(found, 1)
                     if rank <= MAX_EXEMPLARS]
    _write(conn, rows)


#: Per group key, the changed files' ANCHORED member refs: how many, and the best ``MAX_EXEMPLARS`` in exemplar
#: order (all a refresh needs of them).
Added = dict[Key, tuple[int, list[Candidate]]]


def group(found: Candidates) -> Added:
    """Count and rank ``candidates`` by group key. Pure Python, no database: a cold index runs it in a thread
    while the writer builds indexes."""
    by_key: dict[Key, list[Candidate]] = defaultdict(list)
    files = found.files
    for file_id, token, shape, line, col, ref_id in found.rows:
        unit, path = files[file_id]
        by_key[(unit, token, shape)].append((path, line, col, ref_id))
    return {key: (len(refs), sorted(refs)[:MAX_EXEMPLARS]) for key, refs in by_key.items()}


def refresh(conn: sqlite3.Connection, removed: dict[Key, int], changed_files: list[int],
            relinked: set[tuple[str, str]]) -> int:
    """Update the groups touched by a batch; returns how many groups were written."""
    return apply(conn, removed, group(candidates(conn, changed_files)), relinked)


def apply(conn: sqlite3.Connection, removed: dict[Key, int], added: Added, relinked: set[tuple[str, str]],
          gone: Mapping[int, Position] | None = None) -> int:
    """``refresh`` once the changed files' refs are grouped (``group``); ``gone``: the deleted refs' places
    (``removed_refs``), which a new ref with a reused id must not stand in for."""
    gone = gone or {}
    keys = {k for k in (set(removed) | set(added)) if (k[1], k[2]) not in relinked}
    existing: dict[Key, tuple[int, int, list[int]]] = {}
    ordered = sorted(keys)
    for start in range(0, len(ordered), 300):
        batch = ordered[start:start + 300]
        clause = " OR ".join("(unit_id = ? AND member_token = ? AND receiver_shape = ?)" for _ in batch)
        for group_id, unit, token, shape, total, ids in conn.execute(
                "SELECT group_id, unit_id, member_token, receiver_shape, total_count, exemplar_ids "
                f"FROM st_anchor_group WHERE {clause}", [v for key in batch for v in key]):
            existing[(unit, token, shape)] = (group_id, total, json.loads(ids))
    surviving = _exemplar_keys(conn, [i for _, _, ids in existing.values() for i in ids if i not in gone])
    full: set[tuple[str, str]] = set(relinked)
    deletes: list[tuple[int]] = []
    # A group that stays is updated in place, and left alone when it comes out as it was (an edit elsewhere in a
    # file gives its refs new ids only where they moved): deleting and inserting it again rewrote its row and
    # its key's b-tree page, ~100 pages of a 20-file edit's WAL.
    updates: list[tuple[int, str, int]] = []
    inserts: list[tuple[int, str, str, int, str]] = []
    for key in ordered:
        group_id, total, ids = existing.get(key, (0, 0, []))
        # Survivors: still ANCHORED and still in this unit (a re-routed file's refs left it).
        kept = [surviving[i][1:] for i in ids if i in surviving and surviving[i][0] == key[0]]
        remaining_total = total - removed.get(key, 0)
        count, best_added = added.get(key, (0, []))
        lost = len(kept) < len(ids) and remaining_total > len(kept)
        if lost and not _refilled(ids, surviving, gone, kept, best_added):
            full.add((key[1], key[2]))  # a lost exemplar must be replaced from the rest of the population
            continue
        new_total = remaining_total + count
        if new_total <= 0:
            if group_id:
                deletes.append((group_id,))
            continue
        best = [c[3] for c in sorted([*kept, *best_added])[:MAX_EXEMPLARS]]
        if not group_id:
            inserts.append((*key, new_total, json.dumps(best)))
        elif (new_total, best) != (total, ids):
            updates.append((new_total, json.dumps(best), group_id))
    conn.executemany("DELETE FROM st_anchor_group WHERE group_id = ?", deletes)
    conn.executemany("UPDATE st_anchor_group SET total_count = ?, exemplar_ids = ? WHERE group_id = ?", updates)
    conn.executemany("INSERT INTO st_anchor_group(unit_id, member_token, receiver_shape, total_count, exemplar_ids) "
                     "VALUES (?,?,?,?,?)", inserts)
    if full:
        _recompute(conn, full)
    return len(updates) + len(inserts) + len(full)


def _refilled(ids: list[int], surviving: dict[int, Position], gone: Mapping[int, Position], kept: list[Candidate],
              best_added: list[Candidate]) -> bool:
    """Whether the group's best ``MAX_EXEMPLARS`` are among ``kept`` and ``best_added`` although exemplars were lost.

    The old exemplars were the first of the old population, so every old member that was no exemplar ranks after
    the last exemplar, wherever that one went (deleted, re-routed to another unit): its place is the bound. If
    ``MAX_EXEMPLARS`` survivors and new refs rank no later than it, nothing outside them can enter the best: the
    common case of a file whose refs were rewritten in place (an edit elsewhere in it gives them new ids), without
    rescanning the token's whole population.
    """
    last_gone = gone.get(ids[-1]) if ids else None
    last = last_gone or (surviving.get(ids[-1]) if ids else None)
    if last is None:
        return False
    bound = last[1:]
    if last_gone is not None:
        # Its file was rewritten or deleted, and with it every old ref the file held: an old member that was no
        # exemplar and survives lies in a later file, so anything in that file or an earlier one ranks before it
        # (a line inserted above the last exemplar moves the refs after it, and the group needs no rescan).
        path = bound[0]
        return sum(1 for c in kept if c[0] <= path) + sum(1 for c in best_added if c[0] <= path) >= MAX_EXEMPLARS
    return sum(1 for c in kept if c <= bound) + sum(1 for c in best_added if c <= bound) >= MAX_EXEMPLARS


def _exemplar_keys(conn: sqlite3.Connection, ref_ids: list[int]) -> dict[int, Position]:
    """Surviving exemplars: ref id -> (unit, path, line, col, ref id)."""
    out: dict[int, Position] = {}
    unique = sorted(set(ref_ids))
    for start in range(0, len(unique), 500):
        part = unique[start:start + 500]
        for ref_id, unit, path, line, col in conn.execute(
                "SELECT r.ref_id, f.unit_id, f.path, r.start_line, r.start_col FROM st_ref r JOIN st_file f "
                f"ON f.file_id = r.file_id WHERE r.ref_id IN ({_marks(len(part))}) AND r.ref_tier = 'ANCHORED'",
                part):
            out[ref_id] = (unit, path, line, col, ref_id)
    return out
