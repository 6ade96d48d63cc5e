"""``cpl doctor`` check for the file watcher: whether inotify allows a watch on every directory it would watch.

Linux gives each user ``fs.inotify.max_user_watches`` watches (8,192 on older kernels), shared by every program
the user runs. Past it the watcher fails and the index falls back to polling, a full reconcile after every few
seconds of idling; on a big tree that is a core's worth of stat calls. Better to say so before it happens.
"""

from __future__ import annotations

import os
from pathlib import Path

from codeplane.core.doctor import CheckResult
from codeplane.repo.watch_child import watch_plan

_LIMIT_FILE = Path("/proc/sys/fs/inotify/max_user_watches")
#: Directories this far below the limit leave room for the user's other watchers (editors, dev servers).
_HEADROOM = 0.9


def directories_to_watch(root: Path) -> int:
    """The inotify watches the watcher adds for ``root``: its alone paths and every directory below the others
    (watchfiles watches recursively; symlinked directories are not followed)."""
    alone, below = watch_plan(root)
    count = len(alone)
    for top in below:
        for parent, dirs, _files in os.walk(top):  # os.walk lists a symlinked directory but never enters it
            count += 1
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(parent, d))]
    return count


def check_watch_capacity(root: Path, limit_file: Path = _LIMIT_FILE) -> list[CheckResult]:
    try:
        limit = int(limit_file.read_text().strip())
    except (OSError, ValueError):
        return []  # not Linux (FSEvents, kqueue: no per-directory budget) or not readable: nothing to say
    needed = directories_to_watch(root)
    detail = f"{needed:,} directories to watch, inotify allows {limit:,} per user"
    if needed <= limit * _HEADROOM:
        return [CheckResult("file watcher", True, detail)]
    return [CheckResult(
        "file watcher", False, f"{detail}: the watcher would fail and the index poll instead",
        f"raise the limit: `sudo sysctl fs.inotify.max_user_watches={_suggested(needed)}` (and a line in "
        "/etc/sysctl.d/ to keep it)")]


def _suggested(needed: int) -> int:
    """A round limit with room for twice ``needed``: the next power of two, at least 524,288."""
    return max(524_288, 1 << (2 * needed - 1).bit_length())
