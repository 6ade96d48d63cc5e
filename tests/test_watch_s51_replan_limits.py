"""A re-plan whose new tree watch does not fit beside the old one (inotify's per-user limits) keeps the watcher
running: the old watch goes first, and since what changed until the new one is live is unknown, the child asks
for a full reconcile (``rescan``) instead of losing those changes silently or failing.

The limit is real: the watcher process's open-file limit is lowered (``prlimit``) so that a third watchfiles
watch (three descriptors: inotify, epoll, eventfd) cannot open while two are live."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from codeplane.repo.watch_child import read_frame
from tests.builders import make_repo


class Child:
    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-P", "-m", "codeplane.repo.watch_child", str(root), "20"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True)
        self.frames: list[tuple[Any, ...]] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        while (frame := read_frame(self.process.stdout)) is not None:
            with self.lock:
                self.frames.append(frame)

    def seen(self) -> list[tuple[Any, ...]]:
        with self.lock:
            return list(self.frames)

    def wait_for(self, what: str, check: Any) -> None:
        deadline = time.monotonic() + 15
        while not check(self.seen()):
            assert time.monotonic() < deadline, f"never saw {what}: {self.seen()[-5:]}"
            assert self.process.poll() is None, f"the watcher ended: {self.seen()[-3:]}"
            time.sleep(0.02)

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(10)


def _paths(frames: list[tuple[Any, ...]]) -> set[str]:
    return {path for f in frames if f[0] == "batch" for _, path in f[1]}


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir() or not hasattr(resource, "prlimit"), reason="Linux only")
def test_a_replan_that_does_not_fit_beside_the_old_watch_asks_for_a_rescan_and_keeps_watching(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"existing/seed.txt": "x\n", "top.py": "x = 1\n"})
    child = Child(repo)
    try:
        child.wait_for("live", lambda frames: ("live",) in frames)
        pid = child.process.pid
        highest = max(int(fd) for fd in os.listdir(f"/proc/{pid}/fd"))
        # Room for two more descriptors (a scan of the root, a directory walk), not for a third watch.
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (highest + 3, highest + 3))

        (repo / "fresh").mkdir()
        (repo / "fresh" / "early.txt").write_text("e\n")
        child.wait_for("the new directory reported for a walk",
                       lambda frames: any(f[0] == "batch" and "fresh" in f[2] for f in frames))
        assert ("rescan",) in child.seen()  # the gap between the two watches is reconciled in full
        assert not [f for f in child.seen() if f[0] == "error"]

        (repo / "fresh" / "later.txt").write_text("l\n")
        (repo / "existing" / "after.txt").write_text("a\n")
        want = {str(repo / "fresh" / "later.txt"), str(repo / "existing" / "after.txt")}
        child.wait_for("writes after the re-plan", lambda frames: want <= _paths(frames))
    finally:
        child.stop()
