"""The watcher: what it watches (``watch_plan``) and that it sees every universe change, in directories the root
gains after it started too (the tree watch is re-planned), and git's HEAD moving; ``.codeplane/``, whose WAL writes
would flood it, is not watched at all. The watches live in a child process: it says when they are in place, it
ends when asked and when the server dies, and a child that dies unasked leaves the watcher ``failed`` until a new
one is live."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

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
    live: list[bool] = []
    watcher = RepoWatcher(repo, seen, lambda: IgnoreRules.load(repo), debounce_ms=20,
                          on_live=lambda: live.append(True))
    watcher.start()
    try:
        assert watcher.wait_live(15)  # every change from now on is seen
        assert live == [True]
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


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie nobody reaped counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _wait(what: str, check: Callable[[], bool], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)


def test_stop_ends_the_watcher_process(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n"})
    watcher = RepoWatcher(repo, Seen(), lambda: IgnoreRules.load(repo), debounce_ms=20)
    watcher.start()
    assert watcher.wait_live(15)
    pid = watcher.pid
    assert pid is not None and not _gone(pid)
    watcher.stop()
    assert _gone(pid)
    assert watcher.pid is None and watcher.state == "stopped" and watcher.error is None


def test_a_watcher_process_that_dies_unasked_fails_with_the_reason_then_starts_again(tmp_path: Path) -> None:
    # It stayed ``failed`` until the server restarted: every outside edit then waited for a periodic reconcile.
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n", "src/b.py": "b = 1\n"})
    seen = Seen()
    lives: list[float] = []
    watcher = RepoWatcher(repo, seen, lambda: IgnoreRules.load(repo), debounce_ms=20,
                          on_live=lambda: lives.append(time.monotonic()))
    watcher.start()
    try:
        assert watcher.wait_live(15)
        pid = watcher.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        _wait("the watcher failing", lambda: watcher.state == "failed")
        assert watcher.error is not None and "exit code -9" in watcher.error
        _wait("the watcher starting again", lambda: len(lives) == 2)
        assert watcher.state == "running" and watcher.error is None and watcher.restarts == 1
        assert watcher.pid not in (None, pid) and _gone(pid)
        (repo / "src" / "b.py").write_text("b = 2\n")
        seen.wait_for("src/b.py", lambda: "src/b.py" in seen.paths())
    finally:
        watcher.stop()
    assert watcher.state == "stopped"


def test_a_directory_deleted_as_the_tree_watch_starts_is_skipped_not_fatal(tmp_path: Path) -> None:
    # ``mkdir scratch; ...; rm -rf scratch`` at the root: the re-plan listed ``scratch``, it was gone when the tree
    # watch began, and watchfiles' "No path was found" failed the watcher (every sixth cycle or so).
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n", "src/b.py": "b = 1\n"})
    seen = Seen()
    watcher = RepoWatcher(repo, seen, lambda: IgnoreRules.load(repo), debounce_ms=20)
    watcher.start()
    try:
        assert watcher.wait_live(15)
        for n in range(40):
            scratch = repo / f"scratch{n % 3}"
            scratch.mkdir()
            (scratch / "f.txt").write_text("x\n")
            time.sleep(0.02 * (n % 4))
            shutil.rmtree(scratch)
        time.sleep(0.5)
        assert watcher.restarts == 0 and watcher.state == "running", watcher.error
        (repo / "src" / "b.py").write_text("b = 2\n")
        seen.wait_for("src/b.py", lambda: "src/b.py" in seen.paths())
    finally:
        watcher.stop()


def test_a_watcher_ended_by_the_signal_that_stops_the_server_is_no_failure(tmp_path: Path) -> None:
    """``kill -TERM -- -<pgid>`` reaches the watcher with the server: it logged "file watcher stopped; falling back
    to periodic reconcile" on every such shutdown. A SIGTERM followed by the server's stop is a shutdown; a SIGTERM
    with no stop after it still fails over to polling."""
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n"})
    for stop_follows in (True, False):
        watcher = RepoWatcher(repo, Seen(), lambda: IgnoreRules.load(repo), debounce_ms=20)
        watcher.start()
        try:
            assert watcher.wait_live(15)
            pid = watcher.pid
            assert pid is not None
            os.kill(pid, signal.SIGTERM)
            if stop_follows:
                time.sleep(0.3)  # the server's own SIGTERM handling comes a moment later
                watcher.stop()
                assert watcher.state == "stopped" and watcher.error is None
            else:
                _wait("the watcher failing", lambda w=watcher: w.state == "failed")  # type: ignore[misc]
                assert watcher.error is not None and "exit code -15" in watcher.error
        finally:
            watcher.stop()


def test_the_watcher_process_ends_when_the_server_dies(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n"})
    server = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys, time\n"
            "from pathlib import Path\n"
            "from codeplane.repo.ignore import IgnoreRules\n"
            "from codeplane.repo.watcher import RepoWatcher\n"
            "root = Path(sys.argv[1])\n"
            "w = RepoWatcher(root, lambda b: None, lambda: IgnoreRules.load(root), debounce_ms=20)\n"
            "w.start()\n"
            "assert w.wait_live(15)\n"
            "print(w.pid, flush=True)\n"
            "time.sleep(60)\n"), str(repo)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        child = int(server.stdout.readline())
        assert not _gone(child)
        server.kill()  # no clean-up runs: the child sees its stdin close
        server.wait()
        _wait("the orphaned watcher process ending", lambda: _gone(child))
    finally:
        server.kill()


def test_a_repository_with_its_own_codeplane_package_does_not_shadow_the_watcher(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", {"codeplane/__init__.py": "raise SystemExit('shadowed')\n"})
    monkeypatch.chdir(repo)  # the server runs from the repository
    watcher = RepoWatcher(repo, Seen(), lambda: IgnoreRules.load(repo), debounce_ms=20)
    watcher.start()
    try:
        assert watcher.wait_live(15), watcher.error
    finally:
        watcher.stop()


def test_a_top_level_directory_cplignore_excludes_is_not_watched_until_the_rule_goes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".cplignore": "data/\n", "data/big.csv": "1\n", "src/a.py": "a = 1\n"})
    _, below = watch_plan(repo)
    assert repo / "data" not in below and repo / "src" in below
    seen = Seen()
    watcher = RepoWatcher(repo, seen, lambda: IgnoreRules.load(repo), debounce_ms=20)
    watcher.start()
    try:
        assert watcher.wait_live(15)
        (repo / ".cplignore").write_text("# nothing ignored now\n")  # an event on the root: the plan is made again
        seen.wait_for("the .cplignore change", lambda: any(b.cplignore_changed for b in seen.batches))
        time.sleep(0.3)  # the tree watch restarting with data/
        (repo / "data" / "later.csv").write_text("2\n")  # only a watch of data/ sees this
        seen.wait_for("data/later.csv", lambda: "data/later.csv" in seen.paths())
    finally:
        watcher.stop()
