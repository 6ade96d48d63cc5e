"""The file watcher (DECISIONS D6, spec §7.7): filesystem events become batches of repo-relative paths.

It only observes: it never writes repository state (§5.10) and correctness never depends on it (startup
reconciles from disk, writes through CodePlane refresh synchronously). The watches live in a child process
(``watch_child``: their set-up held the server's interpreter for seconds on a big tree); events are debounced by
watchfiles there, and a batch here names changed paths (files or directories, existing or not) and whether
``.cplignore`` or git's HEAD/index/refs changed, which call for a full reconcile (as does ``rescan``: changes whose
paths watchfiles could not report, from a file name that is not UTF-8).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from codeplane.core.logging import get_logger
from codeplane.repo.ignore import PRUNABLE_DIRS, IgnoreRules
from codeplane.repo.watch_child import read_frame, watch_plan

__all__ = ["RepoWatcher", "WatchBatch", "WatcherState", "classify_events", "watch_plan"]

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
    #: Something changed whose paths are unknown: reconcile everything.
    rescan: bool = False


def classify_events(root: Path, raw: set[tuple[int, str]], rules: IgnoreRules) -> WatchBatch:
    """Turn raw watchfiles events (change, absolute path) into a :class:`WatchBatch` (exposed for tests; it reads
    only where symlinks lead, :class:`_RealPaths`)."""
    paths: set[str] = set()
    cplignore = git_changed = False
    real = _RealPaths(root)
    for _, absolute in raw:
        rel = real.relative(absolute)
        if rel is None:
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


class _RealPaths:
    """Event paths as the repository names them.

    watchfiles' recursive watch follows symlinks, and inotify keeps one watch per directory under the last name it
    was added by: with ``cyc/up -> ..`` a new ``z.txt`` was reported as ``cyc/up/z.txt`` and every change in
    ``cyc/`` as ``cyc/up/cyc/...`` (the real ``cyc/inner.txt`` was never indexed), and with ``cyc/up2 -> ../..``
    files outside the repository were reported as inside it. The parent directory is resolved (cached per batch):
    a path resolving outside the repository is no repository file, git stores the symlink itself."""

    def __init__(self, root: Path) -> None:
        self._root = str(root)
        self._real_root = os.path.realpath(root)
        self._parents: dict[str, str | None] = {}

    def relative(self, absolute: str) -> str | None:
        """The repo-relative path of ``absolute``, or ``None`` when its parent is not a repository directory."""
        parent, _, name = absolute.rpartition("/")
        if not name or name == "." or not absolute.startswith(self._root + "/"):
            return None
        if parent == self._root:
            return name
        if parent not in self._parents:
            resolved = os.path.realpath(parent)
            self._parents[parent] = "" if resolved == self._real_root else \
                resolved[len(self._real_root) + 1:] if resolved.startswith(self._real_root + "/") else None
        directory = self._parents[parent]
        if directory is None:
            return None
        return f"{directory}/{name}" if directory else name


class RepoWatcher:
    """The watcher process (``watch_child``) and a thread that turns its reports into batches, until :meth:`stop`.

    The process watches the root and git's directory alone and the rest with all below; when the root gains or
    loses a directory it re-plans the tree watch, the new one live before the old one ends, and then reports the new
    directory as changed (what was written into it before its watch began is found by walking it); a re-plan whose
    two watches do not fit inotify's limits side by side reports ``rescan`` instead of a gap. ``on_live`` is called
    once every watch is in place: a change made before that moment may have gone unseen, so the caller reconciles
    what it read earlier.
    A process that ends unasked leaves the watcher ``failed`` with the reason in :attr:`error`; the index then
    reconciles periodically (correctness never depends on the watcher) until a new process, started after a back-off
    (:data:`RESTART_FIRST_S`, doubling up to :data:`RESTART_MAX_S`; reset once one is live), is live again and
    ``on_live`` lets the caller catch up. Without that, one directory deleted at the wrong moment left every later
    outside edit to a periodic reconcile, seconds to tens of seconds stale.
    """

    def __init__(self, root: Path, on_batch: Callable[[WatchBatch], None], rules: Callable[[], IgnoreRules],
                 *, debounce_ms: int, on_live: Callable[[], None] | None = None) -> None:
        self._root = root
        self._on_batch = on_batch
        self._rules = rules
        self._on_live = on_live
        self._debounce_ms = max(debounce_ms, 1)
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._stopping = threading.Event()
        self._live = threading.Event()
        #: Held while a process is started or the watcher stopped, so a restart never outlives a stop.
        self._lifecycle = threading.Lock()
        self._failures = 0
        self.state: WatcherState = "stopped"
        self.error: str | None = None
        #: Processes started again after one ended unasked.
        self.restarts = 0

    def start(self) -> None:
        with self._lifecycle:
            self._stopping.clear()
            self._failures = 0
            self._spawn()

    def _spawn(self) -> None:
        self._live.clear()
        # -P: the working directory (often the repository) must not shadow CodePlane's own modules.
        process = subprocess.Popen(
            [sys.executable, "-P", "-m", "codeplane.repo.watch_child", str(self._root), str(self._debounce_ms)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True,
        )
        self._process = process
        self.state = "running"
        self.error = None
        self._reader = threading.Thread(target=self._read, args=(process,), name="codeplane-watcher", daemon=True)
        self._reader.start()

    def _restart_later(self) -> None:
        delay = min(RESTART_MAX_S, RESTART_FIRST_S * 2 ** self._failures)
        self._failures += 1

        def again() -> None:
            if self._stopping.wait(delay):
                return
            with self._lifecycle:
                if self._stopping.is_set():
                    return
                self.restarts += 1
                log.info("file watcher restarting", restarts=self.restarts)
                self._spawn()

        threading.Thread(target=again, name="codeplane-watcher-restart", daemon=True).start()

    @property
    def pid(self) -> int | None:
        """The watcher process's id while it runs (``/status`` and tests)."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def wait_live(self, timeout: float) -> bool:
        """Whether every watch is in place, waiting up to ``timeout`` seconds for it."""
        return self._live.wait(timeout)

    def stop(self, timeout: float = 5.0) -> None:
        with self._lifecycle:
            self._stopping.set()
        process, self._process = self._process, None
        if process is not None:
            _end(process, timeout)
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.join(timeout)
        if self.state == "running":
            self.state = "stopped"

    def _read(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        reported: str | None = None
        try:
            while (message := read_frame(process.stdout)) is not None:
                kind = message[0]
                if kind == "batch":
                    self._deliver(message[1], message[2])
                elif kind == "rescan":
                    self._on_batch(WatchBatch(frozenset(), rescan=True))
                elif kind == "live":
                    self._failures = 0
                    self._live.set()
                    if self._on_live is not None:
                        self._on_live()
                elif kind == "error":
                    reported = str(message[1])
        except Exception as exc:  # noqa: BLE001 - a dead watcher degrades to polling, never kills the server
            reported = f"{type(exc).__name__}: {exc}"
        code = process.wait()
        # ``kill -TERM -- -<pgid>`` (or Ctrl+C) reaches the watcher with the server: the server's own stop follows
        # within moments, and a warning that the watcher "stopped" would be noise in every such shutdown.
        if self._stopping.is_set() or (code in _SHUTDOWN_CODES and self._stopping.wait(_SHUTDOWN_GRACE_S)):
            return
        # The reason first: whoever sees ``failed`` (``/status``) must find it there.
        with self._lifecycle:
            if self._stopping.is_set():
                return
            self.error = reported or f"the watcher process ended (exit code {code})"
            self.state = "failed"
            log.warning("file watcher stopped; falling back to periodic reconcile until it restarts",
                        error=self.error)
            self._restart_later()

    def _deliver(self, raw: list[tuple[int, str]], added: list[str]) -> None:
        batch = classify_events(self._root, set(raw), self._rules())
        if added:
            batch = WatchBatch(batch.paths | set(added), batch.cplignore_changed, batch.git_changed)
        if batch.paths or batch.cplignore_changed or batch.git_changed:
            self._on_batch(batch)


#: The first restart's delay after a watcher process ended unasked, and the longest (the delay doubles each time).
RESTART_FIRST_S = 0.5
RESTART_MAX_S = 30.0
#: Exit codes of a watcher ended by SIGTERM or SIGINT, and how long to wait for the server's stop after one.
_SHUTDOWN_CODES = (-signal.SIGTERM, -signal.SIGINT)
_SHUTDOWN_GRACE_S = 2.0


def _end(process: subprocess.Popen[bytes], timeout: float) -> None:
    """Ask the watcher process to end (its stdin closes), killing it if it does not within ``timeout``."""
    with contextlib.suppress(OSError):
        assert process.stdin is not None
        process.stdin.close()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()
