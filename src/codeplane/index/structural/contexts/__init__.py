"""Contexts (§8.4): discovery, Tier 1 authority, hole punches, the probe and the router, kept in ``st_context``.

``refresh`` recomputes everything from the file table when markers, file membership or a probe sample
changed in a batch, then re-routes every file's ``unit_id``; otherwise it does nothing (the common edit).
Context ids are stable per (family, root) so unit ids survive recomputation.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, NamedTuple

from codeplane.index.structural import anchors
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
)
from codeplane.index.structural.contexts.router import Context, ContextRouter, load_contexts, shape_of

if TYPE_CHECKING:
    from codeplane.index.structural.store import BatchEffect

__all__ = ["Context", "ContextRouter", "Rerouted", "compute", "load_contexts", "refresh"]


class Rerouted(NamedTuple):
    files: list[int]
    anchors_removed: dict[tuple[int, str, str], int]


def _needs_refresh(effect: BatchEffect, stored: list[Context]) -> bool:
    """Whether the batch can change any context: markers, a probe sample, or a new file that would become one.

    A new file matters only if it would enter a context's sample set (shortest paths first), so a cold index
    of a big tree recomputes contexts a handful of times, not once per batch.
    """
    if effect.markers or not stored:
        return bool(effect.markers or effect.upserted or effect.deleted)
    samples = {s for ctx in stored for s in ctx.samples}
    if any(p in samples for p in (*effect.upserted, *effect.deleted)):
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
    for path, text in sorted(effect.markers.items()):
        if text is None:
            conn.execute("DELETE FROM st_marker WHERE path = ?", (path,))
        else:
            kept = text if path.rsplit("/", 1)[-1] in CONTENT_MARKERS else None
            conn.execute("INSERT OR REPLACE INTO st_marker(path, text) VALUES (?, ?)", (path, kept))
    stored = load_contexts(conn)
    if not _needs_refresh(effect, stored):
        _route_new(conn, stored, effect.added)
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


def _route_new(conn: sqlite3.Connection, stored: list[Context], added: set[str]) -> None:
    """Unit ids of files new in this batch, when the contexts themselves did not change."""
    if not added:
        return
    router = ContextRouter(stored)
    paths = sorted(added)
    updates = []
    for start in range(0, len(paths), 500):
        part = paths[start:start + 500]
        for file_id, path, family in conn.execute(
                f"SELECT file_id, path, family FROM st_file WHERE path IN ({','.join('?' * len(part))})", part):
            ctx = router.get_context_for_file(path, family)
            if ctx is not None:
                updates.append((ctx.context_id, file_id))
    conn.executemany("UPDATE st_file SET unit_id = ? WHERE file_id = ?", updates)
    conn.executemany("UPDATE st_export_surface SET unit_id = ? WHERE file_id = ?", updates)
    conn.executemany("UPDATE st_export_thunk SET source_unit = ? WHERE file_id = ?", updates)


def _route(conn: sqlite3.Connection, written: set[int]) -> Rerouted:
    router = ContextRouter(load_contexts(conn, valid_only=True))
    updates = []
    for file_id, path, family, unit in conn.execute("SELECT file_id, path, family, unit_id FROM st_file").fetchall():
        ctx = router.get_context_for_file(path, family)
        new_unit = ctx.context_id if ctx is not None else 0
        if new_unit != unit:
            updates.append((new_unit, file_id))
    if not updates:
        return Rerouted([], {})
    moved = sorted(file_id for _, file_id in updates)
    # Files written in this batch were never in a group under their interim unit: nothing to take out.
    removed = anchors.removed_counts(conn, [f for f in moved if f not in written])
    conn.executemany("UPDATE st_file SET unit_id = ? WHERE file_id = ?", updates)
    conn.execute("UPDATE st_export_surface SET unit_id = "
                 "(SELECT unit_id FROM st_file WHERE st_file.file_id = st_export_surface.file_id)")
    conn.execute("UPDATE st_export_thunk SET source_unit = "
                 "(SELECT unit_id FROM st_file WHERE st_file.file_id = st_export_thunk.file_id)")
    return Rerouted(moved, removed)
