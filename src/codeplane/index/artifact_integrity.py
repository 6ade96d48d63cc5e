"""When an adopted artifact's ``index.db`` gets SQLite's full integrity check: before it is used, or once the
server is ready.

``quick_check`` reads every page of every b-tree. SQLite's advice for a database file from elsewhere is to run
it before anything else, and for an artifact whose sha256 only a sidecar from the same host vouches for that is
what happens (``artifact_verify.unpack_checked``). It is also most of an adoption's time at scale (~15 s of one
core on the 133k-file corpus's 5 GB), so before adoption it runs table by table on two cores
(:func:`check_tables`: every b-tree's pages, in the time of the largest table, the references), and the part
only a check of the whole file does (page accounting across tables) runs after ready, as below.

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
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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


def integrity_problem(conn: sqlite3.Connection, table: str | None = None) -> str | None:
    """``None`` if ``quick_check`` passes on ``conn``'s database (or on ``table``'s b-trees alone), else what it
    found."""
    pragma = "PRAGMA quick_check" if table is None else "PRAGMA quick_check('{}')".format(table.replace("'", "''"))
    check = conn.execute(pragma).fetchone()
    if check is None or check[0] != "ok":
        return f"index.db fails SQLite's integrity check: {check[0] if check else 'no answer'}"
    return None


class FileArrival:
    """A file checked while it is still written front to back (an artifact's ``index.db`` as it unpacks), and where
    each table's pages end in it (the manifest's ``index_db_layout``): a table's check waits only for its pages.

    An exported ``index.db`` keeps each table's rows and indexes in one run of pages (``VACUUM INTO``), the
    largest table first, so its check begins while the rest of the file still unpacks, on the core the unpack
    leaves idle. The layout is untrusted and decides only *when* a table is checked, never whether:
    :func:`check_tables` checks again, once the file is complete and on a fresh connection, every table whose
    check found anything (a layout that lied has it read pages not written yet: zeros, which never pass), and
    checks the tables the layout leaves out once the file is complete. The writer pre-sizes the file, so SQLite
    sees its final size from the start."""

    def __init__(self, path: Path, layout: Callable[[], Sequence[tuple[str, int]]]) -> None:
        self._path = path
        self._layout_source = layout
        self._ends: dict[str, int] | None = None
        self._page_size = 0
        self._written = 0
        self._state = "writing"
        self._changed = threading.Condition()
        self._layout_read = threading.Lock()
        self._turn_taken = False

    def wrote(self, total: int) -> None:
        """The writer's bytes so far (each on disk, in the page cache, before it says so)."""
        with self._changed:
            self._written = total
            self._changed.notify_all()

    def finish(self, complete: bool) -> None:
        """The file is whole (``True``), or will never be (the unpack failed or the check was cancelled)."""
        with self._changed:
            if self._state == "writing":
                self._state = "complete" if complete else "failed"
            self._changed.notify_all()

    def order(self) -> list[str]:
        """The tables by where their pages end (the layout's order), once the layout is read."""
        return list(self._ends_by_table())

    def wait(self, table: str | None) -> bool:
        """Block until ``table``'s pages are written (``None``, or a table the layout leaves out: the whole file);
        whether the file is complete. Raises when it will never be."""
        end = self._ends_by_table().get(table) if table is not None else None
        with self._changed:
            while True:
                self._raise_if_failed()
                if self._state == "complete":
                    return True
                if end is not None and self._page_size and self._written >= end * self._page_size:
                    return False
                if end is not None and not self._page_size and self._written >= _HEADER:
                    self._page_size = self._read_page_size()
                    continue
                self._changed.wait(0.5)

    @contextmanager
    def turn(self, table: str) -> Iterator[bool]:
        """:meth:`wait` for ``table``'s pages, then, while the file is still being written, for the one turn to
        check: the unpack needs the other core (the largest table's check, begun first, sets the time; the
        others catch up once the file is whole). Yields whether the file is complete."""
        complete = self.wait(table)
        with self._changed:
            while not complete and self._turn_taken:
                self._raise_if_failed()
                complete = self._state == "complete"
                if not complete:
                    self._changed.wait(0.5)
            taken = not complete
            self._turn_taken = self._turn_taken or taken
        try:
            yield complete
        finally:
            if taken:
                with self._changed:
                    self._turn_taken = False
                    self._changed.notify_all()

    def _raise_if_failed(self) -> None:
        if self._state == "failed":
            raise sqlite3.OperationalError("the file being checked was never completed")

    def _ends_by_table(self) -> dict[str, int]:
        with self._layout_read:
            if self._ends is None:
                self._ends = dict(self._layout_source())
            return self._ends

    def _read_page_size(self) -> int:
        with self._path.open("rb") as handle:
            header = handle.read(_HEADER)
        size = int.from_bytes(header[16:18], "big")
        return 65536 if size == 1 else max(size, 512)


#: Bytes of SQLite's file header (the page size is at offset 16).
_HEADER = 100


def check_tables(open_conn: Callable[[], sqlite3.Connection], workers: int,
                 passed: Callable[[str], None] | None = None,
                 arrival: FileArrival | None = None) -> tuple[str | None, bool]:
    """``quick_check`` of every table's b-trees (its rows' and its indexes'), spread over ``workers`` threads each
    with a connection from ``open_conn``: (what it found, whether the whole file was checked).

    One ``quick_check`` of a whole file runs on one core, and at scale one table (the references) is most of the
    file: table by table on two cores, the check before adoption takes the time of its largest table. Checked
    so, every page of every b-tree is read and checked, as before anything else reads the file; what only a
    check of the whole file sees is the page accounting across tables (a page claimed by two tables, pages in
    none, the free list). An empty free list is required here (``cpl index export`` writes the file with
    ``VACUUM INTO``; any other file is checked whole), and the caller owes the whole-file check once the
    server is ready (``DeferredCheck``). One worker, or a free list: the whole file, here.

    ``passed`` hears each table whose b-trees passed (``sqlite_schema`` first), so checks that read only those
    tables may run while the largest is still checked. With ``arrival`` (the file still being written), tables
    are checked in the order their pages end, each once its pages are written; without, the largest first (by
    each table's largest rowid: one descent of its b-tree, the only read before its check)."""
    if arrival is not None:
        arrival.wait("sqlite_schema")
    first = open_conn()
    free = first.execute("PRAGMA freelist_count").fetchone()
    if workers < 2 or free is None or free[0] != 0:
        if arrival is not None:
            arrival.wait(None)
        return integrity_problem(first), True
    tables = [name for (name,) in first.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").fetchall()]
    hinted = [name for name in arrival.order() if name in tables] if arrival is not None else []
    if hinted:
        order = [*hinted, *sorted(set(tables) - set(hinted))]
    else:
        if arrival is not None:
            arrival.wait(None)
        order = sorted(tables, key=lambda name: -_rows_at_most(first, name))
    queue = deque(["sqlite_schema", *order])
    problems: list[str] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def drain(conn: sqlite3.Connection) -> None:
        while True:
            with lock:
                # A problem does not stop the others: each table that passes is still reported (``passed``), so
                # what runs beside the check never depends on which thread found the problem first.
                if not queue or failures:
                    return
                table = queue.popleft()
            problem = _check_table(conn, table, open_conn, arrival)
            if problem is not None:
                with lock:
                    problems.append(problem)
            elif passed is not None:
                passed(table)

    def run(conn: Callable[[], sqlite3.Connection]) -> None:
        # A failure (an unreadable page, an interrupt) stops every thread at its next table, whichever met it.
        try:
            drain(conn())
        except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread below
            with lock:
                failures.append(exc)

    helpers = [threading.Thread(target=run, args=(open_conn,), name="codeplane-artifact-check-helper", daemon=True)
               for _ in range(workers - 1)]
    for thread in helpers:
        thread.start()
    run(lambda: first)
    for thread in helpers:
        thread.join()
    if failures:
        raise failures[0]
    return (problems[0] if problems else None), False


def _check_table(conn: sqlite3.Connection, table: str, open_conn: Callable[[], sqlite3.Connection],
                 arrival: FileArrival | None) -> str | None:
    if arrival is None:
        return integrity_problem(conn, table)
    with arrival.turn(table) as complete:
        try:
            problem = integrity_problem(conn, table)
        except sqlite3.OperationalError:
            raise  # interrupted (a cancel), or the file was never completed
        except sqlite3.DatabaseError:
            if complete:
                raise
            problem = "unreadable"
    if problem is None:
        return None
    # A layout that lied had this (or an earlier) check read pages not written yet, and a connection keeps what
    # it read: the verdict is a fresh connection's, on the whole file.
    log.info("checking a table again once the file is whole", table=table, found=problem, complete=complete)
    arrival.wait(None)
    fresh = open_conn()
    try:
        return integrity_problem(fresh, table)
    finally:
        fresh.close()


def _rows_at_most(conn: sqlite3.Connection, table: str) -> int:
    """About how big ``table`` is, cheaply (its largest rowid: one b-tree descent); 0 without a rowid."""
    try:
        row = conn.execute('SELECT max(rowid) FROM "{}"'.format(table.replace('"', '""'))).fetchone()
    except sqlite3.OperationalError:  # WITHOUT ROWID
        return 0
    return int(row[0]) if row is not None and isinstance(row[0], int) else 0


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
