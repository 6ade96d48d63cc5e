"""The watcher starts after a first build (whose own index writes would flood it) and misses nothing meanwhile."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.facts_api import FileChange
from codeplane.index.reconcile import RACY_NS
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


def test_a_walk_now_names_every_path_the_index_disagrees_with_and_nothing_else(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n", "b.py": "b = 2\n", "sub/c.py": "c = 3\n"})
    # Not "racy" (changed within the timestamps' granularity, which a walk names too): older than the window. Setting
    # an old mtime no longer does it, as it moves ctime, which counts (``universe.stamp_ns``).
    time.sleep(RACY_NS / 1e9 + 0.2)
    with running_index(repo) as service:
        pipeline = service._pipeline
        assert pipeline.differing_now() == set()
        (repo / "a.py").write_text("a = 10  # longer\n")
        (repo / "sub" / "c.py").unlink()
        (repo / "new.py").write_text("n = 4\n")
        assert pipeline.differing_now() == {"a.py", "sub/c.py", "new.py"}
        assert [h.path for h in all_hits(service, "a")] == ["a.py"]  # nothing applied: a walk, not a reconcile


def test_what_changed_before_the_watches_were_in_place_is_found_when_they_are(tmp_path: Path) -> None:
    """A change made after the startup reconcile walked and before the watcher was live: no watch saw it, so the
    watcher's "live" starts a walk that marks it pending. Played here with the watcher process frozen (it sees
    nothing, yet the index does not fall back to polling) and "live" called by hand."""
    repo = make_repo(tmp_path / "repo", {"a.py": "old_word = 1\n", "b.py": "other = 2\n"})
    with running_index(repo, watch=True) as service:
        watcher = service._watcher
        assert watcher is not None and watcher.wait_live(15) and watcher.pid is not None
        pid = watcher.pid
        os.kill(pid, signal.SIGSTOP)
        try:
            (repo / "a.py").write_text("new_word = 1  # unseen by any watch\n")
            service._on_watch_live()
            deadline = time.monotonic() + 15
            while not all_hits(service, "new_word"):
                assert time.monotonic() < deadline, "the change made before the watches were live was never indexed"
                time.sleep(0.05)
            assert all_hits(service, "old_word") == []
        finally:
            os.kill(pid, signal.SIGCONT)
