"""Per-target cost history (§11.7): recent durations in SQLite, rolling median as the packing weight.

Stored in ``.codeplane/test_costs.db`` (not the index: test timing is not repository truth and must survive
index rebuilds). Keeps the last ``WINDOW`` durations per (runner, target).
"""

from __future__ import annotations

import sqlite3
import statistics
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from codeplane.core.clock import now_ms
from codeplane.core.logging import get_logger
from codeplane.core.stores import open_derived_sqlite

WINDOW = 9
_SCHEMA = """
CREATE TABLE IF NOT EXISTS target_durations (
    runner TEXT NOT NULL,
    target_id TEXT NOT NULL,
    duration_s REAL NOT NULL,
    recorded_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS target_durations_key ON target_durations (runner, target_id, recorded_ms);
"""

log = get_logger(__name__)


def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(_SCHEMA)


class CostHistory:
    """Thread-safe; one connection guarded by a lock (writes happen once per finished run)."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        # Derived data: a damaged file is dropped and started empty, never a failed boot (core/stores.py).
        self._db, self.recovery = open_derived_sqlite(path, _setup)
        #: Bumped by every ``record``: cached cost estimates are stale after it.
        self.generation = 0

    def medians(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], float]:
        """Rolling median duration (seconds) for each known (runner, target_id)."""
        wanted = set(keys)
        if not wanted:
            return {}
        samples: dict[tuple[str, str], list[float]] = {}
        with self._lock:
            try:
                rows = self._db.execute(
                    "SELECT runner, target_id, duration_s FROM target_durations ORDER BY recorded_ms DESC").fetchall()
            except sqlite3.Error as exc:  # damaged while we run: pack without history rather than fail the run
                log.warning("test cost history unreadable", reason=str(exc))
                rows = []
        for runner, target_id, duration in rows:
            key = (runner, target_id)
            if key in wanted:
                bucket = samples.setdefault(key, [])
                if len(bucket) < WINDOW:
                    bucket.append(float(duration))
        return {key: statistics.median(values) for key, values in samples.items()}

    def record(self, durations: Mapping[tuple[str, str], float]) -> None:
        """Append one duration per target and trim each history to the window."""
        if not durations:
            return
        stamp = now_ms()
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    "INSERT INTO target_durations (runner, target_id, duration_s, recorded_ms) VALUES (?, ?, ?, ?)",
                    [(r, t, max(d, 0.0), stamp) for (r, t), d in sorted(durations.items())])
                for runner, target_id in durations:
                    self._db.execute(
                        "DELETE FROM target_durations WHERE runner = ? AND target_id = ? AND rowid NOT IN ("
                        " SELECT rowid FROM target_durations WHERE runner = ? AND target_id = ?"
                        " ORDER BY recorded_ms DESC, rowid DESC LIMIT ?)",
                        (runner, target_id, runner, target_id, WINDOW))
                self._db.execute("COMMIT")
                self.generation += 1
            except sqlite3.Error as exc:
                # Costs only order the next run's packing: a full disk or a damaged file loses history, not runs.
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                log.warning("test durations not recorded", reason=str(exc))
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self._db.close()
