"""Stopping the index while an epoch is being written rolls that epoch back instead of waiting for it (§7.6).

A first build of a big tree is one transaction lasting minutes; ``cpl up``'s Ctrl+C used to wait for all of it.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.epochs import EpochInterrupted
from codeplane.index.facts_api import FileChange
from codeplane.index.service import IndexService
from tests.builders import make_repo
from tests.index_helpers import all_hits, running_index

#: A statement that runs for minutes unless something aborts it.
_ENDLESS = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 4000000000) "
            "SELECT count(*) FROM c")


class SlowFinish:
    """An indexer whose end-of-epoch step is one very long SQL statement on the writer's connection."""

    name = "slow_finish"
    schema_version = 1

    def __init__(self) -> None:
        self.entered = threading.Event()

    def create_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS slow_finished (epoch INTEGER)")

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS slow_finished")

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        pass

    def begin_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        pass

    def finish_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        self.entered.set()
        conn.execute(_ENDLESS).fetchone()
        conn.execute("INSERT INTO slow_finished VALUES (?)", (epoch,))


def test_a_stop_during_a_first_build_rolls_it_back_and_the_next_start_builds_it(tmp_path: Path) -> None:
    files = {f"pkg/m{n:02}.py": f"def shared_name_{n}():\n    return {n}\n" for n in range(30)}
    repo = make_repo(tmp_path / "repo", files)
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    slow = SlowFinish()
    service.register_indexer(slow)
    service.start()
    assert slow.entered.wait(60), "the first build never reached its end-of-epoch step"
    began = time.monotonic()
    service.stop()
    # Without the interrupt the stop waits for the statement (minutes), then for the writer lock.
    assert time.monotonic() - began < 20
    with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 0  # nothing of the epoch published
        assert conn.execute("SELECT count(*) FROM slow_finished").fetchone()[0] == 0
    with running_index(repo) as index:  # the next start builds the whole tree, lexical and structural
        assert index.status()["file_count"] == len(files)
        assert {h.path for h in all_hits(index, "shared_name_7")} == {"pkg/m07.py"}


def test_an_interrupted_publisher_refuses_the_next_epoch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    pipeline = service._pipeline
    pipeline.open()
    try:
        pipeline.interrupt()
        with pytest.raises(EpochInterrupted):
            pipeline.reconcile("test")
        assert pipeline.store.epoch() == 0 and pipeline.store.all_records() == {}
    finally:
        pipeline.close()
