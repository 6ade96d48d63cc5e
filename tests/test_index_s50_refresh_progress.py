"""A big refresh of paths (the watcher's view of a checkout) says how far it is: ``/status`` shows it and a query
that times out waiting for it names it; a write's few paths record nothing, and no refresh is ever taken for the
first build that ``cpl up`` follows (``current``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from codeplane.core.config import IndexConfig
from codeplane.core.errors import CodePlaneError
from codeplane.core.layout import RepoLayout
from codeplane.index import progress as build_progress
from codeplane.index.epochs import CHUNK
from codeplane.index.facts_api import FileChange
from codeplane.index.service import IndexService
from codeplane.index.service_models import LexicalRequest
from tests.builders import make_repo
from tests.index_helpers import running_index


class _Recorder:
    """A real fact indexer that notes what ``/status`` and ``cpl up``'s line would read while it is applied."""

    name = "progress_recorder"
    schema_version = 1

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.shown: list[dict[str, object] | None] = []
        self.full: list[object] = []

    def create_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS recorded (path TEXT PRIMARY KEY)")

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS recorded")

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        self.shown.append(build_progress.status(self.repo))
        self.full.append(build_progress.current(self.repo))


def _repo(tmp_path: Path, count: int) -> Path:
    return make_repo(tmp_path / "repo", {f"pkg/m{n:03}.py": f"value_{n} = {n}\n" for n in range(count)})


def test_a_checkouts_refresh_reports_files_done_by_chunk(tmp_path: Path) -> None:
    count = CHUNK * 2 + 10
    repo = _repo(tmp_path, count)
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    recorder = _Recorder(repo)
    service.register_indexer(recorder)
    service.build()
    paths = [f"pkg/m{n:03}.py" for n in range(count)]
    for path in paths:
        (repo / path).write_text("changed = 1\n")
    recorder.shown.clear()
    recorder.full.clear()
    service._pipeline.open()
    try:
        service._pipeline.refresh(paths, "watcher")
    finally:
        service._pipeline.close()
    shown = [s for s in recorder.shown if s is not None]
    # Each chunk is applied before it is counted: the first sees 0 of them done, the last all but one chunk.
    assert [(s["reason"], s["phase"], s["files_done"], s["files_total"]) for s in shown] == [
        ("watcher", "indexing", 0, count), ("watcher", "indexing", CHUNK, count),
        ("watcher", "indexing", 2 * CHUNK, count)]
    assert recorder.full == [None, None, None]  # never the first build ``cpl up`` follows
    assert build_progress.status(repo) is None


def test_a_few_paths_record_nothing(tmp_path: Path) -> None:
    repo = _repo(tmp_path, 3)
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    recorder = _Recorder(repo)
    service.register_indexer(recorder)
    service.build()
    (repo / "pkg" / "m000.py").write_text("changed = 1\n")
    recorder.shown.clear()
    service._pipeline.open()
    try:
        service._pipeline.refresh(["pkg/m000.py"], "write")
    finally:
        service._pipeline.close()
    assert recorder.shown == [None]


def test_a_query_timing_out_behind_a_refresh_says_how_far_it_is(tmp_path: Path) -> None:
    repo = _repo(tmp_path, 2)
    with running_index(repo, freshness_wait_ms=50) as index:
        tracker = build_progress.begin_refresh(repo, "watcher")
        tracker.update(256, 1000)
        try:
            with index._pipeline.lock:  # the refresh holds the writer: the marked path stays pending
                index._pipeline.mark_changed(["pkg/m000.py"])
                with pytest.raises(CodePlaneError) as caught:
                    index.search_lexical(LexicalRequest("value_0", "identifier"), limit=5)
                shown = index.status()["progress"]
        finally:
            build_progress.end_refresh(repo, tracker)
        assert caught.value.code == 3005 and caught.value.retryable
        assert "reindexing 256 of 1,000 changed files, watcher" in caught.value.message
        assert caught.value.details["progress"] == {
            "reason": "watcher", "phase": "indexing", "files_done": 256, "files_total": 1000, "percent": 17.1,
            "elapsed_sec": caught.value.details["progress"]["elapsed_sec"]}
        assert isinstance(shown, dict) and shown["files_done"] == 256 and shown["reason"] == "watcher"
        assert build_progress.status(repo) is None
