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


class CostHistory:
    """Thread-safe; one connection guarded by a lock (writes happen once per finished run)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        #: Bumped by every ``record``: cached cost estimates are stale after it.
        self.generation = 0

    def medians(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], float]:
        """Rolling median duration (seconds) for each known (runner, target_id)."""
        wanted = set(keys)
        if not wanted:
            return {}
        samples: dict[tuple[str, str], list[float]] = {}
        with self._lock:
            rows = self._db.execute(
                "SELECT runner, target_id, duration_s FROM target_durations ORDER BY recorded_ms DESC").fetchall()
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
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self._db.close()
