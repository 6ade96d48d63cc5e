"""Export surfaces and STRONG tiers, recomputed for whole sets of files at once (one query per 500 files, not
per file: a cold index touches every file).

``upstream`` narrows the work for files that were not themselves changed: only export entries and references
bound to imports of those upstream files can resolve differently, so only they are chased again.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from codeplane.index.structural import schema
from codeplane.index.structural.bulk import covers_most
from codeplane.index.structural.chase import Chaser
from codeplane.index.structural.facts import ANCHORED, STRONG

_CHUNK = 500


def _chunks(ids: Sequence[int]) -> Iterator[Sequence[int]]:
    for start in range(0, len(ids), _CHUNK):
        yield ids[start:start + _CHUNK]


def _marks(count: int) -> str:
    return ",".join("?" * count)


def _from(chaser: Chaser, import_uid: str, files: set[int]) -> bool:
    info = chaser.import_row(import_uid)
    return info.resolved_file_id in files or info.resolved_alt_file_id in files


def importers(conn: sqlite3.Connection, file_ids: set[int]) -> set[int]:
    """Files with an import resolving to any of ``file_ids``."""
    out: set[int] = set()
    for part in _chunks(sorted(file_ids)):
        marks = _marks(len(part))
        out.update(i for (i,) in conn.execute(
            f"SELECT DISTINCT file_id FROM st_import WHERE resolved_file_id IN ({marks}) "
            f"UNION SELECT DISTINCT file_id FROM st_import WHERE resolved_alt_file_id IN ({marks})", [*part, *part]))
    return out


#: What a chase through a file reads of it (``chase.py``): its export entries in order, each with its import's
#: resolution, and the targets of its star thunks; plus its surface hash (what importers last saw).
ChaseInputs = tuple[str | None, tuple[tuple[Any, ...], ...], tuple[int | None, ...]]


def chase_inputs(conn: sqlite3.Connection, file_ids: Sequence[int]) -> dict[int, ChaseInputs]:
    """``ChaseInputs`` of ``file_ids`` as stored now (no row at all: no surface, entries or thunks)."""
    hashes: dict[int, str | None] = {}
    entries: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    thunks: dict[int, list[int | None]] = defaultdict(list)
    for part in _chunks(sorted(file_ids)):
        marks = _marks(len(part))
        hashes.update(conn.execute(
            f"SELECT file_id, surface_hash FROM st_export_surface WHERE file_id IN ({marks})", part))
        for file_id, *row in conn.execute(
                "SELECT e.file_id, e.exported_name, e.local_def_uid, e.evidence_kind = '__all__literal', "
                "e.import_uid IS NULL, i.import_kind, i.imported_name, i.alias, i.resolved_file_id, "
                "i.resolved_alt_file_id FROM st_export_entry e LEFT JOIN st_import i ON i.import_uid = e.import_uid "
                f"WHERE e.file_id IN ({marks}) ORDER BY e.file_id, e.entry_id", part):
            entries[file_id].append(tuple(row))
        for file_id, target in conn.execute(
                "SELECT t.file_id, i.resolved_file_id FROM st_export_thunk t LEFT JOIN st_import i "
                f"ON i.import_uid = t.import_uid WHERE t.file_id IN ({marks}) ORDER BY t.file_id, t.thunk_id", part):
            thunks[file_id].append(target)
    return {f: (hashes.get(f), tuple(entries.get(f, ())), tuple(thunks.get(f, ())))
            for f in set(hashes) | set(entries) | set(thunks)}


def star_holders(conn: sqlite3.Connection) -> dict[int, set[int]]:
    """Per file, the files that re-export ``*`` from it (a few dozen thunks in a large tree: read whole)."""
    out: dict[int, set[int]] = defaultdict(set)
    for target, holder in conn.execute(
            "SELECT i.resolved_file_id, t.file_id FROM st_export_thunk t JOIN st_import i "
            "ON i.import_uid = t.import_uid WHERE i.resolved_file_id IS NOT NULL"):
        out[target].add(holder)
    return out


def refresh(conn: sqlite3.Connection, chaser: Chaser, file_ids: set[int], epoch: int,
            upstream: set[int] | None) -> set[int]:
    """Resolve the export entries of ``file_ids`` through imports; returns the files whose surface hash changed."""
    changed: set[int] = set()
    entry_updates: list[tuple[str | None, int]] = []
    thunk_updates: list[tuple[int | None, int]] = []
    surface_updates: list[tuple[str, int, int]] = []
    for part in _chunks(sorted(file_ids)):
        chaser.prefetch(part)
        marks = _marks(len(part))
        surfaces = {f: (s, h) for s, f, h in conn.execute(
            f"SELECT surface_id, file_id, surface_hash FROM st_export_surface WHERE file_id IN ({marks})", part)}
        entries: dict[int, list[tuple[int, str, str | None, str | None, str | None]]] = defaultdict(list)
        for file_id, *row in conn.execute(
                f"SELECT file_id, entry_id, exported_name, def_uid, local_def_uid, import_uid FROM st_export_entry "
                f"WHERE file_id IN ({marks}) ORDER BY file_id, exported_name, entry_id", part):
            entries[file_id].append(tuple(row))
        thunks: dict[int, list[tuple[int, str, int | None]]] = defaultdict(list)
        for file_id, thunk_id, import_uid, target in conn.execute(
                f"SELECT file_id, thunk_id, import_uid, target_file_id FROM st_export_thunk WHERE file_id IN ({marks}) "
                "ORDER BY file_id, thunk_id", part):
            thunks[file_id].append((thunk_id, import_uid, target))
        for file_id, (surface_id, old_hash) in surfaces.items():
            digest = hashlib.sha256()
            for entry_id, name, current, local_def, import_uid in entries[file_id]:
                if upstream is not None and (local_def is not None or import_uid is None
                                             or not _from(chaser, import_uid, upstream)):
                    resolved = current
                else:
                    resolved = local_def or (chaser.via(import_uid) if import_uid else None)
                digest.update(f"{name}\0{resolved}\n".encode())
                if resolved != current:
                    entry_updates.append((resolved, entry_id))
            for thunk_id, import_uid, target in thunks[file_id]:
                resolved_target = chaser.import_row(import_uid).resolved_file_id
                digest.update(f"*\0{resolved_target}\n".encode())
                if resolved_target != target:
                    thunk_updates.append((resolved_target, thunk_id))
            new_hash = digest.hexdigest()[:16]
            if new_hash != old_hash:
                surface_updates.append((new_hash, epoch, surface_id))
                changed.add(file_id)
    conn.executemany("UPDATE st_export_entry SET def_uid = ? WHERE entry_id = ?", entry_updates)
    conn.executemany("UPDATE st_export_thunk SET target_file_id = ? WHERE thunk_id = ?", thunk_updates)
    conn.executemany("UPDATE st_export_surface SET surface_hash = ?, epoch_id = ? WHERE surface_id = ?",
                     surface_updates)
    return changed


def relink_refs(conn: sqlite3.Connection, chaser: Chaser, file_ids: set[int], *, upstream: set[int] | None,
                fresh: set[int]) -> tuple[int, set[tuple[str, str]]]:
    """Tiers of refs through imports in ``file_ids``: STRONG when the chain reaches a definition, else the
    same-file tier. Returns (refs changed, member (token, shape) pairs whose tier moved outside ``fresh``)."""
    chaser.prefetch(file_ids)
    rows = _through_imports(conn, file_ids)
    if upstream is not None:
        rows = (row for row in rows if _from(chaser, row[5], upstream))
    return retier(conn, chaser, rows, fresh)


def retier(conn: sqlite3.Connection, chaser: Chaser, rows: Iterable[tuple[Any, ...]],
           fresh: set[int]) -> tuple[int, set[tuple[str, str]]]:
    """Decide each ref through an import (rows as ``THROUGH_COLUMNS`` reads them): STRONG to the definition the
    chase finds, else its same-file tier; write the refs whose tier or target moved. Returns (refs changed,
    member (token, shape) pairs whose refs outside ``fresh`` entered or left ANCHORED).

    Tiers are read and written as their stored codes: the generated text columns build a string per row, which
    on a cold index of 133k files (6.2M refs through imports) cost 5.5 s of the 13 s this query took. The
    certainty follows from the tier, so comparing tiers compares it too."""
    updates: list[tuple[int, str | None, int]] = []
    moved: set[tuple[str, str]] = set()
    strong, anchored = schema.TIER_CODE[STRONG], schema.TIER_CODE[ANCHORED]
    # Many refs share an import and a name (every ``models.CharField`` of a file): chase each pair once.
    chased: dict[tuple[str, str | None], str | None] = {}
    for file_id, ref_id, member, token, shape, via, local_tier, local_target, tier, target in rows:
        key = (via, token if member else None)
        if key in chased:
            found = chased[key]
        else:
            found = chased[key] = chaser.member(via, token) if member else chaser.via(via)
        new_tier, new_target = (strong, found) if found is not None else (local_tier, local_target)
        if new_tier != tier or new_target != target:
            updates.append((new_tier, new_target, ref_id))
            # Anchor groups hold ANCHORED member refs only: a move between other tiers leaves them alone.
            if member and file_id not in fresh and anchored in (tier, new_tier) and tier != new_tier:
                moved.add((token, shape or ""))
    schema.update_link_codes(conn, updates)
    return len(updates), moved


#: What ``retier`` reads of a ref through an import, in its order (tiers as stored codes).
THROUGH_COLUMNS = ("file_id, ref_id, is_member, token_text, receiver_shape, via_import_uid, local_tier_code, "
                   "local_target_uid, tier_code, target_uid")
_THROUGH_IMPORTS = f"SELECT {THROUGH_COLUMNS} FROM st_ref WHERE via_import_uid IS NOT NULL"


def _through_imports(conn: sqlite3.Connection, file_ids: set[int]) -> Iterator[tuple[Any, ...]]:
    """The refs of ``file_ids`` that go through an import, in no particular order (each is decided on its own)."""
    if covers_most(conn, file_ids):
        yield from (row for row in conn.execute(_THROUGH_IMPORTS) if row[0] in file_ids)
        return
    for part in _chunks(sorted(file_ids)):
        yield from conn.execute(f"{_THROUGH_IMPORTS} AND file_id IN ({_marks(len(part))})", part)
