"""When an adopted artifact's ``index.db`` gets SQLite's full integrity check: before it is used, or once the
server is ready.

``quick_check`` reads every page of every b-tree. SQLite's advice for a database file from elsewhere is to run
it before anything else, and for an artifact whose sha256 only a sidecar from the same host vouches for that is
what happens (``artifact_verify.unpack_checked``). It is also most of an adoption's time at scale: on the
133k-file corpus the check of the reference table alone takes ~18 s of one core, and nothing splits it.

A pinned ``index.artifact_sha256`` is different: the user vouches for exactly these bytes (their own CI built
them with ``cpl index export``), so ``index.artifact_integrity: auto`` runs the check *after* ``/ready``, on a
low-priority thread, while the server answers. Every other check still runs before the swap (schema exactly
CodePlane's with ``trusted_schema=OFF``, versions, parts, paths, Tantivy). Until the check passes the store
writes no clean-close marker, so a server stopped before it finished checks the file in full at its next
open. A failure makes the index service drop the adopted index and build from disk (:class:`DeferredCheck`'s
``on_problem``), and ``/status`` says so.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.clock import monotonic
from codeplane.core.config import IndexConfig
from codeplane.core.logging import get_logger

log = get_logger(__name__)

BEFORE_ADOPT = "before_adopt"
AFTER_READY = "after_ready"
#: The check thread's niceness: it must not slow the answers the server gives meanwhile.
_NICENESS = 10


def integrity_mode(config: IndexConfig) -> str:
    """:data:`BEFORE_ADOPT` or :data:`AFTER_READY` for ``config``'s artifact (``auto``: after, when pinned)."""
    if config.artifact_integrity == "auto":
        return AFTER_READY if config.artifact_sha256 is not None else BEFORE_ADOPT
    return config.artifact_integrity


def integrity_problem(conn: sqlite3.Connection) -> str | None:
    """``None`` if ``quick_check`` passes on ``conn``'s database, else what it found."""
    check = conn.execute("PRAGMA quick_check").fetchone()
    if check is None or check[0] != "ok":
        return f"index.db fails SQLite's integrity check: {check[0] if check else 'no answer'}"
    return None


@dataclass
class IntegrityState:
    #: ``pending``, ``running``, ``ok`` or ``failed``.
    state: str
    problem: str | None = None
    ms: int | None = None

    def as_status(self) -> dict[str, object]:
        out: dict[str, object] = {"check": AFTER_READY, "state": self.state}
        if self.ms is not None:
            out["ms"] = self.ms
        if self.problem is not None:
            out["problem"] = self.problem
        return out


class DeferredCheck:
    """One ``quick_check`` of the live ``index.db`` on a thread of its own (a read transaction: the server's
    writes go on beside it in the WAL). ``on_problem`` is called with what it found (an unreadable file
    included); ``cancel`` interrupts it (server stop)."""

    def __init__(self, index_db: Path, on_ok: Callable[[], None], on_problem: Callable[[str], None]) -> None:
        self.index_db = index_db
        self.state = IntegrityState("pending")
        self._on_ok = on_ok
        self._on_problem = on_problem
        self._conn: sqlite3.Connection | None = None
        self._cancelled = threading.Event()
        self._lock = threading.Lock()

    def start(self) -> None:
        threading.Thread(target=self._run, name="codeplane-artifact-integrity", daemon=True).start()

    def cancel(self) -> None:
        self._cancelled.set()
        with self._lock:
            if self._conn is not None:
                self._conn.interrupt()

    def _run(self) -> None:
        try:  # Linux: a thread's own priority (its native id names it)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _NICENESS)
        except (AttributeError, OSError):
            pass
        began = monotonic()
        self.state = IntegrityState("running")
        try:
            with self._lock:
                if self._cancelled.is_set():
                    return
                self._conn = sqlite3.connect(f"file:{self.index_db}?mode=ro", uri=True, isolation_level=None,
                                             check_same_thread=False)
            self._conn.execute("PRAGMA trusted_schema=OFF")
            self._conn.execute("PRAGMA cell_size_check=ON")
            problem = integrity_problem(self._conn)
        except sqlite3.DatabaseError as exc:
            if self._cancelled.is_set():
                self.state = IntegrityState("pending")  # the next open checks in full (no clean-close marker)
                return
            problem = f"index.db cannot be read: {exc}"
        finally:
            with self._lock:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None
        ms = int((monotonic() - began) * 1000)
        if problem is None:
            self.state = IntegrityState("ok", ms=ms)
            log.info("adopted artifact passed SQLite's integrity check after ready", ms=ms)
            self._on_ok()
            return
        self.state = IntegrityState("failed", problem=problem, ms=ms)
        log.error("adopted artifact failed SQLite's integrity check; building the index from disk", problem=problem)
        self._on_problem(problem)
