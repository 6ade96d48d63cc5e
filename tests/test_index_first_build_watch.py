"""The watcher starts after a first build (whose own index writes would flood it) and misses nothing meanwhile."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.facts_api import FileChange
from codeplane.index.service import IndexService
from tests.builders import make_repo
from tests.index_helpers import all_hits, running_index


class EditWhileBuilding:
    """An indexer that, at the end of the first epoch, rewrites a file on disk: an edit made while the first build
    runs, after its walk saw the old content."""

    name = "edit_while_building"
    schema_version = 1

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text, self.done = path, text, False

    def create_schema(self, conn: sqlite3.Connection) -> None:
        pass

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        pass

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        pass

    def begin_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        pass

    def finish_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        if not self.done:
            self.done = True
            self.path.write_text(self.text)


def test_an_edit_made_while_the_first_build_runs_is_indexed_and_the_watcher_runs_at_ready(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "old_word = 1\n", "b.py": "other = 2\n"})
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=True))
    service.register_indexer(EditWhileBuilding(repo / "a.py", "fresh_word = 1  # edited\n"))
    service.start()
    try:
        assert service.wait_ready(60)
        assert service.watcher_state == "running"
        assert [h.path for h in all_hits(service, "fresh_word")] == ["a.py"]  # waits for the catch-up
        assert all_hits(service, "old_word") == []
    finally:
        service.stop()


def test_a_warm_start_watches_from_the_start(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "word = 1\n"})
    with running_index(repo):
        pass
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=True))
    service.start()
    try:
        assert service.watcher_state != "starting"  # not deferred: only a first build defers it
        assert service.wait_ready(60)
        assert service.watcher_state == "running"
    finally:
        service.stop()
