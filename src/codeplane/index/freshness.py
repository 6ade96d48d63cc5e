"""Per-file freshness (DECISIONS D6, spec §7.6): which paths are known to be newer on disk than the index.

The watcher (and anyone else who learns of a change) marks paths pending; the single writer takes a
snapshot, reindexes, publishes an epoch and clears exactly what it took, unless the path was marked
again meanwhile. A query that touches path X waits, bounded, until no pending path concerns X; it never
waits for unrelated files. A pending *full* reconcile concerns every path.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codeplane.core.errors import CodePlaneError, ErrorCode

if TYPE_CHECKING:
    from codeplane.index.pipeline import ReconcileReport

#: A watcher batch of this many paths is a bulk change (a checkout) that may still be arriving: the indexer waits
#: until nothing was marked for BURST_QUIET_SEC (at most BURST_WAIT_SEC) and takes it all as one epoch. watchfiles
#: ends a batch at the first 20 ms without events, so a 1,000-file checkout of a 133k-file tree came as 906 files,
#: then 94 more and HEAD's move: three epochs and a full walk, each epoch paying the fixed costs of linking and
#: anchors (29 s in all; issue 19).
BURST_PATHS = 100
#: Without a watcher (disabled or failed), a full reconcile runs this often, or, on a tree whose full reconcile
#: takes long, after POLL_IDLE_RATIO times its duration of idling: on 133k files (2-3 s a reconcile) polling every
#: 2 s kept a core busy for good.
POLL_INTERVAL_SEC = 2.0
POLL_IDLE_RATIO = 10
BURST_QUIET_SEC = 0.25
BURST_WAIT_SEC = 2.0


@dataclass(frozen=True)
class PendingWork:
    paths: dict[str, int]
    full: bool
    full_generation: int

    @property
    def empty(self) -> bool:
        return not self.paths and not self.full


class PendingChanges:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._paths: dict[str, int] = {}
        self._full = False
        self._full_generation = 0
        self._generation = 0

    def mark(self, paths: Iterable[str]) -> None:
        with self._cond:
            for path in paths:
                self._generation += 1
                self._paths[path] = self._generation
            self._cond.notify_all()

    def mark_full(self) -> None:
        with self._cond:
            self._generation += 1
            self._full = True
            self._full_generation = self._generation
            self._cond.notify_all()

    def generation(self) -> int:
        """Grows with every mark: unchanged over an interval means nothing was marked in it."""
        with self._cond:
            return self._generation

    def count(self) -> int:
        with self._cond:
            return len(self._paths) + (1 if self._full else 0)

    def take(self, timeout: float | None) -> PendingWork | None:
        """Wait up to ``timeout`` for work; a snapshot of it (still pending until :meth:`done`)."""
        with self._cond:
            if not self._paths and not self._full:
                self._cond.wait(timeout)
            if not self._paths and not self._full:
                return None
            return PendingWork(dict(self._paths), self._full, self._full_generation)

    def done(self, work: PendingWork) -> None:
        """Clear what ``work`` covered, keeping anything marked again after it was taken."""
        with self._cond:
            for path, generation in work.paths.items():
                if self._paths.get(path) == generation:
                    del self._paths[path]
            if work.full and self._full_generation == work.full_generation:
                self._full = False
            self._cond.notify_all()

    def snapshot(self, concerns: Callable[[str], bool], *, include_full: bool = False) -> PendingWork:
        """What is pending now for ``concerns``; a synchronous refresh clears it with :meth:`done` afterwards,
        keeping anything marked while it ran."""
        with self._cond:
            paths = {p: g for p, g in self._paths.items() if concerns(p)}
            return PendingWork(paths, include_full and self._full, self._full_generation)

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def wait_until_fresh(self, concerns: Callable[[str], bool], timeout: float) -> None:
        """Block until no pending path satisfies ``concerns``; 3005 (retryable) after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                blocking = self._full or any(concerns(p) for p in self._paths)
                if not blocking:
                    return
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    stale = sorted(p for p in self._paths if concerns(p))[:20]
                    raise CodePlaneError(
                        ErrorCode.INDEX_FRESHNESS_TIMEOUT,
                        f"the index did not catch up with changes on disk within {timeout:.1f}s; retry",
                        details={"pending_paths": stale, "full_reconcile_pending": self._full,
                                 "wait_sec": timeout},
                    )
                self._cond.wait(remaining)


def concerns_prefix(prefix: str) -> Callable[[str], bool]:
    """Pending path ``p`` concerns a query over ``prefix`` if either contains the other (dir events)."""
    if not prefix:
        return lambda _p: True

    def check(path: str) -> bool:
        return (path == prefix or path.startswith(prefix + "/") or prefix.startswith(path + "/"))

    return check


def settle_burst(pending: PendingChanges, work: PendingWork, stop: threading.Event) -> PendingWork:
    """``work`` and whatever is marked until ``pending`` has been quiet for a moment (see BURST_PATHS). If HEAD
    moved meanwhile (the watcher marks a full reconcile), that full reconcile is the one epoch."""
    deadline = time.monotonic() + BURST_WAIT_SEC
    seen = pending.generation()
    while time.monotonic() < deadline and not stop.wait(BURST_QUIET_SEC):
        now = pending.generation()
        if now == seen:
            break
        seen = now
    return pending.take(timeout=0) or work


def poll_interval(last: ReconcileReport | None) -> float:
    """Seconds of idling between two polling reconciles, after ``last`` (the previous full reconcile)."""
    return max(POLL_INTERVAL_SEC, POLL_IDLE_RATIO * last.duration_ms / 1000 if last is not None else 0.0)
