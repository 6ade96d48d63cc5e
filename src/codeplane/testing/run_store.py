"""Test runs on disk (D10), so ``get_test_run`` answers across server restarts.

``.codeplane/test_runs.db`` holds each run's snapshot as JSON: written when the run starts and again when it
ends, the newest ``keep`` of them. A run that a previous server process never finished (it was killed) is
answered as ``failed``, with a message saying so, ending at its last heartbeat (:meth:`RunStore.beat`, every
few seconds while it runs): the last moment its server was known alive, not the restart, so its duration does
not count the server's downtime. Reading one back gives a :class:`StoredRun`, which answers
like a finished :class:`~codeplane.testing.runs.RunRecord`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from pydantic import TypeAdapter

from codeplane.core.calls import FailureReport
from codeplane.core.clock import now_ms
from codeplane.core.logging import get_logger
from codeplane.core.storage import storage_code
from codeplane.core.stores import open_derived_sqlite
from codeplane.testing.model import IN_FLIGHT_OUTCOMES, TERMINAL_STATES, RunSnapshot
from codeplane.testing.runs import RunRecord

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    started_ms INTEGER NOT NULL,
    finished INTEGER NOT NULL,
    snapshot BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS beats (
    run_id TEXT PRIMARY KEY,
    at_ms INTEGER NOT NULL
);
"""
_CODEC: TypeAdapter[RunSnapshot] = TypeAdapter(RunSnapshot)
log = get_logger(__name__)
INTERRUPTED = "the server stopped before this run finished; its processes were not waited for"
#: How often a running run's heartbeat is stored: an interrupted run's end is at most this much early.
BEAT_SEC = 2.0


class StoredRun:
    """A finished run read back from disk: the same answers as a finished ``RunRecord``."""

    def __init__(self, snapshot: RunSnapshot) -> None:
        self.run_id = snapshot.run_id
        self._snapshot = snapshot
        self.cancel_requested = threading.Event()

    @property
    def finished(self) -> bool:
        return True

    @property
    def version(self) -> int:
        return 0

    def wait(self, seen_version: int, timeout: float) -> int:
        return 0

    def take_failure_report(self) -> FailureReport | None:
        return None  # delivered (and counted against the task) by the process that ran it, if anyone asked

    def snapshot(self) -> RunSnapshot:
        return self._snapshot


#: What ``get_test_run`` reads: a run of this process, or one read back from disk.
RunHandle = RunRecord | StoredRun


class RunStore:
    """Thread-safe; one connection guarded by a lock (two writes per run)."""

    def __init__(self, path: Path, keep: int) -> None:
        self._keep = keep
        self._lock = threading.Lock()
        # Derived data: a damaged file is dropped and started empty, never a failed boot (core/stores.py).
        self._db, self.recovery = open_derived_sqlite(path, _setup)
        self._interrupt_unfinished()

    def _interrupt_unfinished(self) -> None:
        """Runs a previous process was still running: that process is gone, so they end here, failed."""
        rows = self._db.execute("SELECT snapshot, (SELECT at_ms FROM beats WHERE beats.run_id = runs.run_id) "
                                "FROM runs WHERE finished = 0").fetchall()
        for blob, beat in rows:
            snapshot = _decoded(blob)
            if snapshot is not None:
                # A target it had not run by then never will: not "queued"/"running" in an ended run.
                targets = tuple(replace(t, outcome="not_run") if t.outcome in IN_FLIGHT_OUTCOMES else t
                                for t in snapshot.targets)
                # Its last sign of life, not now: the server may have been down for minutes before this start.
                ended = max(snapshot.last_progress_at, snapshot.started_at, int(beat or 0))
                self.save(replace(snapshot, state="failed", progress_percentage=100.0, finished_at=ended,
                                  message=INTERRUPTED, targets=targets))

    @contextmanager
    def beating(self, run_id: str) -> Iterator[None]:
        """:meth:`beat` every :data:`BEAT_SEC` from a daemon thread while the block runs."""
        done = threading.Event()

        def loop() -> None:
            while not done.wait(BEAT_SEC):
                self.beat(run_id)

        thread = threading.Thread(target=loop, name=f"cpl-beat-{run_id}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def beat(self, run_id: str) -> None:
        """Note that the run ``run_id`` is still running now (its server is alive). Never raises."""
        with self._lock:
            try:
                self._db.execute("INSERT OR REPLACE INTO beats (run_id, at_ms) VALUES (?, ?)", (run_id, now_ms()))
            except sqlite3.Error as exc:  # only an interrupted run's end time is less precise
                log.debug("test run heartbeat not saved", run_id=run_id, reason=str(exc))

    def save(self, snapshot: RunSnapshot) -> None:
        """Store the snapshot. A failure to store (disk full, a file damaged while we run) is logged, not
        raised: the run goes on in memory; only its answer after a restart is lost."""
        blob = _CODEC.dump_json(snapshot)
        with self._lock:
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO runs (run_id, started_ms, finished, snapshot) VALUES (?, ?, ?, ?)",
                    (snapshot.run_id, snapshot.started_at, snapshot.state in TERMINAL_STATES, blob))
                self._db.execute("DELETE FROM runs WHERE run_id NOT IN "
                                 "(SELECT run_id FROM runs ORDER BY started_ms DESC, run_id DESC LIMIT ?)",
                                 (self._keep,))
                self._db.execute("DELETE FROM beats WHERE run_id NOT IN (SELECT run_id FROM runs WHERE finished = 0)")
            except sqlite3.Error as exc:
                kind = "storage" if storage_code(exc) is not None else "database"
                log.warning("test run not saved to disk", run_id=snapshot.run_id, failure=kind, reason=str(exc))

    def load(self, run_id: str) -> StoredRun | None:
        with self._lock:
            row = self._db.execute("SELECT snapshot FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        snapshot = _decoded(row[0]) if row else None
        return StoredRun(snapshot) if snapshot is not None else None

    def count(self) -> int:
        """Runs kept on disk (``get_test_run`` answers them across restarts)."""
        with self._lock:
            try:
                return int(self._db.execute("SELECT count(*) FROM runs").fetchone()[0])
            except sqlite3.Error:
                return 0

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(_SCHEMA)


def _decoded(blob: bytes) -> RunSnapshot | None:
    """A stored snapshot, or None when it no longer reads (written by a version with another shape)."""
    try:
        return _CODEC.validate_json(blob)
    except ValueError:
        return None
