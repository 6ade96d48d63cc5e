"""A git command rewriting the work tree (it holds ``.git/index.lock`` meanwhile) is indexed as one epoch once it is
done; a lock left by a git that died delays nothing (``repo/gitlock.py``)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from codeplane.index.service import IndexService
from tests.builders import make_repo, until, write_files
from tests.index_helpers import hit_lines, running_index


def _pending(index: IndexService) -> int:
    pending = index.status()["pending_changes"]
    assert isinstance(pending, int), pending
    return pending


def _settled(index: IndexService) -> None:
    until(lambda: _pending(index) == 0)


def test_changes_made_while_git_holds_its_index_lock_become_one_epoch_when_it_lets_go(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {f"m{i}.py": f"value_{i} = {i}\n" for i in range(4)})
    with running_index(repo, watch=True, debounce_ms=20) as index:
        _settled(index)
        before = index.epoch
        lock = repo / ".git" / "index.lock"
        lock.write_bytes(b"")  # what git does first, before it writes any file of the work tree
        write_files(repo, {"m0.py": "settle_token = 0\n"})
        until(lambda: _pending(index) > 0)  # the watcher delivered the first file
        time.sleep(0.3)
        assert index.epoch == before, "nothing is indexed while git is still writing"
        write_files(repo, {"m1.py": "settle_token = 1\n"})
        time.sleep(0.2)
        lock.unlink()
        until(lambda: hit_lines(index, "settle_token") == {("m0.py", 1), ("m1.py", 1)})
        _settled(index)
        assert index.epoch == before + 1, "both files of the command in one epoch"


def test_a_stale_index_lock_delays_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "alpha = 1\n"})
    with running_index(repo, watch=True, debounce_ms=20) as index:
        _settled(index)
        lock = repo / ".git" / "index.lock"
        lock.write_bytes(b"")
        old = time.time() - 120
        os.utime(lock, (old, old))  # left by a git that died two minutes ago
        began = time.monotonic()
        write_files(repo, {"a.py": "stale_lock_token = 1\n"})
        until(lambda: hit_lines(index, "stale_lock_token") == {("a.py", 1)})
        assert time.monotonic() - began < 5.0


def test_a_git_write_of_codeplanes_own_is_indexed_once_by_its_reconcile(tmp_path: Path) -> None:
    # git_stash of 1,485 files: the indexer reindexed the files as the stash rewrote them, then the write's own
    # reconcile reindexed them all again (26-47 s under load; 8-12 s once).
    repo = make_repo(tmp_path / "repo", {f"m{i}.py": f"value_{i} = {i}\n" for i in range(4)})
    with running_index(repo, watch=True, debounce_ms=20) as index:
        _settled(index)
        before = index.epoch
        with index.holding():  # what GitService does around a write that rewrites files
            write_files(repo, {"m0.py": "held_token = 0\n", "m1.py": "held_token = 1\n"})
            until(lambda: _pending(index) > 0)  # the watcher delivered them
            time.sleep(0.5)
            assert index.epoch == before, "nothing is indexed while the write goes on"
            index.reconcile()  # the write's own, before it lets go
        assert hit_lines(index, "held_token") == {("m0.py", 1), ("m1.py", 1)}
        _settled(index)
        time.sleep(0.3)
        assert index.epoch == before + 1, "the watcher's batch after it found nothing new"
