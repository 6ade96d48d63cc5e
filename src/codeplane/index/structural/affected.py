"""The incremental affected set of a relink: which refs of *unchanged* files a batch can re-tier.

A ref through an import is decided by the chase from that import (``chase.py``): the import's resolution,
then the export entries and thunks of the files along the chain. In a file the batch did not rewrite, the
ref itself and its import are as they were, so its tier can only move when
- the import's resolution moved (its key is now held by another file, or by none), or
- the import resolves (directly or through its alternative key) into an *upstream* file: one the batch
  rewrote or deleted, or whose export surface changed (``linking.py`` grows that set wave by wave).

Every other ref of those files is left alone. Fetching only these refs (``st_ref_via``, ``st_import_resolved``
indexes) instead of every ref through an import of every file touched by the waves keeps a reconcile of a
few hundred files — say a clone ahead of an index artifact — proportional to what it changed, not to how
widely the changed modules are imported.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

from codeplane.index.structural.chase import Chaser
from codeplane.index.structural.store import chunked, marks
from codeplane.index.structural.surfaces import THROUGH_COLUMNS, retier

_UID_CHUNK = 500


def imports_into(conn: sqlite3.Connection, holders: set[int], targets: set[int]) -> set[str]:
    """Imports held by ``holders`` that resolve, directly or through their alternative key, into ``targets``."""
    found: set[str] = set()
    if not holders or not targets:
        return found
    for part in chunked(sorted(targets)):
        q = marks(len(part))
        for uid, file_id in conn.execute(
                f"SELECT import_uid, file_id FROM st_import WHERE resolved_file_id IN ({q}) "
                f"UNION ALL SELECT import_uid, file_id FROM st_import WHERE resolved_alt_file_id IN ({q})",
                [*part, *part]):
            if file_id in holders:
                found.add(uid)
    return found


#: A ref through an import, with what deciding its tier needs (as ``surfaces.relink_refs`` reads it).
_THROUGH = f"SELECT {THROUGH_COLUMNS} FROM st_ref WHERE via_import_uid IN ({{}})"


def relink_unchanged(conn: sqlite3.Connection, chaser: Chaser, files: set[int], *, moved_imports: set[str],
                     upstream: set[int], fresh: set[int]) -> tuple[int, set[tuple[str, str]]]:
    """Re-tier the refs of ``files`` (none of them rewritten by the batch) that go through an import whose
    resolution moved (``moved_imports``) or that resolves into ``upstream``, deciding each as
    ``surfaces.relink_refs`` does: STRONG to the definition the chase finds, else the ref's same-file tier.
    Returns (refs changed, member (token, shape) pairs whose tier moved)."""
    if not files:
        return 0, set()
    uids = sorted(moved_imports | imports_into(conn, files, upstream))
    chaser.prefetch_uids(uids)

    def through() -> Iterator[tuple[Any, ...]]:
        for start in range(0, len(uids), _UID_CHUNK):
            part = uids[start:start + _UID_CHUNK]
            # A rewritten file's imports are skipped: its refs were decided with the file.
            yield from (row for row in conn.execute(_THROUGH.format(marks(len(part))), part) if row[0] in files)

    return retier(conn, chaser, through(), fresh)
