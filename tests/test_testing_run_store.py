"""``testing/run_store.py`` on its own: what it does with rows it cannot read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from codeplane.testing.run_store import RunStore


def test_a_stored_run_that_no_longer_reads_is_unknown_and_does_not_stop_the_start(tmp_path: Path) -> None:
    path = tmp_path / "test_runs.db"
    RunStore(path, keep=5).close()
    with sqlite3.connect(path) as db:  # e.g. written by a version whose snapshots had another shape
        db.execute("INSERT INTO runs (run_id, started_ms, finished, snapshot) VALUES ('tr_old', 1, 0, '{\"x\": 1}')")
    store = RunStore(path, keep=5)
    assert store.load("tr_old") is None and store.load("tr_never") is None
    store.close()
