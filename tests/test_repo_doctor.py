"""``cpl doctor``'s file-watcher check: the inotify watches the watcher would add, against the per-user limit."""

from __future__ import annotations

import os
from pathlib import Path

from codeplane.index.freshness import POLL_INTERVAL_SEC, poll_interval
from codeplane.index.pipeline import ReconcileReport
from codeplane.repo.doctor import check_watch_capacity, directories_to_watch
from tests.builders import make_repo


def _tree(tmp_path: Path) -> Path:
    files = {f"pkg/sub{n}/deep/m.py": "x = 1\n" for n in range(6)}
    repo = make_repo(tmp_path / "repo", {**files, "top.py": "t = 1\n", "node_modules/m/i.js": "1\n"})
    (tmp_path / "elsewhere" / "a" / "b").mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere", repo / "pkg" / "linked")
    return repo


def test_the_watches_counted_are_the_directories_the_watcher_watches(tmp_path: Path) -> None:
    repo = _tree(tmp_path)
    # alone: the root and .git; below: .git/refs and its subdirectories, pkg, its 6 subN and 6 deep (no
    # node_modules, no symlinked directory)
    refs = sum(1 for _ in os.walk(repo / ".git" / "refs"))
    assert directories_to_watch(repo) == 2 + refs + 1 + 6 + 6


def test_a_limit_below_the_tree_fails_with_the_sysctl_to_run(tmp_path: Path) -> None:
    repo = _tree(tmp_path)
    limit = tmp_path / "max_user_watches"
    limit.write_text("8\n")
    [result] = check_watch_capacity(repo, limit)
    assert not result.ok and "inotify allows 8 per user" in result.detail
    assert "sysctl fs.inotify.max_user_watches=524288" in result.fix
    limit.write_text("100000\n")
    [result] = check_watch_capacity(repo, limit)
    assert result.ok
    assert check_watch_capacity(repo, tmp_path / "absent") == []  # no inotify here: nothing to say


def _report(duration_ms: int) -> ReconcileReport:
    return ReconcileReport(at_ms=0, duration_ms=duration_ms, reason="watcher", full=True, added=0, modified=0,
                           deleted=0, renamed=(), touched=0, epoch=1)


def test_polling_without_a_watcher_idles_ten_times_as_long_as_a_reconcile_takes() -> None:
    assert poll_interval(None) == POLL_INTERVAL_SEC
    assert poll_interval(_report(50)) == POLL_INTERVAL_SEC
    assert poll_interval(_report(2500)) == 25.0

