"""Git writes of CodePlane's own, under way: the indexer leaves the watcher's batches to the write's reconcile.

A git write (a stash, a checkout of paths) rewrites files and then reconciles the index before its tool returns.
The watcher reports the files as they are rewritten; indexing them then, and again in the reconcile, cost a
1,485-file stash two reindexes (26-47 s under load). While a hold is taken, the indexer waits (bounded: a stuck
write must not stop indexing), then takes what is still pending.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: The longest the indexer waits for the holds to end.
HOLD_MAX_S = 120.0


class WriteHolds:
    def __init__(self) -> None:
        self._count = 0
        self._changed = threading.Condition()

    @contextmanager
    def holding(self) -> Iterator[None]:
        with self._changed:
            self._count += 1
        try:
            yield
        finally:
            with self._changed:
                self._count -= 1
                self._changed.notify_all()

    def wait_released(self, stopping: threading.Event, timeout: float = HOLD_MAX_S) -> bool:
        """Wait while a hold is taken (or until ``stopping``); whether there was one to wait for."""
        with self._changed:
            if not self._count:
                return False
            self._changed.wait_for(lambda: not self._count or stopping.is_set(), timeout=timeout)
            return True
