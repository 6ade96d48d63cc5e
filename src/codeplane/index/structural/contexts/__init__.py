"""Contexts (§8.4): discovery, Tier 1 authority, hole punches, the probe and the router, kept in ``st_context``.

``refresh`` recomputes everything from the file table when markers or a sample set changed in a batch, then
re-routes every file's ``unit_id``; otherwise it only routes the files the batch wrote (the common edit, and a
checkout of a few hundred files: work proportional to the batch, not the tree). An edited probe sample changes
nothing but, perhaps, its context's status: that is re-derived from the samples' stored parse statistics, and a
status that moved is stored and re-routes only the files inside that context's root (a 1,000-file checkout of a
133k-file tree flipped one small context and recomputed everything: 3.5 s). Context ids are a function of
(family, root) (:func:`context_ids`), so unit ids survive recomputation and a cold index gives the same ones.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import TYPE_CHECKING, NamedTuple

from codeplane.index.structural import anchors
from codeplane.index.structural.bulk import covers_most
from codeplane.index.structural.contexts.authority import apply_authority
from codeplane.index.structural.contexts.discovery import Candidate, discover, keeps_text
from codeplane.index.structural.contexts.globs import INCLUDE_SPECS
from codeplane.index.structural.contexts.probe import (
    SAMPLE_SIZE,
    FileStats,
    family_members,
    owns,
    probe,
    punch_holes,
    status_of,
)
from codeplane.index.structural.contexts.router import Context, ContextRouter, load_contexts, shape_of

if TYPE_CHECKING:
    from codeplane.index.structural.store import BatchEffect

__all__ = ["Context", "ContextRouter", "Rerouted", "compute", "context_ids", "load_contexts", "refresh"]


class Rerouted(NamedTuple):
    files: list[int]
    anchors_removed: dict[tuple[int, str, str], int]


def _plan(conn: sqlite3.Connection, effect: BatchEffect, stored: list[Context], *,
          markers_moved: bool) -> dict[int, str] | None:
    """What the batch changes in the contexts: ``None`` when they must be recomputed (markers added, removed or,
    where their content counts, rewritten; a sample deleted; a new file that would become a sample), else the
    contexts whose probe status alone moved (an edited sample), with their new status (often none).

    A new file matters only if it would enter a context's sample set (shortest paths first), so a cold index
    of a big tree recomputes contexts a handful of times, not once per batch. An edited sample keeps the sample
    set (membership is a matter of paths) and can change only its context's status.
    """
    if markers_moved or not stored:
        return None if (markers_moved or effect.upserted or effect.deleted) else {}
    samples = {s for ctx in stored for s in ctx.samples}
    if any(p in samples for p in effect.deleted):
        return None
    # The cheap test first: a file longer than a full sample set's longest sample cannot enter it.
    live = [(shape_of(c), len(c.samples) < SAMPLE_SIZE, max((len(s), s) for s in c.samples) if c.samples else None)
            for c in stored if c.probe_status != "detached"]
    for path in effect.added:
        key = (len(path), path)
        for shape, open_slot, worst in live:
            if (open_slot or worst is None or key < worst) and owns(shape, path):
                return None
    edited = {p for p in effect.upserted if p in samples}
    if not edited:
        return {}
    return _probe_moves(conn, [c for c in stored if c.probe_status != "detached" and edited & set(c.samples)])


def _probe_moves(conn: sqlite3.Connection, probed: list[Context]) -> dict[int, str] | None:
    """The contexts whose status differs from what their samples' current statistics give, with that status
    (``None``: a sample has no file row, so the sample sets themselves must be recomputed)."""
    stats: dict[str, FileStats] = {}
    for part in _chunks(sorted({s for ctx in probed for s in ctx.samples})):
        stats.update((p, FileStats(p, n, e, bool(h) if h is not None else None)) for p, n, e, h in conn.execute(
            f"SELECT path, node_count, error_count, has_named FROM st_file WHERE path IN ({','.join('?' * len(part))})",
            part))
    moved: dict[int, str] = {}
    for ctx in probed:
        found = [stats[s] for s in ctx.samples if s in stats]
        if len(found) < len(ctx.samples):
            return None
        status = status_of(ctx.family, found)
        if status != ctx.probe_status:
            moved[ctx.context_id] = status
    return moved


def compute(conn: sqlite3.Connection) -> list[Candidate]:
    """Phases A, A.2, B and C over the current file table (pure reads)."""
    rows = conn.execute("SELECT path, node_count, error_count, has_named FROM st_file ORDER BY path").fetchall()
    contents = {p: t for p, t in conn.execute("SELECT path, text FROM st_marker") if t is not None}
    candidates = discover([r[0] for r in rows], contents)
    apply_authority(candidates, contents)
    punch_holes(candidates)
    files = [FileStats(p, n, e, bool(h) if h is not None else None) for p, n, e, h in rows]
    members = {family: family_members(family, files) for family in sorted({c.family for c in candidates})}
    for candidate in candidates:
        probe(candidate, members[candidate.family])
    return candidates


def refresh(conn: sqlite3.Connection, effect: BatchEffect) -> Rerouted:
    """Store marker texts, recompute contexts and re-route unit ids if needed.

    Returns the files whose unit changed, with the anchored refs they held under their old units, so anchor
    groups can be moved incrementally.
    """
    markers_moved = False
    for path, text in sorted(effect.markers.items()):
        if text is None:
            markers_moved |= conn.execute("DELETE FROM st_marker WHERE path = ?", (path,)).rowcount > 0
            continue
        kept = text if keeps_text(path) else None
        row = conn.execute("SELECT text FROM st_marker WHERE path = ?", (path,)).fetchone()
        # An edited marker whose content does not matter (a setup.py) leaves every context as it was: only
        # its presence counts. Recomputing reads every file row (seconds on a 100k-file tree).
        if row is None or row[0] != kept:
            conn.execute("INSERT OR REPLACE INTO st_marker(path, text) VALUES (?, ?)", (path, kept))
            markers_moved = True
    stored = load_contexts(conn)
    plan = _plan(conn, effect, stored, markers_moved=markers_moved)
    if plan == {}:
        _route_new(conn, stored, effect)
        return Rerouted([], {})
    if plan is not None:
        # Only probe outcomes moved: the contexts are the same, and only files inside a moved context's root can
        # route differently (a recompute reads every file row: seconds on a 100k-file tree).
        conn.executemany("UPDATE st_context SET probe_status = ? WHERE context_id = ?",
                         [(status, cid) for cid, status in sorted(plan.items())])
        roots = sorted({c.root_path for c in stored if c.context_id in plan})
        return _route(conn, set(effect.upserted.values()), _files_under(conn, roots, sorted(effect.added)))
    candidates = compute(conn)
    ids = context_ids([(c.family, c.root) for c in candidates])
    existing = {(f, r): cid for cid, f, r in conn.execute("SELECT context_id, family, root_path FROM st_context")}
    # Rows that go, or whose id is not the one the tree gives now (an id probed past a context that is gone), first:
    # the ids they hold may be another context's now.
    for key, cid in existing.items():
        if ids.get(key) != cid:
            conn.execute("DELETE FROM st_context WHERE context_id = ?", (cid,))
    for c in candidates:
        values = (c.tier, json.dumps(c.markers), c.status, json.dumps(list(INCLUDE_SPECS.get(c.family, ()))),
                  json.dumps(c.exclude), json.dumps(c.samples))
        cid = ids[(c.family, c.root)]
        if existing.get((c.family, c.root)) != cid:
            conn.execute("INSERT INTO st_context(context_id, family, root_path, tier, markers, probe_status, "
                         "include_spec, exclude_spec, samples) VALUES (?,?,?,?,?,?,?,?,?)",
                         (cid, c.family, c.root, *values))
        else:
            conn.execute("UPDATE st_context SET tier=?, markers=?, probe_status=?, include_spec=?, exclude_spec=?, "
                         "samples=? WHERE context_id=?", (*values, cid))
    return _route(conn, set(effect.upserted.values()))


#: Context ids are drawn from 1..ID_SPACE-1 (short in ``map_repo``'s text, and SQLite's cheapest integers).
ID_SPACE = 1_000_000


def context_ids(keys: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """Each context's id, from its (family, root): a hash of the pair, the next free id on a clash (taken in
    (family, root) order). A function of the set of contexts alone, so an index kept up to date incrementally gives
    the ids a cold index of the same tree gives (an autoincrement id depended on which contexts had come and gone),
    and a context that stays keeps its id (and its files their unit ids) when others appear or go."""
    ids: dict[tuple[str, str], int] = {}
    taken: set[int] = set()
    for family, root in sorted(set(keys)):
        digest = hashlib.blake2b(f"{family}\0{root}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
        cid = int.from_bytes(digest, "big") % (ID_SPACE - 1) + 1
        while cid in taken:
            cid = cid % (ID_SPACE - 1) + 1
        taken.add(cid)
        ids[(family, root)] = cid
    return ids


def _route_new(conn: sqlite3.Connection, stored: list[Context], effect: BatchEffect) -> None:
    """Unit ids of the batch's files, when the contexts themselves did not change: new files are routed; every
    written file's surface and thunks (inserted with unit 0) take its file's unit."""
    added = sorted(effect.added)
    if added:
        router = ContextRouter(stored)
        updates = []
        for part in _chunks(added):
            for file_id, path, family in conn.execute(
                    f"SELECT file_id, path, family FROM st_file WHERE path IN ({','.join('?' * len(part))})", part):
                ctx = router.get_context_for_file(path, family)
                if ctx is not None:
                    updates.append((ctx.context_id, file_id))
        conn.executemany("UPDATE st_file SET unit_id = ? WHERE file_id = ?", updates)
    _unit_to_facts(conn, sorted(effect.upserted.values()))


_FileRow = tuple[int, str, str | None, int]


def _files_under(conn: sqlite3.Connection, roots: list[str], added: list[str]) -> list[_FileRow]:
    """File rows inside any of ``roots`` (by path range: ``/`` sorts just before ``0``) and of ``added``."""
    columns = "SELECT file_id, path, family, unit_id FROM st_file"
    if "" in roots:
        return list(conn.execute(columns))
    rows: dict[int, _FileRow] = {}
    for root in roots:
        within = conn.execute(f"{columns} WHERE path = ? OR (path >= ? AND path < ?)", (root, f"{root}/", f"{root}0"))
        rows.update((row[0], row) for row in within)
    for part in _chunks(added):
        rows.update((row[0], row) for row in conn.execute(f"{columns} WHERE path IN ({','.join('?' * len(part))})",
                                                           part))
    return [rows[file_id] for file_id in sorted(rows)]


def _route(conn: sqlite3.Connection, written: set[int], files: list[_FileRow] | None = None) -> Rerouted:
    """Re-route ``files`` (default: every file) and give ``written`` files' surfaces and thunks their unit."""
    router = ContextRouter(load_contexts(conn, valid_only=True))
    updates = []
    if files is None:
        files = conn.execute("SELECT file_id, path, family, unit_id FROM st_file").fetchall()
    for file_id, path, family, unit in files:
        ctx = router.get_context_for_file(path, family)
        new_unit = ctx.context_id if ctx is not None else 0
        if new_unit != unit:
            updates.append((new_unit, file_id))
    moved = sorted(file_id for _, file_id in updates)
    # Files written in this batch were never in a group under their interim unit: nothing to take out.
    removed = anchors.removed_counts(conn, [f for f in moved if f not in written])
    conn.executemany("UPDATE st_file SET unit_id = ? WHERE file_id = ?", updates)
    _unit_to_facts(conn, sorted(written | set(moved)))
    return Rerouted(moved, removed) if updates else Rerouted([], {})


def _unit_to_facts(conn: sqlite3.Connection, file_ids: list[int]) -> None:
    """Copy ``st_file.unit_id`` of ``file_ids`` to their export surfaces and thunks (one pass over both tables when
    they are most files, as on a cold index; else only their rows, so an edit does not rewrite every row)."""
    if not file_ids:
        return
    if covers_most(conn, file_ids):
        conn.execute("UPDATE st_export_surface SET unit_id = "
                     "(SELECT unit_id FROM st_file WHERE st_file.file_id = st_export_surface.file_id)")
        conn.execute("UPDATE st_export_thunk SET source_unit = "
                     "(SELECT unit_id FROM st_file WHERE st_file.file_id = st_export_thunk.file_id)")
        return
    rows = [(f,) for f in file_ids]
    conn.executemany("UPDATE st_export_surface SET unit_id = (SELECT unit_id FROM st_file WHERE file_id = ?1) "
                     "WHERE file_id = ?1", rows)
    conn.executemany("UPDATE st_export_thunk SET source_unit = (SELECT unit_id FROM st_file WHERE file_id = ?1) "
                     "WHERE file_id = ?1", rows)


def _chunks(items: list[str], size: int = 500) -> list[list[str]]:
    return [items[start:start + size] for start in range(0, len(items), size)]
