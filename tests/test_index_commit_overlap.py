"""A big epoch commits Tantivy while the indexers finish it; a failure there still leaves SQLite and Tantivy in step."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.epochs import CHUNK
from codeplane.index.facts_api import FileChange
from codeplane.index.service import IndexService
from tests.builders import make_repo
from tests.index_helpers import all_hits, running_index


class FailingFinish:
    """An indexer whose end-of-epoch step fails (once), after Tantivy may already have committed."""

    name = "failing_finish"
    schema_version = 1

    def __init__(self) -> None:
        self.fail = True

    def create_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS finished (epoch INTEGER)")

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS finished")

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        pass

    def begin_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        pass

    def finish_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        if self.fail:
            self.fail = False
            raise RuntimeError("finish failed")
        conn.execute("INSERT INTO finished VALUES (?)", (epoch,))


def test_a_failed_finish_after_the_overlapped_commit_is_repaired(tmp_path: Path) -> None:
    count = CHUNK + 5
    repo = make_repo(tmp_path / "repo", {f"m{n:03}.py": f"shared_word = {n}\n" for n in range(count)})
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    service.register_indexer(FailingFinish())
    with pytest.raises(RuntimeError, match="finish failed"):
        service.build()
    with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 0  # the epoch rolled back
    with running_index(repo) as index:  # Tantivy went ahead; the in-flight marker brings it back in step
        hits = all_hits(index, "shared_word")
        assert len(hits) == count and len({h.path for h in hits}) == count
        assert index.status()["file_count"] == count


def test_a_big_epoch_gives_the_wal_space_back(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {f"m{n:03}.py": f"word_{n} = {n}\n" * 50 for n in range(CHUNK + 5)})
    with running_index(repo):  # the writer connection stays open (closing it would remove the WAL anyway)
        wal = repo / ".codeplane" / "index.db-wal"
        assert not wal.exists() or wal.stat().st_size == 0
