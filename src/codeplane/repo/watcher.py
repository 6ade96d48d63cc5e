"""The file watcher (DECISIONS D6, spec §7.7): filesystem events become batches of repo-relative paths.

It only observes: it never writes repository state (§5.10) and correctness never depends on it (startup
reconciles from disk, writes through CodePlane refresh synchronously). Events are debounced by
watchfiles; a batch names changed paths (files or directories, existing or not) and whether
``.cplignore`` or git's HEAD/index/refs changed, which call for a full reconcile.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import watchfiles

from codeplane.core.logging import get_logger
from codeplane.repo.ignore import PRUNABLE_DIRS, IgnoreRules

log = get_logger(__name__)

WatcherState = Literal["stopped", "running", "failed", "disabled"]

#: Files under ``.git/`` whose change means HEAD, the index or a ref moved (RepoVersion, §5.2).
_GIT_SIGNALS = ("HEAD", "index", "packed-refs", "ORIG_HEAD", "MERGE_HEAD")
_GIT_SIGNAL_DIRS = ("refs/", "modules/")


@dataclass(frozen=True)
class WatchBatch:
    paths: frozenset[str]
    cplignore_changed: bool = False
    git_changed: bool = False


def classify_events(root: Path, raw: set[tuple[watchfiles.Change, str]], rules: IgnoreRules) -> WatchBatch:
    """Turn raw watchfiles events into a :class:`WatchBatch` (pure; exposed for tests)."""
    paths: set[str] = set()
    cplignore = git_changed = False
    for _, absolute in raw:
        try:
            rel = Path(absolute).relative_to(root).as_posix()
        except ValueError:
            continue
        if rel in ("", "."):
            continue
        head, _, rest = rel.partition("/")
        if head == ".git":
            git_changed = git_changed or rest in _GIT_SIGNALS or rest.startswith(_GIT_SIGNAL_DIRS)
            continue
        if any(part in PRUNABLE_DIRS for part in rel.split("/")):
            continue
        if rel == ".cplignore":
            cplignore = True
        if rules.excludes(rel):
            continue
        paths.add(rel)
    return WatchBatch(frozenset(paths), cplignore, git_changed)


def watch_plan(root: Path) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """What to watch: ``(alone, with all below)``.

    Alone: the root (its files and which directories it has) and git's directory (HEAD, index, packed-refs...).
    With all below: each top-level directory of the universe, and git's ``refs/`` and ``modules/``. Not watched at
    all: ``.codeplane/`` (every page SQLite writes to its WAL was an inotify event: ~3 s of the watcher thread's
    CPU in a 1,000-file checkout of a 133k-file tree), the rest of ``.git/`` (objects) and the other
    PRUNABLE_DIRS at the top (``node_modules``...: inotify watches are a bounded resource), none of which the
    universe holds. Symlinked directories are listed, never followed, like the walk.
    """
    alone = [root]
    below: list[Path] = []
    git_dir = root / ".git"
    if git_dir.is_dir() and not git_dir.is_symlink():
        alone.append(git_dir)
        below.extend(git_dir / sub for sub in ("modules", "refs") if (git_dir / sub).is_dir())
    try:
        with os.scandir(root) as entries:
            below.extend(Path(e.path) for e in entries
                         if e.is_dir(follow_symlinks=False) and e.name not in PRUNABLE_DIRS)
    except OSError:
        pass
    return tuple(alone), tuple(sorted(below))


class RepoWatcher:
    """Daemon threads running ``watchfiles.watch`` over the work tree (``watch_plan``) until :meth:`stop`.

    One thread watches the plan's directories alone; when the root gains or loses a directory it re-plans and
    restarts the other thread, which watches the rest recursively, and reports the new directory as changed (what
    was written into it before its watch began is found by walking it).
    """

    def __init__(self, root: Path, on_batch: Callable[[WatchBatch], None], rules: Callable[[], IgnoreRules],
                 *, debounce_ms: int) -> None:
        self._root = root
        self._on_batch = on_batch
        self._rules = rules
        self._debounce_ms = max(debounce_ms, 1)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._deep: tuple[threading.Thread, threading.Event] | None = None
        self._deep_paths: tuple[Path, ...] = ()
        self._deliver = threading.Lock()  # one batch at a time, whichever thread saw it
        self.state: WatcherState = "stopped"
        self.error: str | None = None

    def start(self) -> None:
        self._stop.clear()
        alone, below = watch_plan(self._root)
        self._start_deep(below)
        self._thread = threading.Thread(target=self._run, args=(alone,), name="codeplane-watcher", daemon=True)
        self.state = "running"
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._stop_deep(timeout)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if self.state == "running":
            self.state = "stopped"

    def _start_deep(self, paths: tuple[Path, ...]) -> None:
        self._deep_paths = paths
        if not paths:
            return
        stop = threading.Event()
        thread = threading.Thread(target=self._watch, args=(paths, True, stop), name="codeplane-watcher-tree",
                                  daemon=True)
        self._deep = (thread, stop)
        thread.start()

    def _stop_deep(self, timeout: float = 5.0) -> None:
        deep, self._deep = self._deep, None
        if deep is not None:
            deep[1].set()
            deep[0].join(timeout)

    def _run(self, alone: tuple[Path, ...]) -> None:
        self._watch(alone, False, self._stop)

    def _watch(self, paths: tuple[Path, ...], recursive: bool, stop: threading.Event) -> None:
        try:
            for raw in watchfiles.watch(
                *paths, watch_filter=None, debounce=self._debounce_ms, step=min(self._debounce_ms, 20),
                stop_event=_Either(stop, self._stop), rust_timeout=500, raise_interrupt=False, recursive=recursive,
            ):
                added: set[str] = set()
                if not recursive and any(Path(p).parent == self._root for _, p in raw):
                    added = self._replan()
                batch = classify_events(self._root, raw, self._rules())
                if added:
                    batch = WatchBatch(batch.paths | added, batch.cplignore_changed, batch.git_changed)
                if batch.paths or batch.cplignore_changed or batch.git_changed:
                    with self._deliver:
                        self._on_batch(batch)
        except Exception as exc:  # noqa: BLE001 - a dead watcher degrades to polling, never kills the server
            if stop.is_set() and not self._stop.is_set():
                return  # a re-planned tree watch ended as asked
            self.state = "failed"
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("file watcher stopped; falling back to periodic reconcile", error=self.error)

    def _replan(self) -> set[str]:
        """Restart the tree watch if the root's directories changed; the new ones' paths (to be walked)."""
        _, below = watch_plan(self._root)
        if below == self._deep_paths or self._stop.is_set():
            return set()
        added = set(below) - set(self._deep_paths)
        self._stop_deep()
        self._start_deep(below)
        return {p.relative_to(self._root).as_posix() for p in added if p.parent == self._root}


class _Either:
    """Set when either event is (what ``watchfiles.watch`` asks of ``stop_event``: ``is_set``)."""

    def __init__(self, first: threading.Event, second: threading.Event) -> None:
        self._first, self._second = first, second

    def is_set(self) -> bool:
        return self._first.is_set() or self._second.is_set()
