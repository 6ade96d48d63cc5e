"""The operation ledger (§12.5, D12): ``.codeplane/ledger.db``, append-only and hash-chained.

One :class:`Ledger` per server owns the only writing connection. Every write (an operation row, with
the task row it changed) is one short transaction; the chain head (last ``op_id`` and ``row_hash``) is
kept in memory so appending never reads, and mirrored after each commit in ``ledger.head`` so rows lost with
``ledger.db-wal`` are noticed at the next open (``ledger_head.py``). All methods are thread-safe (one lock around
the connection).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from codeplane.core.clock import iso_utc, now_ms
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.core.storage import probe_write, storage_code, storage_error
from codeplane.core.stores import SIDE_SUFFIXES, sqlite_problem
from codeplane.tasks.chain import ALL_COLUMNS, GENESIS_HASH, HASHED_COLUMNS, ChainReport, row_hash, verify_rows
from codeplane.tasks.ledger_head import HEAD_FILE, HeadMark, Lost, lost_rows, read_head, record_lost
from codeplane.tasks.ledger_identity import MISSING_OP, ledger_id, never_initialised, remember, remembered
from codeplane.tasks.models import (
    BudgetType,
    OperationRecord,
    RepoSnapshot,
    TaskLimits,
    TaskRecord,
    TaskState,
)
from codeplane.tasks.quarantine import QUARANTINE_OP, Quarantined, quarantine, record_missing, restore
from codeplane.tasks.recording import bounded_tool_name
from codeplane.tasks.schema import apply_schema, configure, refuse_newer
from codeplane.tasks.tamper import TAMPER_OP, broken_tail, missing_triggers

log = get_logger(__name__)

_TASK_COLUMNS = (
    "task_id", "opened_at", "closed_at", "state", "repo_head_sha", "limits_json", "session_id", "implicit",
    "index_version", "opened_at_ms", "closed_at_ms", "close_reason", "limit_triggered", "mutation_count",
    "test_run_count", "last_mutation_fingerprint", "last_failure_fingerprint", "mutated_since_failure",
)
#: Columns an update may change; the identity columns are fixed (a trigger rejects them).
_TASK_MUTABLE = ("closed_at", "state", "closed_at_ms", "close_reason", "limit_triggered", "mutation_count",
                 "test_run_count", "last_mutation_fingerprint", "last_failure_fingerprint",
                 "mutated_since_failure")
_UPSERT_TASK = (
    f"INSERT INTO tasks ({', '.join(_TASK_COLUMNS)}) VALUES ({', '.join('?' for _ in _TASK_COLUMNS)}) "
    f"ON CONFLICT (task_id) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in _TASK_MUTABLE)}"
)
_INSERT_OP = f"INSERT INTO operations ({', '.join(ALL_COLUMNS)}) VALUES ({', '.join('?' for _ in ALL_COLUMNS)})"


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)


def operation_values(op: OperationRecord, op_id: int) -> tuple[Any, ...]:
    """The row exactly as stored (str/int/None only), in ``HASHED_COLUMNS`` order."""
    stats = None if op.diff_stats is None else {
        "files_changed": op.diff_stats[0], "insertions": op.diff_stats[1], "deletions": op.diff_stats[2]}
    return (
        op_id, op.task_id, iso_utc(op.timestamp_ms), op.duration_ms, op.op_type, int(op.success),
        op.repo_before_hash, op.repo_after_hash,
        _json(list(op.changed_paths)) if op.changed_paths is not None else None, _json(stats), op.short_diff,
        op.mutation_fingerprint, op.failure_fingerprint, op.failure_class,
        _json(list(op.failing_tests)) if op.failing_tests is not None else None, op.limit_triggered,
        op.session_id, op.kind, op.request_id, op.error_code, _flag(op.no_op), _flag(op.non_progress),
        op.result_bytes, _json(op.detail) if op.detail else None, op.artifact_id, op.artifact_sha256,
    )


def _task_values(task: TaskRecord) -> tuple[Any, ...]:
    return (
        task.task_id, iso_utc(task.opened_at_ms),
        None if task.closed_at_ms is None else iso_utc(task.closed_at_ms), task.state.value,
        task.repo_snapshot.git_head, json.dumps(task.limits.as_dict(), sort_keys=True), task.session_id,
        int(task.implicit), task.repo_snapshot.index_version, task.opened_at_ms, task.closed_at_ms,
        task.close_reason, task.limit_triggered.value if task.limit_triggered else None,
        task.mutation_count, task.test_run_count, task.last_mutation_fingerprint,
        task.last_failure_fingerprint, int(task.mutated_since_failure),
    )


def task_from_row(row: sqlite3.Row) -> TaskRecord:
    limits = json.loads(row["limits_json"])
    return TaskRecord(
        task_id=row["task_id"], session_id=row["session_id"], opened_at_ms=row["opened_at_ms"],
        state=TaskState(row["state"]),
        limits=TaskLimits(int(limits["max_mutations"]), int(limits["max_test_runs"]),
                          int(limits["max_duration_sec"])),
        repo_snapshot=RepoSnapshot(row["repo_head_sha"], row["index_version"]),
        implicit=bool(row["implicit"]), closed_at_ms=row["closed_at_ms"], close_reason=row["close_reason"],
        limit_triggered=BudgetType(row["limit_triggered"]) if row["limit_triggered"] else None,
        mutation_count=row["mutation_count"], test_run_count=row["test_run_count"],
        last_mutation_fingerprint=row["last_mutation_fingerprint"],
        last_failure_fingerprint=row["last_failure_fingerprint"],
        mutated_since_failure=bool(row["mutated_since_failure"]),
    )


def operation_to_public(row: sqlite3.Row) -> dict[str, Any]:
    """A stored operation row as plain JSON values (for ``cpl status`` and ``get_task``)."""
    out: dict[str, Any] = {}
    for key in row.keys():  # noqa: SIM118 - sqlite3.Row is not a mapping
        value = row[key]
        if key in ("changed_paths", "diff_stats", "failing_tests", "detail") and value is not None:
            value = json.loads(value)
        elif key in ("success", "no_op", "non_progress") and value is not None:
            value = bool(value)
        elif key == "op_type" and value is not None:
            value = bounded_tool_name(value)  # a row older than the bound may hold a name of megabytes
        out[key] = value
    return out


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection for ``cpl doctor``/``cpl status`` (never creates or writes the file)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def verify_connection(conn: sqlite3.Connection) -> ChainReport:
    """Walk every operation row in ``op_id`` order and verify the hash chain."""
    seq_row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'operations'").fetchone()
    cursor = conn.execute(f"SELECT {', '.join(ALL_COLUMNS)} FROM operations ORDER BY op_id")
    return verify_rows((tuple(r) for r in cursor), sequence=int(seq_row[0]) if seq_row else None)


#: Rows kept in memory while the ledger cannot be written (beyond, the oldest are dropped: memory stays bounded).
MAX_UNWRITTEN = 10_000


class Ledger:
    """The server's writer for ``ledger.db``. Call :meth:`open` before use and :meth:`close` after."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._last_op_id = 0
        self._last_hash = GENESIS_HASH
        #: Set when ``open`` found the file damaged and moved it aside.
        self.quarantined: Quarantined | None = None
        #: Signs of hand edits ``open`` found (``tamper.py``); recorded in the chain and shown in ``/status``.
        self.tampering: list[str] = []
        #: Committed rows ``open`` found missing (a lost ``ledger.db-wal``, ``ledger_head.py``) and their record.
        self.lost: tuple[Lost, Quarantined] | None = None
        self._head_mark = HeadMark(path.parent)
        self._ledger_id = ""
        #: Rows ``record`` could not write yet, oldest first (``MAX_UNWRITTEN`` at most).
        self._unwritten: list[tuple[OperationRecord, tuple[TaskRecord, ...]]] = []
        #: (device, inode) of the file the connection writes: a ``ledger.db`` deleted or replaced while the server
        #: runs is noticed at the next write, not written to unseen until the restart loses those rows.
        self._identity: tuple[int, int] | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def open(self) -> None:
        """Open (or create) the ledger. A damaged file is quarantined, never replaced in place
        (``quarantine.py``): the new chain's first row records the file's SHA-256 and why it moved.

        All or nothing up to that first commit: an open that fails before it (a full disk) closes what it opened,
        removes the ``ledger.db`` it created, puts back a ledger it moved aside and deletes the records it wrote, so
        the next start finds what this one found. The empty ``ledger.db`` a failed first start left behind was taken
        by the next one for a damaged ledger, quarantined, and reported by ``cpl doctor`` until acknowledged."""
        with self._lock:
            if self._conn is not None:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            undo: list[Callable[[], None]] = []
            try:
                self._open(undo)
            except BaseException as exc:
                self._abandon(undo)
                mapped = (storage_error(exc, doing="opening the ledger", path=self.path)
                          if isinstance(exc, OSError | sqlite3.Error) else None)
                if mapped is None:
                    raise
                raise mapped from exc

    def _open(self, undo: list[Callable[[], None]]) -> None:
        state_dir = self.path.parent
        # Known before anything is created: a remembered ledger id without its file is a deleted ledger.
        gone = remembered(state_dir) if not self.path.exists() else None
        # No chain here, nor ever was: missing triggers are no sign of an edit, and an empty file no damage.
        fresh = never_initialised(self.path)
        moved: Quarantined | None = None
        problem = None if fresh else sqlite_problem(self.path)
        if problem is not None:
            moved = self._quarantine(problem, undo)
        try:
            conn = self._connect(undo, fresh=fresh)
        except sqlite3.DatabaseError as exc:
            cause = exc if storage_code(exc) is not None else probe_write(self.path.parent)
            if moved is not None or cause is not None or not self.path.is_file():
                raise self._storage(cause or exc) from exc
            moved = self._quarantine(f"cannot be opened as a ledger: {exc}", undo)
            conn = self._connect(undo, fresh=True)
        last = conn.execute("SELECT op_id, row_hash FROM operations ORDER BY op_id DESC LIMIT 1").fetchone()
        seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'operations'").fetchone()
        # Continue after the AUTOINCREMENT high-water mark, so a truncated tail stays detectable.
        self._last_op_id = max(int(last["op_id"]) if last else 0, int(seq[0]) if seq else 0)
        self._last_hash = str(last["row_hash"]) if last else GENESIS_HASH
        self._conn = conn
        self._identity = _identity(self.path)
        broken = broken_tail(conn)
        if broken is not None:
            self.tampering.append(f"the hash chain is broken: {broken}")
        # Read before this open commits anything (its first commit rewrites it). The id this file had: its
        # own, or, when even that was only in the lost WAL (a ledger never checkpointed), the one remembered.
        head = read_head(state_dir)
        if not os.path.lexists(state_dir / HEAD_FILE):
            undo.append(functools.partial(_remove, [state_dir / HEAD_FILE]))
        with contextlib.suppress(OSError):  # the first write says it, once
            self._head_mark.open()
        had = conn.execute("SELECT value FROM ledger_meta WHERE key = 'ledger_id'").fetchone()
        previous_id = str(had[0]) if had else (remembered(state_dir) or ("", ""))[0]
        with self.transaction() as tx:
            ident = ledger_id(tx)
            self._ledger_id = ident[0]
            lost = lost_rows(head, previous_id, self._last_op_id) if gone is None and moved is None else None
            if lost is not None:
                self._record_lost(tx, lost, previous_id, undo)
            if gone is not None and moved is None and gone[0] != ident[0]:
                moved = record_missing(state_dir, *gone)
                undo.append(functools.partial((state_dir / moved.file).unlink, missing_ok=True))
                log.warning("ledger.db is missing; a new chain starts and records it", previous=gone[0])
            if moved is not None:
                self.quarantined = moved
                self.append_in(tx, OperationRecord(
                    task_id=None, timestamp_ms=now_ms(), op_type=MISSING_OP if moved.missing else QUARANTINE_OP,
                    success=True, kind="maintenance", detail={"quarantine": moved.to_detail()}))
            if self.tampering:
                log.warning("ledger.db was edited outside CodePlane; recorded", signs=self.tampering)
                self.append_in(tx, OperationRecord(
                    task_id=None, timestamp_ms=now_ms(), op_type=TAMPER_OP, success=True, kind="maintenance",
                    detail={"signs": self.tampering}))
        undo.clear()  # committed: from here the chain itself records what this open did
        remember(state_dir, ident)

    def _abandon(self, undo: list[Callable[[], None]]) -> None:
        """Leave things as the failed open found them: its connection closed first (SQLite's files released), then
        its steps undone, newest first."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._head_mark.close()
        for step in reversed(undo):
            try:
                step()
            except OSError as exc:
                log.warning("a failed open of the ledger could not undo what it did", path=str(self.path),
                            error=str(exc))
        self.quarantined = self.lost = self._identity = None
        self.tampering = []
        self._last_op_id, self._last_hash, self._ledger_id = 0, GENESIS_HASH, ""

    def _record_lost(self, tx: sqlite3.Connection, lost: Lost, previous_id: str,
                     undo: list[Callable[[], None]]) -> None:
        try:
            record = record_lost(self.path.parent, lost, previous_id)
        except OSError as exc:
            raise self._storage(exc) from exc
        undo.append(functools.partial((self.path.parent / record.file).unlink, missing_ok=True))
        self.lost = (lost, record)
        log.warning("ledger.db lost committed entries (its -wal file was lost after an unclean stop); recorded",
                    missing=lost.count, first_op_id=lost.first_op_id, last_op_id=lost.last_op_id,
                    record=record.file)
        self.append_in(tx, OperationRecord(
            task_id=None, timestamp_ms=now_ms(), op_type=MISSING_OP, success=True, kind="maintenance",
            detail={"quarantine": record.to_detail(), "lost": {
                "count": lost.count, "first_op_id": lost.first_op_id, "last_op_id": lost.last_op_id,
                "last_hash": lost.last_hash}}))

    def _connect(self, undo: list[Callable[[], None]], *, fresh: bool) -> sqlite3.Connection:
        if not os.path.lexists(self.path):
            # Created by this open: it holds no row until the open's first commit, so a failure before that removes
            # it (and the side files SQLite made for it) rather than leave an empty ledger.db behind.
            created = [side for side in (Path(f"{self.path}{s}") for s in ("", *SIDE_SUFFIXES))
                       if not os.path.lexists(side)]
            undo.append(functools.partial(_remove, created))
        conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        try:
            conn.row_factory = sqlite3.Row
            refuse_newer(conn, self.path)  # before anything writes: a newer CodePlane's ledger stays as it was
            configure(conn)
            missing = [] if fresh else missing_triggers(conn)
            if missing:
                self.tampering.append(f"append-only triggers were missing ({', '.join(missing)}); recreated")
            apply_schema(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _quarantine(self, reason: str, undo: list[Callable[[], None]]) -> Quarantined:
        try:
            moved = quarantine(self.path, reason)
        except OSError as exc:
            raise self._storage(exc) from exc
        undo.append(functools.partial(self._put_back, moved))
        log.warning("ledger.db is damaged; moved aside and a new chain starts", file=moved.file,
                    sha256=moved.sha256, reason=reason)
        return moved

    def _put_back(self, moved: Quarantined) -> None:
        try:
            restore(self.path, moved)
        except OSError as exc:
            log.warning("ledger.db was moved aside, then the open failed and it could not be put back; it stays "
                        "quarantined", file=moved.file, error=str(exc))
            return
        log.warning("ledger.db is back in place: the open that moved it aside failed; the next start moves it "
                    "aside again", file=moved.file)

    def _storage(self, exc: BaseException) -> CodePlaneError:
        mapped = storage_error(exc, doing="opening the ledger", path=self.path)
        if mapped is not None:
            return mapped
        return CodePlaneError(ErrorCode.INTERNAL_ERROR, f"the ledger {self.path} cannot be opened: {exc}",
                              details={"path": str(self.path)})

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._head_mark.close()

    def _reopen_if_replaced(self) -> None:
        """Start over on the file now at ``path`` when ours was deleted or replaced while open: ``open`` then
        records the deletion (``ledger.missing``) or checks the other file, as a start would."""
        if self._conn is None or _identity(self.path) == self._identity:
            return
        log.warning("ledger.db was deleted or replaced while the server ran; reopening it")
        self.close()
        self.open()

    def prime(self) -> None:
        """Have SQLite start ``ledger.db-wal`` now rather than in the first call's commit: the first write after the
        last close had checkpointed and emptied it writes and syncs the WAL's header (~2-20 ms, the server's warm-up
        calls this after ``/ready``). Rewrites ``user_version`` with its own value: nothing in the ledger changes."""
        with self.transaction() as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            conn.execute(f"PRAGMA user_version = {version}")

    @property
    def is_open(self) -> bool:
        return self._conn is not None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` under the lock; rolls back (and restores the head) on error."""
        with self._lock:
            conn = self._require()
            saved = (self._last_op_id, self._last_hash)
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
                if (self._last_op_id, self._last_hash) != saved and self._ledger_id:
                    self._head_mark.write(self._ledger_id, self._last_op_id, self._last_hash)
            except BaseException:
                # The head first: SQLite ends the transaction itself on some errors (a full disk), and the ROLLBACK's
                # own error ("no transaction is active") skipped this line, so the next row chained from a row that
                # was never written and the ledger read as tampered with for good.
                self._last_op_id, self._last_hash = saved
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise

    # -- writes ----------------------------------------------------------------------------------

    def record(self, op: OperationRecord, tasks: tuple[TaskRecord, ...] = ()) -> int:
        """Append one operation row, first saving the task rows it changed, in one transaction. A row that cannot
        be written now (a full disk) is kept, up to :data:`MAX_UNWRITTEN`, and written before the next one, in
        order: a write done while the disk was full is not missing from the record once it has room."""
        with self._lock:
            self._reopen_if_replaced()
            self._unwritten.append((op, tasks))
            try:
                with self.transaction() as conn:
                    op_id = 0
                    for kept, changed in self._unwritten:
                        for task in changed:
                            self.upsert_task_in(conn, task)
                        op_id = self.append_in(conn, kept)
            except BaseException:
                del self._unwritten[:-MAX_UNWRITTEN]
                raise
            self._unwritten.clear()
            return op_id

    def upsert_task_in(self, conn: sqlite3.Connection, task: TaskRecord) -> None:
        """Insert the task or update its mutable columns (a closed row rejects any update)."""
        conn.execute(_UPSERT_TASK, _task_values(task))

    def append_in(self, conn: sqlite3.Connection, op: OperationRecord) -> int:
        """Append ``op`` inside an open :meth:`transaction`; returns its ``op_id``."""
        op_id = self._last_op_id + 1
        values = operation_values(op, op_id)
        digest = row_hash(self._last_hash, values)
        conn.execute(_INSERT_OP, (*values, self._last_hash, digest))
        self._last_op_id, self._last_hash = op_id, digest
        return op_id

    @property
    def head(self) -> tuple[int, str]:
        """(last op_id, last row_hash)."""
        with self._lock:
            return self._last_op_id, self._last_hash

    # -- reads -----------------------------------------------------------------------------------

    def tasks_in_state(self, state: TaskState, *, limit: int = 1000) -> list[TaskRecord]:
        with self._lock:
            rows = self._require().execute(
                "SELECT * FROM tasks WHERE state = ? ORDER BY opened_at_ms, task_id LIMIT ?",
                (state.value, limit)).fetchall()
        return [task_from_row(r) for r in rows]

    def last_task_per_session(self, *, limit: int) -> list[TaskRecord]:
        """Each session's newest task, for the ``limit`` sessions seen last, oldest first. Newest by opening
        time, then by ``rowid``: ``open_task`` as a session's first call opens its implicit task and the explicit
        one in the same millisecond, and stores them in that order."""
        with self._lock:
            rows = self._require().execute(
                "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY session_id "
                "ORDER BY opened_at_ms DESC, rowid DESC) AS newest, rowid AS stored FROM tasks) "
                "WHERE newest = 1 ORDER BY opened_at_ms DESC, stored DESC LIMIT ?", (limit,)).fetchall()
        return [task_from_row(r) for r in reversed(rows)]

    def get_task(self, task_id: str) -> TaskRecord | None:
        with self._lock:
            row = self._require().execute("SELECT * FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
        return None if row is None else task_from_row(row)

    def recent_operations(self, *, limit: int = 20, task_id: str | None = None) -> list[dict[str, Any]]:
        """The newest ``limit`` rows (oldest first), optionally of one task; chain columns omitted."""
        columns = ", ".join(c for c in HASHED_COLUMNS)
        where, params = ("WHERE task_id = ?", (task_id, limit)) if task_id else ("", (limit,))
        with self._lock:
            rows = self._require().execute(
                f"SELECT {columns} FROM operations {where} ORDER BY op_id DESC LIMIT ?", params).fetchall()
        return [operation_to_public(r) for r in reversed(rows)]

    def counts(self) -> dict[str, int]:
        with self._lock:
            conn = self._require()
            ops = conn.execute("SELECT COUNT(*) FROM operations").fetchone()[0]
            tasks = conn.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
        return {"operations": int(ops), "tasks": int(tasks), "last_op_id": self._last_op_id}

    def verify(self) -> ChainReport:
        with self._lock:
            return verify_connection(self._require())

    def _require(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("ledger is not open")
        return self._conn


def _remove(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino
