"""One lock per work tree, shared by the writers that replace its files inside this process.

``write_source`` (and everything applied through the mutation engine: refactors, lint fixes) locks the files it
writes; git's work-tree operations (checkout, reset, merge, stash, rebase, cherry-pick, revert, restore) lock
git's own session. Neither waited for the other: a non-forced checkout checked the tree was clean, an edit landed,
and the checkout overwrote it, although the edit had answered ``applied`` (an agent's confirmed edit, gone). Both
now hold this lock around the span where they check and replace files, so each sees the other's result: the
checkout refuses over the edit (8004), or the edit finds its file changed (5002). Another program's writes are
outside any lock; the hash checks at replace time are what catch those.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_LOCKS: dict[str, threading.RLock] = {}
_GUARD = threading.Lock()


def worktree_lock(root: Path) -> threading.RLock:
    """The lock of the work tree at ``root`` (one per resolved path, for the life of the process)."""
    key = os.path.realpath(root)
    with _GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = threading.RLock()
        return lock
