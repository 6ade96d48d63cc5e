"""Progress of a full reconcile running in this process, for whoever waits on it.

A cold index takes seconds on a mid-size repository and minutes on a monorepo, and before it is published the
server is not ready. The pipeline records where its running full reconcile is (``scanning`` the tree,
``indexing`` files chunk by chunk, ``finishing``: linking, indexes, the Tantivy commit); ``/status`` (also while
the server is still booting) and ``cpl up``'s terminal line read it by repository root. A big refresh of paths (a
checkout or a stash the watcher saw: a thousand files take seconds on a big tree) is recorded apart
(:func:`begin_refresh`): ``/status`` shows it when no full reconcile runs, and a query that times out waiting for
it says how far it is; it is never taken for the first build that ``cpl up`` follows. Nothing is recorded for small
refreshes (a write tool's, an editor's save), which take milliseconds.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

_serials = itertools.count(1)


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

    def update(self, done: int, total: int) -> None:
        self.files_done, self.files_total = done, total
        self.phase = "finishing" if done >= total else "indexing"

    def snapshot(self) -> ProgressSnapshot:
        return ProgressSnapshot(self.reason, self.phase, self.files_done, self.files_total,
                                time.monotonic() - self.started, self.serial)


@dataclass(frozen=True)
class ProgressSnapshot:
    reason: str
    phase: str
    files_done: int
    files_total: int
    elapsed_sec: float
    serial: int = 0

    def as_dict(self) -> dict[str, object]:
        """The ``progress`` object of the ``index`` status section."""
        percent = 100.0 * self.files_done / self.files_total if self.files_total else 0.0
        return {"reason": self.reason, "phase": self.phase, "files_done": self.files_done,
                "files_total": self.files_total, "percent": round(percent, 1),
                "elapsed_sec": round(self.elapsed_sec, 1)}


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
            _finished[str(root)] = (finished, progress.snapshot())


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
