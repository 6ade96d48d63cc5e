"""The watcher: what it watches (``watch_plan``) and that it sees every universe change, in directories the root
gains after it started too (the tree watch is re-planned), and git's HEAD moving; ``.codeplane/``, whose WAL writes
would flood it, is not watched at all."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from codeplane.repo.ignore import IgnoreRules
from codeplane.repo.watcher import RepoWatcher, WatchBatch, watch_plan
from tests.builders import git, make_repo


def test_the_plan_watches_the_universe_and_gits_signals_only(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"top.py": "x = 1\n", "src/a.py": "a = 1\n", "docs/i.md": "# i\n",
                                         "node_modules/m/index.js": "1\n", ".codeplane/index.db": "db"})
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", repo / "linked")
    alone, below = watch_plan(repo)
    assert alone == (repo, repo / ".git")
    assert below == (repo / ".git" / "refs", repo / "docs", repo / "src")


class Seen:
    def __init__(self) -> None:
        self.batches: list[WatchBatch] = []
        self.lock = threading.Lock()

    def __call__(self, batch: WatchBatch) -> None:
        with self.lock:
            self.batches.append(batch)

    def paths(self) -> set[str]:
        with self.lock:
            return {p for b in self.batches for p in b.paths}

    def git_moved(self) -> bool:
        with self.lock:
            return any(b.git_changed for b in self.batches)

    def wait_for(self, predicate: str, check: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 15
        while not check():
            assert time.monotonic() < deadline, f"the watcher never reported {predicate}: {self.paths()}"
            time.sleep(0.02)


def test_every_change_is_seen_in_directories_the_root_gains_later_too(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"top.py": "x = 1\n", "src/a.py": "a = 1\n"})
    (repo / ".codeplane").mkdir()
    seen = Seen()
    watcher = RepoWatcher(repo, seen, lambda: IgnoreRules.load(repo), debounce_ms=20)
    watcher.start()
    try:
        time.sleep(0.3)  # the watches are being set up
        (repo / "top.py").write_text("x = 2\n")
        (repo / "src" / "a.py").write_text("a = 2\n")
        seen.wait_for("top.py and src/a.py", lambda: {"top.py", "src/a.py"} <= seen.paths())
        (repo / "fresh").mkdir()
        (repo / "fresh" / "early.py").write_text("e = 1\n")  # perhaps before its watch: the directory is reported
        seen.wait_for("the new directory", lambda: bool({"fresh", "fresh/early.py"} & seen.paths()))
        time.sleep(0.3)
        (repo / "fresh" / "later.py").write_text("l = 1\n")  # only a watch of the new directory sees this
        seen.wait_for("fresh/later.py", lambda: "fresh/later.py" in seen.paths())
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "second")
        seen.wait_for("git's HEAD moving", seen.git_moved)
        assert watcher.state == "running"
    finally:
        watcher.stop()
    assert str(watcher.state) == "stopped"
