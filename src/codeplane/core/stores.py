"""Opening CodePlane's SQLite stores when they may be damaged (issue 24; ARCHITECTURE "damage policies").

A *derived* store (``test_costs.db``, ``test_runs.db``; ``index.db`` has its own rebuild in ``index/store.py``)
holds nothing that cannot be recomputed, so damage never fails a boot: :func:`open_derived_sqlite` checks
the file cheaply (``PRAGMA quick_check``), drops a damaged one and starts it empty, and when even that is
impossible (a read-only or full file system) keeps the store in memory until the next start. Each outcome
is a :class:`Recovery` the server logs and shows in ``/status``. Evidence (``ledger.db``) is never dropped:
``tasks/quarantine.py`` moves it aside instead.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.errors import CodePlaneError
from codeplane.core.logging import get_logger
from codeplane.core.storage import probe_write, storage_code, storage_error

log = get_logger(__name__)

#: Files SQLite keeps beside a database.
SIDE_SUFFIXES = ("-wal", "-shm", "-journal")


@dataclass(frozen=True)
class Recovery:
    """What opening a damaged store did. ``action``: ``rebuilt`` (dropped, started empty), ``in_memory``
    (could not be recreated on disk; nothing persists until restart) or ``quarantined`` (evidence moved
    aside, see ``tasks/quarantine.py``)."""

    store: str
    action: str
    reason: str

    def line(self) -> str:
        return f"{self.store} {self.action}: {self.reason}"


def sqlite_problem(path: Path, *, read_only: bool = False) -> str | None:
    """Why ``path`` is not a healthy SQLite database, or ``None``. Never creates or changes the file. Raises the
    storage error (5011/5012) when it cannot be opened because its directory cannot be written: no damage."""
    if not path.exists():
        return None
    if not path.is_file():
        return "not a regular file"
    if path.stat().st_size == 0 and not Path(f"{path}-wal").exists():
        return "empty file (0 bytes)"
    uri = f"{path.resolve().as_uri()}?mode={'ro' if read_only else 'rw'}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=5)
    except sqlite3.Error as exc:
        _raise_if_unwritable(path, exc)
        return f"cannot open: {exc}"
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.Error as exc:
        _raise_if_unwritable(path, exc)
        return f"integrity check failed: {exc}"
    finally:
        conn.close()
    if rows != [("ok",)]:
        return "integrity check failed: " + "; ".join(str(r[0]) for r in rows[:3])
    return None


def _raise_if_unwritable(path: Path, exc: sqlite3.Error) -> None:
    """SQLite says "unable to open database file" both for a damaged file and for a directory it may not write its
    side files in (permissions, ``chattr +i``, a read-only mount): the latter is no damage, and must not lead a
    repair to drop the store or quarantine the ledger. Raises the storage error (5011/5012) naming the file."""
    blocked = probe_write(path.parent)
    if blocked is not None:
        mapped = storage_error(blocked, doing=f"opening {path.name}", path=path,
                               outcome="the file was left as it is (this is no damage: fix the permissions)")
        if mapped is not None:
            raise mapped from exc


def drop_store(path: Path) -> None:
    """Remove a store and SQLite's side files; a directory in its place too."""
    for candidate in (path, *(Path(f"{path}{s}") for s in SIDE_SUFFIXES)):
        if candidate.is_dir() and not candidate.is_symlink():
            shutil.rmtree(candidate)
        else:
            candidate.unlink(missing_ok=True)


def open_derived_sqlite(path: Path, setup: Callable[[sqlite3.Connection], None], *,
                        name: str | None = None) -> tuple[sqlite3.Connection, Recovery | None]:
    """A connection to the derived store at ``path`` with ``setup`` (pragmas, schema) applied.

    Damage -> dropped and recreated empty (``rebuilt``); a store that cannot be (re)created on disk ->
    an in-memory database (``in_memory``). Never raises for either; the recovery is logged.
    """
    label = name or path.name
    reason: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        problem = sqlite_problem(path)
        if problem is None:
            return _connect(path, setup), None
        reason = problem
    except CodePlaneError as exc:  # not writable here: no damage to drop
        return _in_memory(label, f"cannot be written: {exc.message}", setup)
    except (sqlite3.Error, OSError) as exc:
        if storage_code(exc) is not None:
            return _in_memory(label, f"cannot be written: {exc}", setup)
        reason = f"{type(exc).__name__}: {exc}"
    log.warning("derived store is damaged; dropping and rebuilding it", store=label, reason=reason)
    try:
        drop_store(path)
        return _connect(path, setup), Recovery(label, "rebuilt", reason)
    except (sqlite3.Error, OSError) as exc:
        return _in_memory(label, f"{reason}; then it could not be recreated: {exc}", setup)


def _connect(path: Path, setup: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
    conn = sqlite3.connect(os.fspath(path), check_same_thread=False, isolation_level=None)
    try:
        setup(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _in_memory(label: str, reason: str, setup: Callable[[sqlite3.Connection], None]
               ) -> tuple[sqlite3.Connection, Recovery]:
    log.warning("derived store kept in memory until restart", store=label, reason=reason)
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    setup(conn)
    return conn, Recovery(label, "in_memory", reason)
