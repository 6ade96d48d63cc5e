"""What ``/status`` says the index serves (QA39): during a checkout's reindex the index already claimed the new
HEAD (``head_drift`` 0, the metric operators alert on) while queries were still answered from the old tree; and
the reconcile right after a first build, which catches what changed while nothing watched, was called the
watcher's."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from pathlib import Path

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.facts_api import FileChange
from codeplane.index.service import IndexService
from tests.builders import make_repo
from tests.index_helpers import running_index


class _HeadRecorder:
    """A real fact indexer that notes the HEAD the index says it serves while an epoch is being written."""

    name = "head_recorder"
    schema_version = 1

    def __init__(self) -> None:
        self.service: IndexService | None = None
        self.seen: list[str | None] = []

    def create_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS head_recorder (x)")

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS head_recorder")

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        assert self.service is not None
        self.seen.append(self.service.indexed_head)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def test_the_served_head_moves_only_when_the_checkouts_epoch_is_published(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    old = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "-b", "other")
    (repo / "a.py").write_text("x = 2\n")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "other")
    new = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "-")
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    recorder = _HeadRecorder()
    recorder.service = service
    service.register_indexer(recorder)
    service._pipeline.open()
    try:
        service._pipeline.reconcile("startup")
        assert service.indexed_head == old
        _git(repo, "checkout", "-q", "other")
        recorder.seen.clear()
        service._pipeline.reconcile("watcher")
        assert recorder.seen == [old]  # while the checkout's epoch is written, the old tree is served
        assert service.indexed_head == new
    finally:
        service._pipeline.close()


def test_the_reconcile_after_a_first_build_is_called_a_catch_up(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    with running_index(repo, watch=True) as index:
        deadline = time.monotonic() + 30
        while (index.last_reconcile is None or index.last_reconcile.reason == "startup") \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert index.last_reconcile is not None and index.last_reconcile.reason == "catch-up", index.last_reconcile
