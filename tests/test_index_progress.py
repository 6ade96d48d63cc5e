"""A full reconcile says how far it is (``/status`` and ``cpl up`` read it), and says nothing once it ended."""

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


def test_a_cold_build_reports_files_done_by_chunk_then_finishing(tmp_path: Path) -> None:
    count = CHUNK * 2 + 10
    repo = make_repo(tmp_path / "repo", {f"pkg/m{n:03}.py": f"value_{n} = {n}\n" for n in range(count)})
    seen: list[dict[str, object] | None] = []
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    service.build(progress=lambda _done, _total: seen.append(build_progress.status(repo)))
    assert [(s["phase"], s["files_done"]) for s in seen if s] == [
        ("indexing", CHUNK), ("indexing", CHUNK * 2), ("finishing", count)]
    assert all(s and s["files_total"] == count and s["reason"] == "init" for s in seen)
    assert seen[-1] and 66.7 <= float(seen[-1]["percent"]) < 100.0  # type: ignore[arg-type]  # built is 100
    assert build_progress.status(repo) is None


def test_the_status_section_shows_progress_only_while_a_reconcile_runs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    with running_index(repo) as index:
        assert index.status()["progress"] is None
        tracker = build_progress.begin(repo, "startup")
        tracker.update(1, 4)
        shown = index.status()["progress"]
        build_progress.end(repo, tracker, finished=True)
        assert shown == {"reason": "startup", "phase": "indexing", "files_done": 1, "files_total": 4,
                         "percent": 16.7, "elapsed_sec": 0.0}
        assert index.status()["progress"] is None


def test_a_query_before_the_first_index_is_published_says_how_far_it_is(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    with running_index(repo, freshness_wait_ms=50) as index:
        index._ready.clear()  # as before the first reconcile is published
        tracker = build_progress.begin(repo, "startup")
        tracker.update(256, 1000)
        try:
            with pytest.raises(CodePlaneError) as caught:
                index.search_lexical(LexicalRequest("x", "identifier"), limit=5)
        finally:
            build_progress.end(repo, tracker, finished=True)
            index._ready.set()
        assert caught.value.code == 3004 and caught.value.retryable
        assert "256 of 1,000 files" in caught.value.message
        assert caught.value.details["progress"]["percent"] == 17.1


class _LineCounter:
    """A real (tiny) fact indexer whose schema version the test bumps, as an upgrade of CodePlane does."""

    name = "line_counter"

    def __init__(self, schema_version: int) -> None:
        self.schema_version = schema_version

    def create_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS line_counts (path TEXT PRIMARY KEY, lines INTEGER)")

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS line_counts")

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        for change in changes:
            conn.execute("DELETE FROM line_counts WHERE path = ?", (change.path,))
            if change.text is not None:
                conn.execute("INSERT INTO line_counts VALUES (?, ?)", (change.path, change.text.count("\n")))


def test_a_schema_upgrade_re_deriving_every_file_counts_them_with_the_changed_ones(tmp_path: Path) -> None:
    # After an upgrade, the first start re-extracts every file: minutes on a monorepo, during which /status said
    # ``scanning``, 0 of 0 files, because only changed files were counted.
    count = CHUNK * 2 + 10
    repo = make_repo(tmp_path / "repo", {f"pkg/m{n:03}.py": f"value_{n} = {n}\n" for n in range(count)})

    def build(version: int) -> list[dict[str, object]]:
        seen: list[dict[str, object]] = []
        service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
        service.register_indexer(_LineCounter(version))
        service.build(progress=lambda _done, _total: seen.extend(s for s in [build_progress.status(repo)] if s))
        return seen

    build(1)
    (repo / "pkg" / "m000.py").write_text("value_0 = 0\nmore = 1\n")
    seen = build(2)
    assert [(s["phase"], s["files_done"], s["files_total"]) for s in seen] == [
        ("indexing", 1, count), ("indexing", 1 + CHUNK, count), ("indexing", 1 + 2 * CHUNK, count),
        ("finishing", count, count)]
    with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:
        assert dict(conn.execute("SELECT path, lines FROM line_counts"))["pkg/m000.py"] == 2
        assert conn.execute("SELECT count(*) FROM line_counts").fetchone()[0] == count


@pytest.mark.parametrize("finished", [True, False])
def test_cpl_ups_line_says_whether_the_first_build_finished(tmp_path: Path, finished: bool) -> None:
    """Ctrl+C during the first build printed "Index built: 6,891 files" after "indexing stopped"."""
    import io
    import time

    from rich.console import Console

    from codeplane.cli.index_progress import SHOW_AFTER_SEC, follow_first_index

    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    console = Console(file=io.StringIO(), width=200)
    thread = follow_first_index(repo, console)
    tracker = build_progress.begin(repo, "startup")
    tracker.update(3584, 6891)
    time.sleep(SHOW_AFTER_SEC + 0.5)
    build_progress.end(repo, tracker, finished=finished)
    thread.join(timeout=10)
    said = console.file.getvalue()  # type: ignore[attr-defined]
    if finished:
        assert "Index built: 6,891 files" in said and "stopped" not in said, said
    else:
        assert "Index build stopped at 3,584 of 6,891 files" in said and "Index built" not in said, said
    assert build_progress.finished(repo) is finished


def test_cpl_ups_line_follows_the_first_build_not_the_reconcile_right_after_it(tmp_path: Path) -> None:
    """The watcher's catch-up reconcile begins the moment a first build ends: the line followed it instead and
    announced "Index built: 0 files in 0.5 s" for Django's 6,891."""
    import io
    import time

    from rich.console import Console

    from codeplane.cli.index_progress import SHOW_AFTER_SEC, follow_first_index

    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    console = Console(file=io.StringIO(), width=200)
    thread = follow_first_index(repo, console)
    first = build_progress.begin(repo, "startup")
    first.update(6891, 6891)
    time.sleep(SHOW_AFTER_SEC + 0.5)
    build_progress.end(repo, first, finished=True)
    catch_up = build_progress.begin(repo, "watcher")
    time.sleep(0.5)
    build_progress.end(repo, catch_up, finished=True)
    thread.join(timeout=10)
    said = console.file.getvalue()  # type: ignore[attr-defined]
    assert said.count("Index built") == 1 and "Index built: 6,891 files" in said, said
