"""Session expiry on the clock, not only on the next call.

Idle sessions were expired inside a call's admission alone: once agents stopped calling, ``/status``, ``cpl status``
and the session/task metrics showed their sessions and tasks open for good, and the next unrelated call closed them
all stamped with its own time (QA49 F1: 632 s idle against a 300 s timeout). The sweeper runs the tracker's sweep
on a daemon thread, often enough that a task closes within a small fraction of the timeout after it expires.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from codeplane.core.logging import get_logger

log = get_logger(__name__)


def sweep_period(idle_timeout_sec: int) -> float:
    """A tenth of the timeout, between 1 s and 30 s."""
    return min(max(idle_timeout_sec / 10, 1.0), 30.0)


class IdleSweeper:
    def __init__(self, sweep: Callable[[], None], period_sec: float) -> None:
        self._sweep = sweep
        self._period = period_sec
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> IdleSweeper:
        self._thread = threading.Thread(target=self._run, name="cpl-session-sweep", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stopped.wait(self._period):
            try:
                self._sweep()
            except Exception:  # the next period tries again; a call's admission sweeps as well
                log.exception("idle session sweep failed")
