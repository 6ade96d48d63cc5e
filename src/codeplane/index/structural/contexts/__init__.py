"""Contexts (§8.4): discovery, Tier 1 authority, hole punches, the probe and the router, kept in ``st_context``.

``refresh`` recomputes everything from the file table when markers, file membership or a probe sample
changed in a batch, then re-routes every file's ``unit_id``; otherwise it does nothing (the common edit).
Context ids are stable per (family, root) so unit ids survive recomputation.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from codeplane.index.structural import anchors
from codeplane.index.structural.contexts.authority import apply_authority
from codeplane.index.structural.contexts.discovery import CONTENT_MARKERS, Candidate, discover
from codeplane.index.structural.contexts.globs import INCLUDE_SPECS
from codeplane.index.structural.contexts.probe import FileStats, probe, punch_holes
from codeplane.index.structural.contexts.router import Context, ContextRouter, load_contexts

if TYPE_CHECKING:
    from codeplane.index.structural.store import BatchEffect

__all__ = ["Context", "ContextRouter", "compute", "load_contexts", "refresh"]


def _needs_refresh(conn: sqlite3.Connection, effect: BatchEffect) -> bool:
    if effect.markers or effect.membership_changed:
        return True
    samples: set[str] = set()
    for (raw,) in conn.execute("SELECT samples FROM st_context"):
        samples.update(json.loads(raw))
    if not samples and conn.execute("SELECT 1 FROM st_context LIMIT 1").fetchone() is None:
        return bool(effect.upserted)
    return any(path in samples for path in effect.upserted)


def compute(conn: sqlite3.Connection) -> list[Candidate]:
    """Phases A, A.2, B and C over the current file table (pure reads)."""
    rows = conn.execute("SELECT path, node_count, error_count, has_named FROM st_file ORDER BY path").fetchall()
    contents = {p: t for p, t in conn.execute("SELECT path, text FROM st_marker") if t is not None}
    candidates = discover([r[0] for r in rows], contents)
    apply_authority(candidates, contents)
    punch_holes(candidates)
    files = [FileStats(p, n, e, bool(h) if h is not None else None) for p, n, e, h in rows]
    for candidate in candidates:
        probe(candidate, files)
    return candidates


def refresh(conn: sqlite3.Connection, effect: BatchEffect) -> bool:
    """Store marker texts, recompute contexts and re-route unit ids if needed.

    Returns whether unit ids changed (then every anchor group has been rebuilt).
    """
    for path, text in sorted(effect.markers.items()):
        if text is None:
            conn.execute("DELETE FROM st_marker WHERE path = ?", (path,))
        else:
            kept = text if path.rsplit("/", 1)[-1] in CONTENT_MARKERS else None
            conn.execute("INSERT OR REPLACE INTO st_marker(path, text) VALUES (?, ?)", (path, kept))
    if not _needs_refresh(conn, effect):
        return False
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
    return _route(conn)


def _route(conn: sqlite3.Connection) -> bool:
    router = ContextRouter(load_contexts(conn, valid_only=True))
    updates = []
    for file_id, path, family, unit in conn.execute("SELECT file_id, path, family, unit_id FROM st_file").fetchall():
        ctx = router.get_context_for_file(path, family)
        new_unit = ctx.context_id if ctx is not None else 0
        if new_unit != unit:
            updates.append((new_unit, file_id))
    if not updates:
        return False
    conn.executemany("UPDATE st_file SET unit_id = ? WHERE file_id = ?", updates)
    conn.execute("UPDATE st_export_surface SET unit_id = "
                 "(SELECT unit_id FROM st_file WHERE st_file.file_id = st_export_surface.file_id)")
    conn.execute("UPDATE st_export_thunk SET source_unit = "
                 "(SELECT unit_id FROM st_file WHERE st_file.file_id = st_export_thunk.file_id)")
    anchors.rebuild_all(conn)
    return True
