"""A damaged ledger is evidence: moved aside, never deleted or silently replaced (issue 24).

When ``ledger.db`` fails its integrity check at open, :func:`quarantine` renames it (with SQLite's side
files) to ``ledger.corrupt-<UTC time>.db`` and writes ``ledger.corrupt-<UTC time>.json`` beside it: the
file's SHA-256, size, the reason and when. The new ledger's first row (``op_type = ledger.quarantine``)
records the same facts, so the new chain vouches for what happened to the old one. ``cpl doctor`` fails
for every quarantined ledger until the user acknowledges it (``cpl doctor --ack-quarantine``), which only
adds ``acknowledged_at`` to the JSON record; the quarantined file itself is never touched again.

A *deleted* ledger cannot be moved aside, but it is noticed: ``ledger_identity.py`` keeps the ledger's id in
``ledger.id``, and a start that finds that id without its ledger writes ``ledger.missing-<UTC time>.json``
(reported and acknowledged the same way) and makes the new chain's first row say so.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from codeplane.core.atomic import write_atomic
from codeplane.core.clock import iso_utc, now_ms
from codeplane.core.stores import SIDE_SUFFIXES

QUARANTINE_OP = "ledger.quarantine"
_PREFIX = "ledger.corrupt-"
_MISSING_PREFIX = "ledger.missing-"


@dataclass(frozen=True)
class Quarantined:
    """One ledger moved aside: where it went and what it was."""

    file: str
    sha256: str
    size: int
    reason: str
    quarantined_at: str
    acknowledged_at: str | None = None
    #: The ledger was not damaged but gone (deleted): ``file`` is this JSON record, there is no hash.
    missing: bool = False

    def to_detail(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "acknowledged_at"}


def quarantine(path: Path, reason: str) -> Quarantined:
    """Move ``path`` (and its ``-wal``/``-shm``) aside and record its SHA-256. All or nothing: raises ``OSError`` if
    the record cannot be written or the move is impossible, and then the ledger stays where it is, no record beside
    it, and the caller must not create a new one. The record is written first: a full disk refused it after the
    file had moved, and the file then stood there unexplained ("record missing") for good."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{_PREFIX}{stamp}.db")
    n = 2
    while target.exists() or _record_path(target).exists():
        target = path.with_name(f"{_PREFIX}{stamp}-{n}.db")
        n += 1
    digest, size = _sha256(path)
    record = Quarantined(target.name, digest, size, reason, iso_utc(now_ms()))
    # Not listed by ``quarantined`` until its file is there (it globs the ``.db``); a rename needs no free space.
    write_atomic(_record_path(target), (json.dumps(asdict(record), indent=2, sort_keys=True) + "\n").encode())
    moved: list[tuple[Path, Path]] = []
    try:
        for suffix in ("", *SIDE_SUFFIXES):
            source = Path(f"{path}{suffix}")
            if not suffix or source.exists():
                os.replace(source, Path(f"{target}{suffix}"))
                moved.append((source, Path(f"{target}{suffix}")))
    except OSError:
        for source, destination in reversed(moved):
            with contextlib.suppress(OSError):
                os.replace(destination, source)
        _record_path(target).unlink(missing_ok=True)
        raise
    return record


def restore(path: Path, record: Quarantined) -> None:
    """Undo :func:`quarantine` for an open that moved ``path`` aside and then failed before its new chain could record
    it (a full disk): the file and its side files back in place, the record deleted, as if nothing had happened (the
    next start moves it aside again and records it). Raises ``OSError`` when it cannot: then the file stays
    quarantined, with its record, and ``cpl doctor`` reports it."""
    target = path.with_name(record.file)
    for suffix in SIDE_SUFFIXES:
        side = Path(f"{target}{suffix}")
        if side.exists():
            os.replace(side, Path(f"{path}{suffix}"))
    os.replace(target, path)
    _record_path(target).unlink(missing_ok=True)


def quarantined(state_dir: Path) -> list[tuple[Path, Quarantined]]:
    """Every quarantined ledger under ``state_dir``, oldest first, with its record (rebuilt from the file
    when the JSON record is missing or unreadable)."""
    found: list[tuple[Path, Quarantined]] = []
    for path in sorted([*state_dir.glob(f"{_PREFIX}*.db"), *state_dir.glob(f"{_MISSING_PREFIX}*.json")]):
        found.append((path, _load(path)))
    return found


def record_missing(state_dir: Path, ledger_id: str, created_at: str) -> Quarantined:
    """Record that the ledger ``ledger_id`` (``ledger.id``) is gone: ``ledger.missing-<UTC time>.json``."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = state_dir / f"{_MISSING_PREFIX}{stamp}.json"
    n = 2
    while target.exists():
        target = state_dir / f"{_MISSING_PREFIX}{stamp}-{n}.json"
        n += 1
    record = Quarantined(target.name, "", 0, f"ledger.db (ledger {ledger_id}, created {created_at}) was deleted",
                         iso_utc(now_ms()), missing=True)
    write_atomic(target, (json.dumps(asdict(record), indent=2, sort_keys=True) + "\n").encode())
    return record


def acknowledge(path: Path) -> Quarantined:
    """Mark one quarantined ledger as seen by the user; the file itself is left as it is."""
    record = _load(path)
    if record.acknowledged_at is None:
        record = Quarantined(**{**asdict(record), "acknowledged_at": iso_utc(now_ms())})
        write_atomic(_record_path(path), (json.dumps(asdict(record), indent=2, sort_keys=True) + "\n").encode())
    return record


def current_sha256(path: Path) -> str:
    return _sha256(path)[0]


def _load(path: Path) -> Quarantined:
    try:
        data = json.loads(_record_path(path).read_text(encoding="utf-8"))
        return Quarantined(**{k: data[k] for k in Quarantined.__dataclass_fields__ if k in data})
    except (OSError, ValueError, TypeError):
        digest, size = _sha256(path)
        return Quarantined(path.name, digest, size, "record missing (recomputed from the file)", "unknown")


def _record_path(db: Path) -> Path:
    return db.with_suffix(".json")


def _sha256(path: Path) -> tuple[str, int]:
    """The file's SHA-256 and size; a directory standing where ``ledger.db`` belongs (damage: it answered 9001 at
    every ``cpl up``) holds no chain and has neither: ``("", 0)``."""
    if path.is_dir() and not path.is_symlink():
        return "", 0
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size
