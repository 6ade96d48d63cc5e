"""Epoch mode (``base="epoch:N"``): definitions as the index recorded them at two epochs.

The index keeps, for every epoch, a DefSnapshotRecord of each file that epoch changed (§7.3.11,
``index/structural/snapshots.py``; retained since the index was built), so a file's state at N is its
latest snapshot at or before N. Snapshots hold kind, name, lexical path, signature hash, display name, line
span and uid, but no text: added, removed, renamed (same kind + signature in one container) and
signature changes are exact; a body change is reported only when the definition's length changed, with no
line count or preview. Files the structural tier does not parse leave no snapshot and are not listed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from codeplane.analysis.compare import Version
from codeplane.analysis.models import DefState
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.index.structural.queries import StructuralQueries

#: Changed files one epoch-mode diff considers (a bound, reported when hit).
MAX_FILES = 20_000


def check_range(conn: sqlite3.Connection, base: int, target: int, current: int) -> None:
    """1003 unless both epochs are within the retained snapshots and ``base <= target``."""
    span = StructuralQueries(conn).snapshot_epochs()
    first = span[0] if span else current
    for name, value in (("base", base), ("target", target)):
        if not first <= value <= current:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS,
                                 f"{name} epoch {value} is outside the retained epochs {first}..{current}",
                                 details={"field": name, "epoch": value, "first": first, "current": current})
    if base > target:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"base epoch {base} is after target epoch {target}",
                             details={"base": base, "target": target})


def changed_paths(conn: sqlite3.Connection, base: int, target: int) -> tuple[list[str], bool]:
    found = StructuralQueries(conn).list_snapshot_paths(base, target, limit=MAX_FILES + 1)
    return found[:MAX_FILES], len(found) > MAX_FILES


def version_at(conn: sqlite3.Connection, path: str, epoch: int) -> Version | None:
    if not StructuralQueries(conn).snapshot_exists(path, epoch):
        return None
    snaps = StructuralQueries(conn).list_def_snapshots(path, epoch, limit=100_000)
    by_path = {s.lexical_path: s.def_uid for s in snaps}
    defs: Sequence[DefState] = [DefState(
        s.def_uid, s.kind, s.name, s.lexical_path, s.start_line, 0, s.end_line, 0, s.signature_hash,
        s.display_name, by_path.get(s.lexical_path.rpartition(".")[0]) if "." in s.lexical_path else None)
        for s in snaps]
    return Version(path, defs, None)
