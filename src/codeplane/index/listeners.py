"""Who the index service tells when it becomes ready, and after each reconcile (``IndexService.on_ready``,
``IndexService.on_reconcile``).

Both kinds of listener may come after the event: the server starts the index on its own thread before it
wires ``/ready`` and its metrics (``server/boot_index.py``). A ready listener is told the next time the index
is ready, which is not always the first time: an adopted artifact that fails its integrity check after ready
is dropped and built from disk, and a listener that came meanwhile waits for that build.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from codeplane.core.logging import get_logger
from codeplane.index.epochs import EpochSummary
from codeplane.index.pipeline import ReconcileReport

log = get_logger(__name__)

#: Reconciles remembered for a listener registered late (:meth:`Reconciles.listen`).
REPLAYED_REPORTS = 16

ReconcileListener = Callable[[ReconcileReport, EpochSummary | None], None]


class ReadyFlag:
    """A :class:`threading.Event` whose listeners are told, once each, the next time it is set."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._waiting: list[Callable[[], None]] = []

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)

    def clear(self) -> None:
        self._event.clear()

    def on_set(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` now if set, else when it next is (on the setter's thread)."""
        with self._lock:
            if not self._event.is_set():
                self._waiting.append(listener)
                return
        listener()

    def set(self) -> bool:
        """Set it and tell who waited; False if it already was set (nobody is told)."""
        with self._lock:
            if self._event.is_set():
                return False
            self._event.set()
            waiting, self._waiting = self._waiting, []
        for listener in waiting:
            listener()
        return True


def _tell(listener: ReconcileListener, report: ReconcileReport, summary: EpochSummary | None) -> None:
    try:
        listener(report, summary)
    except Exception:  # an observer must never fail a write
        log.exception("reconcile listener failed")


class Reconciles:
    """Listeners told after every reconcile or path refresh; one that comes late first hears the last
    :data:`REPLAYED_REPORTS`, under one lock with the delivery, so none is missed or told twice."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._listeners: list[ReconcileListener] = []
        self._published: deque[tuple[ReconcileReport, EpochSummary | None]] = deque(maxlen=REPLAYED_REPORTS)

    def listen(self, listener: ReconcileListener) -> None:
        with self._lock:
            for report, summary in self._published:
                _tell(listener, report, summary)
            self._listeners.append(listener)

    def deliver(self, report: ReconcileReport, summary: EpochSummary | None) -> None:
        with self._lock:
            self._published.append((report, summary))
            for listener in self._listeners:
                _tell(listener, report, summary)
