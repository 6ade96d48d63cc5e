"""The file watcher (DECISIONS D6, spec §7.7): filesystem events become batches of repo-relative paths.

It only observes: it never writes repository state (§5.10) and correctness never depends on it (startup
reconciles from disk, writes through CodePlane refresh synchronously). Events are debounced by
watchfiles; a batch names changed paths (files or directories, existing or not) and whether
``.cplignore`` or git's HEAD/index/refs changed, which call for a full reconcile.
"""

from __future__ import annotations

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


class RepoWatcher:
    """One daemon thread running ``watchfiles.watch`` over the work tree until :meth:`stop`."""

    def __init__(self, root: Path, on_batch: Callable[[WatchBatch], None], rules: Callable[[], IgnoreRules],
                 *, debounce_ms: int) -> None:
        self._root = root
        self._on_batch = on_batch
        self._rules = rules
        self._debounce_ms = max(debounce_ms, 1)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.state: WatcherState = "stopped"
        self.error: str | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="codeplane-watcher", daemon=True)
        self.state = "running"
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if self.state == "running":
            self.state = "stopped"

    def _run(self) -> None:
        try:
            for raw in watchfiles.watch(
                self._root, watch_filter=None, debounce=self._debounce_ms,
                step=min(self._debounce_ms, 20), stop_event=self._stop, rust_timeout=500,
                raise_interrupt=False,
            ):
                batch = classify_events(self._root, raw, self._rules())
                if batch.paths or batch.cplignore_changed or batch.git_changed:
                    self._on_batch(batch)
        except Exception as exc:  # noqa: BLE001 - a dead watcher degrades to polling, never kills the server
            self.state = "failed"
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("file watcher stopped; falling back to periodic reconcile", error=self.error)
