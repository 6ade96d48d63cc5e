"""Per-file freshness (DECISIONS D6, spec §7.6): which paths are known to be newer on disk than the index.

The watcher (and anyone else who learns of a change) marks paths pending; the single writer takes a
snapshot, reindexes, publishes an epoch and clears exactly what it took, unless the path was marked
again meanwhile. A query that touches path X waits, bounded, until every change of X marked *before the query
began* is indexed; it never waits for unrelated files, nor for changes marked after it began (a file another
program rewrites every few milliseconds is never without a pending mark: waiting for none starved every query,
QA63). A pending *full* reconcile concerns every path.

A write batch of this server registers its paths (:meth:`PendingChanges.writing`) from before its commit until its
own refresh is published: the watcher's marks of those files are that write's, and a read that may see the
repository as it was before that write (it has not answered yet, so this is linearizable) skips them instead of
waiting for a refresh that can take seconds (``skip_writes=True``).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
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
        #: Per pending path, a generation up to which all its marks are indexed (it was marked again since).
        self._covered: dict[str, int] = {}
        self._full_covered = 0
        #: Paths of write batches of this server in flight (``writing``), and each batch's size.
        self._writing: Counter[str] = Counter()
        self._batches: dict[int, int] = {}

    def mark(self, paths: Iterable[str]) -> None:
        with self._cond:
            for path in paths:
                if path not in self._paths:  # every earlier mark of it is indexed
                    self._covered[path] = self._generation
                self._generation += 1
                self._paths[path] = self._generation
            self._cond.notify_all()

    def mark_full(self) -> None:
        with self._cond:
            if not self._full:
                self._full_covered = self._generation
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
                current = self._paths.get(path)
                if current == generation:
                    del self._paths[path]
                    self._covered.pop(path, None)
                elif current is not None:  # marked again: what was marked up to the snapshot is indexed
                    self._covered[path] = max(self._covered.get(path, 0), generation)
            if work.full:
                if self._full_generation == work.full_generation:
                    self._full = False
                else:
                    self._full_covered = max(self._full_covered, work.full_generation)
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

    @contextmanager
    def writing(self, paths: Iterable[str]) -> Iterator[None]:
        """Held by a write batch of this server from before its commit until its refresh of ``paths`` is
        published (its files and the directories it creates): see the module docstring."""
        batch = sorted(set(paths))
        parents = {path[:at] for path in batch for at in range(len(path)) if path[at] == "/"}
        with self._cond:
            self._writing.update(batch)
            self._batches[id(batch)] = sum(1 for path in batch if path not in parents)  # files, not directories
        try:
            yield
        finally:
            with self._cond:
                self._writing.subtract(batch)
                self._writing += Counter()  # drops the paths no batch holds any more
                del self._batches[id(batch)]
                self._cond.notify_all()

    def wait_until_fresh(self, concerns: Callable[[str], bool], timeout: float, *, skip_writes: bool = False) -> None:
        """Block until every change marked before the call to a path ``concerns`` names is indexed (not those
        marked meanwhile); 3005 (retryable) after ``timeout`` seconds. ``skip_writes``: marks of a write batch in
        flight are not waited for (the caller answers as of before that write)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            needed = {p: g for p, g in self._paths.items()
                      if concerns(p) and not (skip_writes and p in self._writing)}
            full = self._full_generation if self._full else 0
            while True:
                needed = {p: g for p, g in needed.items() if p in self._paths and self._covered.get(p, 0) < g}
                blocked_full = bool(full) and self._full and self._full_covered < full
                if not needed and not blocked_full:
                    return
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._timeout(sorted(needed), blocked_full, timeout)
                self._cond.wait(remaining)

    def _timeout(self, stale: list[str], full: bool, timeout: float) -> CodePlaneError:
        """3005 for a wait that ended with ``stale`` (sorted) still to index; when some are a write batch in flight
        in this server, it says so (another call's batch, not a program outside: it ends when that call answers)."""
        details: dict[str, object] = {"pending_paths": stale[:20], "pending_total": len(stale),
                                      "full_reconcile_pending": full, "wait_sec": timeout}
        written = sum(1 for p in stale if p in self._writing)
        if not written:
            return CodePlaneError(ErrorCode.INDEX_FRESHNESS_TIMEOUT, f"the index did not catch up with changes on "
                                  f"disk within {timeout:.1f}s; retry", details=details)
        sizes = sorted(self._batches.values(), reverse=True)
        batch = f"a write batch of {sizes[0]:,} files" if len(sizes) == 1 else \
            f"{len(sizes)} write batches ({', '.join(f'{n:,}' for n in sizes)} files)"
        details["write_batch_files"] = sizes
        return CodePlaneError(
            ErrorCode.INDEX_FRESHNESS_TIMEOUT,
            f"the index did not catch up within {timeout:.1f}s: {batch} of another call in this server is still "
            f"being indexed ({written:,} of the {len(stale):,} paths this read waits for); retry once it has answered",
            details=details)


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
