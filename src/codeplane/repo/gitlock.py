"""Whether a git command is rewriting the work tree right now.

Git holds ``index.lock`` from the start of a checkout, merge, reset or rebase step until the new index is in
place, and writes the work tree's files in between. The watcher sees those files arrive over a second or more;
indexing the first of them at once made a 1,000-file checkout of a 133k-file tree two epochs, each paying an
epoch's fixed costs (linking, contexts, anchors: seconds there). The index service waits for the lock to go
and then indexes everything the command changed as one epoch.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

#: A lock older than this was left by a git that died (git itself then refuses to run): nothing is waited for.
STALE_SEC = 30.0
#: The longest wait for one command; what it changes later is indexed as it comes.
MAX_WAIT_SEC = 10.0
_POLL_SEC = 0.02


def index_lock(root: Path) -> Path | None:
    """Where git puts ``index.lock`` for the work tree at ``root`` (a linked worktree's ``.git`` is a file
    naming its git directory); ``None`` when there is no git directory."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git / "index.lock"
    try:
        text = dot_git.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = Path(text[len("gitdir:"):].strip())
    return (git_dir if git_dir.is_absolute() else root / git_dir) / "index.lock"


def git_running(lock: Path) -> bool:
    """Whether ``lock`` (an ``index.lock``) is held by a live git command (one older than ``STALE_SEC`` is a dead
    git's leftover)."""
    return _held(lock)


def _held(lock: Path) -> bool:
    try:
        age = time.time() - os.stat(lock).st_mtime
    except OSError:
        return False
    return age < STALE_SEC


def wait_for_git(lock: Path | None, stop: threading.Event, *, max_wait: float = MAX_WAIT_SEC) -> float:
    """Wait while a live ``index.lock`` exists (at most ``max_wait`` seconds, or until ``stop`` is set); the
    seconds waited (0.0: no git command was running)."""
    if lock is None or not _held(lock):
        return 0.0
    began = time.monotonic()
    while _held(lock) and time.monotonic() - began < max_wait and not stop.wait(_POLL_SEC):
        pass
    return time.monotonic() - began
