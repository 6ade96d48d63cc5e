"""The last resort of a stop: the process ends even when a call's thread never returns (spec §4.2).

The drain (server/drain.py) cuts a call that outlasts ``server.shutdown_timeout_sec``, but cutting only stops
waiting for it: a handler in a worker thread (a CPU-bound match, a blocked read) runs on, and the interpreter waits
for every non-daemon thread before it exits. Such a server served nobody yet lived on, a core busy, and as it had
already removed its ``port``/``server.pid`` files and dropped its lock, ``cpl down --force`` (which the failed
``cpl down`` recommends) answered that no server ran: only ``kill <pid>`` stopped it.

So once the server has shut down (``serve`` returns from uvicorn), the threads still running get
:data:`LINGER_SEC`; if one of them still runs then, a daemon thread kills the children's process groups, removes
``port`` and ``server.pid`` and ends the process with ``os._exit`` (exit code :data:`HARD_EXIT_CODE`). What the
exit does after those threads are gone (the worker pool's shutdown, say) is not cut: a slow exit is not a stuck
one. Two more deadlines run from the stop signals: a third signal ends the process after a second, write batch or
not, as ``--force``'s SIGKILL would; and :data:`NET_SEC` past the stop deadline the process ends whatever it waits
for, a write batch in flight aside (it is all-or-nothing and bounded by its own timeouts: hooks, remotes). Before it
ends the process, the hard stop has every call still in flight answered 9003 (``answer_in_flight``: the drain's
:meth:`~codeplane.server.drain.Drain.give_up`, bounded), so a client sees a typed, retryable error rather than its
connection dropping. Until
the process ends, its files and lock stay: ``serve`` leaves them to an ``atexit`` handler when threads remain, which
runs only after the interpreter has joined them, so ``cpl down --force`` can always find a process still there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from codeplane.core.atomic import remove_state_path
from codeplane.core.layout import RepoLayout
from codeplane.core.logging import get_logger

log = get_logger(__name__)

#: sysexits' EX_SOFTWARE: the stop ended the process, but not cleanly (a call's thread had not returned).
HARD_EXIT_CODE = 70
#: How long the threads still running once the server has shut down get to return. The drain already gave the
#: calls ``server.shutdown_timeout_sec`` and a grace (server/drain.py); what remains is a thread that ignores it.
LINGER_SEC = 2.0
#: How long past the stop deadline (``instance.stop_deadline_sec``) a stop may take, however it is held up.
NET_SEC = 60.0
_WRITES_POLL_SEC = 0.05


def lingering_threads() -> list[threading.Thread]:
    """Non-daemon threads other than the caller's: the interpreter waits for each of them before it exits."""
    current = threading.current_thread()
    return [t for t in threading.enumerate() if t.is_alive() and not t.daemon and t is not current]


class HardStop:
    """Ends the process at a deadline (see the module docstring). Thread-safe."""

    def __init__(self, layout: RepoLayout, *, writes_in_flight: Callable[[], bool],
                 answer_in_flight: Callable[[], None] = lambda: None) -> None:
        self._layout = layout
        self._writes_in_flight = writes_in_flight
        #: Answers the calls still in flight (9003) before the process ends; bounded, run on this daemon thread.
        self._answer_in_flight = answer_in_flight
        #: Ends the process whatever it waits for.
        self._deadline: float | None = None
        #: Ends the process if one of ``_threads`` still runs then.
        self._linger: float | None = None
        self._threads: tuple[threading.Thread, ...] = ()
        self._spare_writes = True
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float, *, spare_writes: bool = True) -> None:
        """End the process ``seconds`` from now unless it has ended by then; an earlier deadline stays. With
        ``spare_writes`` false (a third signal) a write batch in flight is not waited for."""
        with self._changed:
            deadline = time.monotonic() + seconds
            if self._deadline is None or deadline < self._deadline:
                self._deadline = deadline
            self._spare_writes = self._spare_writes and spare_writes
            self._start()

    def watch(self, threads: list[threading.Thread], seconds: float = LINGER_SEC) -> None:
        """End the process if one of ``threads`` still runs ``seconds`` from now."""
        with self._changed:
            self._threads = tuple(threads)
            self._linger = time.monotonic() + seconds
            self._start()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="cpl-hard-stop", daemon=True)
            self._thread.start()
        self._changed.notify_all()

    def _watch(self) -> None:
        with self._changed:
            while True:
                now = time.monotonic()
                due = [d for d in (self._deadline, self._linger) if d is not None]
                if not due or now < min(due):
                    self._changed.wait(min(due) - now if due else None)
                    continue
                if (self._deadline is None or now < self._deadline) and not any(t.is_alive() for t in self._threads):
                    self._linger = None  # they all returned: the exit goes on as usual
                    continue
                if self._spare_writes and self._writes_in_flight():
                    self._changed.wait(_WRITES_POLL_SEC)
                    continue
                break
        self._end()

    def _end(self) -> None:
        stuck = sorted(t.name for t in lingering_threads() if t is not threading.main_thread())
        # Best effort throughout: nothing here may keep the process alive.
        with contextlib.suppress(Exception):
            log.error("the stop did not finish in time: ending the process", threads=stuck, exit_code=HARD_EXIT_CODE)
        with contextlib.suppress(Exception):
            self._answer_in_flight()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        _kill_children()
        for path in (self._layout.port_file, self._layout.pid_file):
            with contextlib.suppress(Exception):
                remove_state_path(path)
        os._exit(HARD_EXIT_CODE)


def _kill_children() -> None:
    """SIGKILL the process group of each child that leads one: the subprocess runner starts every child in a
    session of its own (core/procs.py), so ending this process would leave them running. Other children (the
    index's worker pool) watch this process and exit with it. Linux only (``/proc``); elsewhere a no-op."""
    for children in Path("/proc/self/task").glob("*/children"):
        try:
            pids = [int(pid) for pid in children.read_text().split()]
        except (OSError, ValueError):
            continue
        for pid in pids:
            with contextlib.suppress(OSError):
                if os.getpgid(pid) == pid:
                    os.killpg(pid, signal.SIGKILL)
