"""Progress of a full reconcile running in this process, for whoever waits on it.

A cold index takes seconds on a mid-size repository and minutes on a monorepo, and before it is published the
server is not ready. The pipeline records where its running full reconcile is (``scanning`` the tree,
``indexing`` files chunk by chunk, ``finishing``: linking, indexes, the Tantivy commit); ``/status`` (also while
the server is still booting) and ``cpl up``'s terminal line read it by repository root. A big refresh of paths (a
checkout or a stash the watcher saw: a thousand files take seconds on a big tree) is recorded apart
(:func:`begin_refresh`): ``/status`` shows it when no full reconcile runs, and a query that times out waiting for
it says how far it is; it is never taken for the first build that ``cpl up`` follows. Nothing is recorded for small
refreshes (a write tool's, an editor's save), which take milliseconds.

The percentage covers the whole build, not the files alone: the finish (no per-file count) took a third of the
time (qa39: 18.7 of a 56.3 s cold build, 3.1 of a 9.4 s checkout) and was shown at 100 %. Indexing the files fills
:data:`INDEXING_SHARE` of it; the finish fills the rest as its time goes against an estimate from the indexing
time at the same ratio, and stops at :data:`FINISH_CAP` until the build ends: 100 % is never shown for a build
still running.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from codeplane.core.errors import CodePlaneError, ErrorCode

_serials = itertools.count(1)
#: The share of the percentage that indexing the files fills (the finish fills the rest).
INDEXING_SHARE = 2 / 3
#: The highest percentage a running build shows.
FINISH_CAP = 99.0


@dataclass
class BuildProgress:
    reason: str
    phase: str = "scanning"
    files_done: int = 0
    files_total: int = 0
    started: float = field(default_factory=time.monotonic)
    #: Which full reconcile of this process it is: one may follow another at once (the watcher's catch-up after
    #: a first build), and ``cpl up`` followed the second, announcing "Index built: 0 files in 0.5 s".
    serial: int = field(default_factory=lambda: next(_serials))
    #: When the finish began (monotonic), once every file is indexed.
    finishing_at: float | None = None

    def update(self, done: int, total: int) -> None:
        self.files_done, self.files_total = done, total
        self.phase = "finishing" if done >= total else "indexing"
        if self.phase == "finishing" and self.finishing_at is None:
            self.finishing_at = time.monotonic()

    def percent(self, now: float) -> float:
        """How far the whole build is, in percent (see the module docstring); below 100 while it runs."""
        share = 100.0 * INDEXING_SHARE
        if self.finishing_at is None:
            return share * self.files_done / self.files_total if self.files_total else 0.0
        # The finish is expected to take (1 - share) / share of the time the files took (the scan, short, with
        # them: the first count comes only after the first chunk, so the scan's end is not seen).
        expected = (self.finishing_at - self.started) * (1 - INDEXING_SHARE) / INDEXING_SHARE
        gone = (now - self.finishing_at) / expected if expected > 0 else 1.0
        return min(FINISH_CAP, share + (100.0 - share) * min(gone, 1.0))

    def snapshot(self) -> ProgressSnapshot:
        now = time.monotonic()
        return ProgressSnapshot(self.reason, self.phase, self.files_done, self.files_total, now - self.started,
                                self.serial, round(self.percent(now), 1))


@dataclass(frozen=True)
class ProgressSnapshot:
    reason: str
    phase: str
    files_done: int
    files_total: int
    elapsed_sec: float
    serial: int = 0
    #: Of the whole build (:meth:`BuildProgress.percent`), not of the files: 100 only once it ended published.
    percent: float = 0.0

    def as_dict(self) -> dict[str, object]:
        """The ``progress`` object of the ``index`` status section."""
        return {"reason": self.reason, "phase": self.phase, "files_done": self.files_done,
                "files_total": self.files_total, "percent": self.percent, "elapsed_sec": round(self.elapsed_sec, 1)}


_lock = threading.Lock()
_active: dict[str, BuildProgress] = {}
#: Big refreshes of paths under way, by repository root (never a full reconcile: ``current`` does not see them).
_refreshing: dict[str, BuildProgress] = {}
#: Whether the last full reconcile of each repository ended by publishing (False: it failed or was stopped), and
#: which it was (its serial) with its last counts.
_finished: dict[str, tuple[bool, ProgressSnapshot]] = {}


def begin(root: Path, reason: str) -> BuildProgress:
    progress = BuildProgress(reason)
    with _lock:
        _active[str(root)] = progress
    return progress


def end(root: Path, progress: BuildProgress, *, finished: bool) -> None:
    with _lock:
        if _active.get(str(root)) is progress:
            del _active[str(root)]
            last = progress.snapshot()
            _finished[str(root)] = (finished, replace(last, percent=100.0) if finished else last)


def finished(root: Path | str) -> bool:
    """Whether the last full reconcile of the repository at ``root`` in this process ended by publishing: one
    stopped by Ctrl+C was announced as "Index built"."""
    with _lock:
        return _finished.get(str(root), (False, None))[0]


def ended(root: Path | str, serial: int) -> tuple[bool, ProgressSnapshot] | None:
    """Whether the full reconcile ``serial`` ended by publishing, and its last counts; ``None`` while it runs, or
    once another one has ended since."""
    with _lock:
        last = _finished.get(str(root))
    return last if last is not None and last[1].serial == serial else None


def current(root: Path | str) -> ProgressSnapshot | None:
    """The running full reconcile of the repository at ``root`` in this process, or ``None``."""
    with _lock:
        progress = _active.get(str(root))
    return None if progress is None else progress.snapshot()


def begin_refresh(root: Path, reason: str) -> BuildProgress:
    """Record a big refresh of paths (phase ``indexing`` from the start: there is no tree to scan)."""
    progress = BuildProgress(reason, phase="indexing")
    with _lock:
        _refreshing[str(root)] = progress
    return progress


def end_refresh(root: Path, progress: BuildProgress) -> None:
    with _lock:
        if _refreshing.get(str(root)) is progress:
            del _refreshing[str(root)]


def refreshing(root: Path | str) -> ProgressSnapshot | None:
    """The big refresh of paths under way in the repository at ``root``, or ``None``."""
    with _lock:
        progress = _refreshing.get(str(root))
    return None if progress is None else progress.snapshot()


def status(root: Path | str) -> dict[str, object] | None:
    """The ``progress`` object of ``/status``: the running full reconcile's, else a big refresh's."""
    snapshot = current(root) or refreshing(root)
    return None if snapshot is None else snapshot.as_dict()


def not_ready(root: Path | str, state: str, wait: float) -> CodePlaneError:
    """3004 for a query that waited ``wait`` seconds for the first build: how far the build is."""
    progress = current(root)
    message = "the index is still being built; retry shortly"
    if progress is not None and progress.files_total:
        message += f" ({progress.files_done:,} of {progress.files_total:,} files, {progress.phase})"
    return CodePlaneError(ErrorCode.INDEX_NOT_READY, message, details={
        "state": state, "wait_sec": wait, "progress": status(root)})


def explain_timeout(root: Path | str, error: CodePlaneError) -> CodePlaneError:
    """A freshness wait's 3005 (``error``), saying how far a big refresh under way (a checkout's) is."""
    refresh = refreshing(root)
    if refresh is not None and refresh.files_total:
        error.message += (f" (reindexing {refresh.files_done:,} of {refresh.files_total:,} changed files, "
                          f"{refresh.reason})")
        error.details["progress"] = refresh.as_dict()
    return error
