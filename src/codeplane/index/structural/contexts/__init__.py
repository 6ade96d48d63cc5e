"""Contexts (§8.4): discovery, Tier 1 authority, hole punches, the probe and the router, kept in ``st_context``.

``refresh`` recomputes everything from the file table when markers, file membership or a probe's outcome
changed in a batch, then re-routes every file's ``unit_id``; otherwise it only routes the files the batch wrote
(the common edit, and a checkout of a few hundred files: work proportional to the batch, not the tree). An edited
probe sample changes nothing but, perhaps, its context's status: that is re-derived from the samples' stored
parse statistics, and only a status that moved recomputes. Context ids are stable per (family, root) so unit ids
survive recomputation.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, NamedTuple

from codeplane.index.structural import anchors
from codeplane.index.structural.bulk import covers_most
from codeplane.index.structural.contexts.authority import apply_authority
from codeplane.index.structural.contexts.discovery import CONTENT_MARKERS, Candidate, discover
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

__all__ = ["Context", "ContextRouter", "Rerouted", "compute", "load_contexts", "refresh"]


class Rerouted(NamedTuple):
    files: list[int]
    anchors_removed: dict[tuple[int, str, str], int]


def _needs_refresh(conn: sqlite3.Connection, effect: BatchEffect, stored: list[Context], *,
                   markers_moved: bool) -> bool:
    """Whether the batch can change any context: markers added, removed or (where their content counts)
    rewritten (``markers_moved``), a probe's sample set or outcome, or a new file that would become a sample.

    A new file matters only if it would enter a context's sample set (shortest paths first), so a cold index
    of a big tree recomputes contexts a handful of times, not once per batch. A deleted sample changes the
    sample set; an edited one keeps it (membership is a matter of paths) and can change only the status.
    """
    if markers_moved or not stored:
        return bool(markers_moved or effect.upserted or effect.deleted)
    samples = {s for ctx in stored for s in ctx.samples}
    if any(p in samples for p in effect.deleted):
        return True
    edited = {p for p in effect.upserted if p in samples}
    if edited and _probe_moves(conn, [c for c in stored if c.probe_status != "detached" and edited & set(c.samples)]):
        return True
    # The cheap test first: a file longer than a full sample set's longest sample cannot enter it.
    live = [(shape_of(c), len(c.samples) < SAMPLE_SIZE, max((len(s), s) for s in c.samples) if c.samples else None)
            for c in stored if c.probe_status != "detached"]
    for path in effect.added:
        key = (len(path), path)
        for shape, open_slot, worst in live:
            if (open_slot or worst is None or key < worst) and owns(shape, path):
                return True
    return False


def _probe_moves(conn: sqlite3.Connection, probed: list[Context]) -> bool:
    """Whether any of these contexts' status differs from what its samples' current statistics give."""
    stats: dict[str, FileStats] = {}
    for part in _chunks(sorted({s for ctx in probed for s in ctx.samples})):
        stats.update((p, FileStats(p, n, e, bool(h) if h is not None else None)) for p, n, e, h in conn.execute(
            f"SELECT path, node_count, error_count, has_named FROM st_file WHERE path IN ({','.join('?' * len(part))})",
            part))
    for ctx in probed:
        found = [stats[s] for s in ctx.samples if s in stats]
        if len(found) < len(ctx.samples) or status_of(ctx.family, found) != ctx.probe_status:
            return True
    return False


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
        kept = text if path.rsplit("/", 1)[-1] in CONTENT_MARKERS else None
        row = conn.execute("SELECT text FROM st_marker WHERE path = ?", (path,)).fetchone()
        # An edited marker whose content does not matter (a setup.py) leaves every context as it was: only
        # its presence counts. Recomputing reads every file row (seconds on a 100k-file tree).
        if row is None or row[0] != kept:
            conn.execute("INSERT OR REPLACE INTO st_marker(path, text) VALUES (?, ?)", (path, kept))
            markers_moved = True
    stored = load_contexts(conn)
    if not _needs_refresh(conn, effect, stored, markers_moved=markers_moved):
        _route_new(conn, stored, effect)
        return Rerouted([], {})
    candidates = compute(conn)
    existing = {(f, r): cid for cid, f, r in conn.execute("SELECT context_id, family, root_path FROM st_context")}
    keep: set[int] = set()
    for c in candidates:
        values = (c.tier, json.dumps(c.markers), c.status, json.dumps(list(INCLUDE_SPECS.get(c.family, ()))),
                  json.dumps(c.exclude), json.dumps(c.samples))
        cid = existing.get((c.family, c.root))
        if cid is None:
            cursor = conn.execute("INSERT INTO st_context(family, root_path, tier, markers, probe_status, "
                                  "include_spec, exclude_spec, samples) VALUES (?,?,?,?,?,?,?,?)",
                                  (c.family, c.root, *values))
            cid = int(cursor.lastrowid or 0)
        else:
            conn.execute("UPDATE st_context SET tier=?, markers=?, probe_status=?, include_spec=?, exclude_spec=?, "
                         "samples=? WHERE context_id=?", (*values, cid))
        keep.add(cid)
    for cid in set(existing.values()) - keep:
        conn.execute("DELETE FROM st_context WHERE context_id = ?", (cid,))
    return _route(conn, set(effect.upserted.values()))


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


def _route(conn: sqlite3.Connection, written: set[int]) -> Rerouted:
    router = ContextRouter(load_contexts(conn, valid_only=True))
    updates = []
    for file_id, path, family, unit in conn.execute("SELECT file_id, path, family, unit_id FROM st_file").fetchall():
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
