"""The task tracker: the :class:`~codeplane.core.calls.CallObserver` that accounts for every tool call.

Before a call it admits or refuses it (``budgets.admit``); after a call - every call, refused, failed
or invalid ones included - it computes convergence signals and appends one ledger row. It also serves
``open_task``/``close_task``/``get_task``/``reset_budget`` and the ``tasks`` status section.

``open_task`` *closes* the session's current OPEN task as CLOSED_INTERRUPTED (reason ``superseded by
open_task``) rather than refusing: the implicit task every session starts with must be replaceable
without an extra call, and the answer names the task it closed so nothing happens silently. Not
CLOSED_SUCCESS: the client never said how the task ended, and §12.2 infers no success (nor a failure).

A task past its ``max_duration_sec`` closes CLOSED_FAILED whenever it is reached - by any call of its session,
meta ones included, by ``get_task``/``status`` from elsewhere, by the idle sweep or by a stop - so it is never
listed OPEN with 0 s left, nor closed as a success or an interruption.

An idle session ends (§12.2: client disconnect), but a task it leaves closed is never replaced implicitly
(§12.2, §12.4): the session comes back holding it, so writes and test runs are refused (6001/6003) until
``open_task``; otherwise a budget-closed task became, 30 idle minutes later, a fresh task with the default
limits. Only an implicit task that was merely idle is replaced by a new implicit one, and the session's next
answer says so in a warning. A restart is the same (§12.4: clients must open a new task): ``start`` remembers each
session's last task from the ledger, so a session that declared ``max_mutations: 1`` and returns after ``cpl down``
/ ``cpl up`` gets 6003 naming its interrupted task, not 200 writes under a new implicit one.

Thread-safety: one re-entrant lock guards all session state; the dispatcher calls from the event loop,
maintenance runs in a worker thread.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Literal

from codeplane.core import unanswered
from codeplane.core.artifacts import ArtifactRef, ArtifactStore
from codeplane.core.calls import CallInfo, CallNotes, CallOutcome, TaskMeta
from codeplane.core.clock import now_ms
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.tasks.budgets import admit
from codeplane.tasks.chain import HASHED_COLUMNS
from codeplane.tasks.closing import close_left_open, deadline_failure, interruption
from codeplane.tasks.convergence import arguments_digest, observe, refusal_fingerprint
from codeplane.tasks.idle import IdleSweeper, sweep_period
from codeplane.tasks.inspection import RECENT_OPERATIONS, brief_operation
from codeplane.tasks.ledger import Ledger, operation_values
from codeplane.tasks.models import (
    NEAR_LIMIT_SHARE,
    OperationRecord,
    ReadUse,
    RepoSnapshot,
    TaskLimits,
    TaskRecord,
    TaskState,
)
from codeplane.tasks.recording import operation_record
from codeplane.tasks.retention import RetentionReport, run_retention
from codeplane.tasks.sessions import DormantSessions, Session, SessionTable, comes_back_to
from codeplane.tasks.settings import TrackerSettings

log = get_logger(__name__)
_SWEEP_EVERY_MS = 1_000
STATUS_MAX_TASKS = 20
STATUS_RECENT_OPS = RECENT_OPERATIONS
#: Sessions remembered after expiry, with the closed task they come back to (oldest forgotten first).
DORMANT_MAX = 4096
#: Runs remembered with the task that started them (the run store keeps far fewer).
RUN_OWNERS_MAX = 1024


@dataclass(frozen=True)
class TaskView:
    """A task plus its session's read budget, as ``get_task``/``open_task``/``close_task`` return it."""

    task: TaskRecord
    read: ReadUse | None
    budget: str
    closed_previous: TaskRecord | None = None


def new_task_id() -> str:
    return f"task_{uuid.uuid4().hex[:16]}"


class TaskTracker:
    """Sessions, tasks and budgets in memory; the ledger on disk. Call :meth:`start` before use."""

    #: What the last :meth:`maintain` run could not do, or ``None``.
    maintenance_error: str | None = None

    def __init__(self, ledger: Ledger, settings: TrackerSettings, *,
                 snapshot: Callable[[], RepoSnapshot] = lambda: RepoSnapshot(None),
                 artifacts: ArtifactStore | None = None, clock: Callable[[], int] = now_ms) -> None:
        self.ledger = ledger
        self.settings = settings
        self._snapshot = snapshot
        self._artifacts = artifacts
        self._clock = clock
        self._lock = threading.RLock()
        self._sessions = SessionTable(settings.idle_timeout_sec * 1000)
        self._last_sweep = 0
        self._idle: IdleSweeper | None = None
        #: request_id -> (task_id at admission, limit that refused it or None, whether admission refused it)
        self._inflight: dict[str, tuple[str, str | None, bool]] = {}
        #: request_id -> digest of a mutating call's arguments (dispatcher's note_arguments), for refused ones
        self._arguments: dict[str, str] = {}
        #: request_id -> content-free facts a task tool adds to its own ledger row
        self._call_detail: dict[str, dict[str, Any]] = {}
        #: Artifacts are written off the call path by one worker; the row only needs id + sha256.
        self._artifact_writer: ThreadPoolExecutor | None = None
        #: The last ledger rows, for the status section (which describe includes, so it must not hit SQLite):
        #: read back from the ledger at start, then every row this tracker writes (calls, interruptions, deadlines).
        self._recent: deque[dict[str, Any]] = deque(maxlen=STATUS_RECENT_OPS)
        #: session_id -> the closed task an ended session comes back to, or None: a new implicit task (and why).
        self._dormant = DormantSessions(DORMANT_MAX)
        #: run_id -> the task its run_test_targets call was admitted under: the run's failure is that task's.
        self._run_owners: OrderedDict[str, str] = OrderedDict()
        #: Told ``OPEN`` when a task opens and its final state when one closes (the server's task metrics): the
        #: tracker is where every task begins and ends, implicit ones that ``open_task`` replaces included.
        self.on_transition: Callable[[TaskState], None] | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> list[str]:
        """Open the ledger, close every task a previous server left OPEN (``closing.close_left_open``: CLOSED_FAILED
        past its deadline, else CLOSED_INTERRUPTED), and remember each session's last task: a session that returns
        comes back to it as after an idle expiry, never to a new task with the default limits (§12.4)."""
        self.ledger.open()
        self._artifact_writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cpl-artifacts")
        interrupted = close_left_open(self.ledger, self._clock(), record_operations=self.settings.record_operations,
                                      tell=self._tell)
        if interrupted:
            log.info("interrupted tasks left open by a previous server", count=len(interrupted))
        for task in self.ledger.last_task_per_session(limit=DORMANT_MAX):
            if task.state.closed:  # all are, after close_left_open; an OPEN one must never be resumed
                self._dormant.remember(task.session_id, *comes_back_to(task))
        # After the interruptions, so the rows this start appended are among them: a restart must not empty the
        # last operations an operator looks at after a crash.
        self._reload_recent()
        self._idle = IdleSweeper(self.sweep_idle, sweep_period(self.settings.idle_timeout_sec)).start()
        return interrupted

    def sweep_idle(self) -> None:
        with self._lock:
            self._sweep(self._clock())

    def end_session(self, session_id: str, reason: str) -> None:
        """The client ended the session (an MCP session's DELETE): its OPEN task closes CLOSED_INTERRUPTED now, as
        after an idle timeout, instead of staying listed OPEN to every other client for the idle timeout."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None and not session.in_flight:
                self._sessions.drop(session_id)
                self._expire(session, self._clock(), reason)

    def stop(self, *, interrupt_open: bool = True) -> None:
        """Finish pending artifact writes, close the tasks still OPEN as CLOSED_INTERRUPTED ("server stopped":
        ``cpl status`` after ``cpl down`` listed them as open), and close the ledger. A server killed before it
        could (``interrupt_open=False`` stands for one) leaves them to the next ``start`` ("server restart")."""
        if self._idle is not None:
            self._idle.stop()
        writer, self._artifact_writer = self._artifact_writer, None
        if writer is not None:
            writer.shutdown(wait=True)
        if interrupt_open and self.ledger.is_open:
            with self._lock:
                now = self._clock()
                # The tasks as the sessions hold them: the ledger's copy lacks what calls still running (cut
                # short by the stop) were admitted for, and a task past its deadline failed, it was not interrupted.
                for session in self._sessions.all():
                    self._settle(session, now)
                    if session.task.state is TaskState.OPEN:
                        session.task = session.saved_task = self._interrupt(session.task, now, "server stopped")
                    elif session.saved_task != session.task:
                        self._save(session.task)
                        session.saved_task = session.task
                for task in self.ledger.tasks_in_state(TaskState.OPEN, limit=1_000_000):
                    self._interrupt(task, now, "server stopped")
        self.ledger.close()

    def run_retention(self) -> RetentionReport:
        return run_retention(self.ledger, now_ms=self._clock(), max_age_days=self.settings.retention_days,
                             keep_tasks=self.settings.retention_tasks)

    def maintain(self) -> dict[str, int]:
        """Ledger retention and artifact GC; run at start and periodically. Never raises.

        The steps are independent: a retention that failed at every run also skipped artifact GC, which shared
        its ``try``. A failure is logged and kept in :attr:`maintenance_error` (``/status``'s ``last_error``)
        until a run in which every step succeeds."""
        out = {"deleted_operations": 0, "deleted_tasks": 0, "deleted_artifacts": 0}
        failed: list[str] = []
        try:
            report = self.run_retention()
            out.update(deleted_operations=report.deleted_operations, deleted_tasks=report.deleted_tasks)
        except Exception as exc:  # maintenance must never take the server down; the next run retries
            log.exception("ledger retention failed")
            failed.append(f"ledger retention failed: {type(exc).__name__}: {exc}")
        if self._artifacts is not None:
            try:
                out["deleted_artifacts"] = self._artifacts.gc(now=self._clock())
            except Exception as exc:
                log.exception("artifact clean-up failed")
                failed.append(f"artifact clean-up failed: {type(exc).__name__}: {exc}")
        self.maintenance_error = "; ".join(failed) or None
        if out["deleted_operations"]:  # retention appended its checkpoint row, which no call of ours wrote
            self._reload_recent()
        if any(out.values()):
            log.info("ledger maintenance", **out)
        return out

    # -- CallObserver ----------------------------------------------------------------------------

    def before_call(self, info: CallInfo) -> None:
        with self._lock:
            now = self._clock()
            self._sweep(now)
            session = self._session(info.session_id, now)
            decision = admit(session.task, session.read, self.settings.read_limits, info.kind, now)
            if session.task.state is TaskState.OPEN and decision.task.state is not TaskState.OPEN:
                self._tell(decision.task.state)  # a budget or the deadline closed it
            session.task, session.read = decision.task, decision.read
            if info.kind == "mutation" and decision.error is None:
                self._own_write(session)
            limit = decision.limit_triggered.value if decision.limit_triggered else None
            self._inflight[info.request_id] = (session.task.task_id, limit if decision.error else None,
                                               decision.error is not None)
            session.in_flight += 1
            if decision.error is not None:
                raise decision.error

    def after_call(self, outcome: CallOutcome) -> CallNotes | None:
        info = outcome.info
        with self._lock:
            now = self._clock()
            session = self._session(info.session_id, now)
            admitted = self._inflight.pop(info.request_id, None)
            if admitted is not None:
                session.in_flight = max(0, session.in_flight - 1)
            task_id, limit, refused = admitted or (session.task.task_id, None, True)
            extra = self._call_detail.pop(info.request_id, None)
            digest = self._arguments.pop(info.request_id, None)
            attempt = (refusal_fingerprint(digest, outcome.error_code)
                       if digest is not None and not refused and not outcome.ok else None)
            same_task = task_id == session.task.task_id
            convergence = observe(session.task, outcome, update_task=same_task, refused_attempt=attempt)
            if session.task.state is TaskState.OPEN and convergence.task.state is not TaskState.OPEN:
                self._tell(convergence.task.state)  # a budget ran out
            session.task = convergence.task
            if info.kind == "read" and outcome.ok:
                read = session.read
                session.read = ReadUse(read.bytes + outcome.result_bytes, read.calls, read.resets)
            warnings: tuple[str, ...] = (session.notice,) if session.notice else ()
            session.notice = None
            op_id: int | None = None
            recording = self.settings.record_operations
            record = operation_record(outcome, task_id=task_id, convergence=convergence, limit_triggered=limit,
                                      extra_detail=extra, stash=self._stash if recording else None)
            if recording:
                try:
                    op_id = self.ledger.record(record, self._unsaved(session))
                    session.saved_task = session.task
                except Exception as exc:  # the answer must still go out; say so instead
                    log.exception("ledger write failed", tool=info.tool)
                    warnings += (f"ledger write failed: {type(exc).__name__}: {exc}",)
            if info.kind != "read":
                unanswered.settle(self.ledger.path.parent, info.request_id)
                unanswered.admitted(None)
            self._note_recent(record, op_id)
            # The row's id and the budget that refused the call: the observer labels its metric and log with them.
            return replace(convergence.notes(warnings), op_id=op_id, limit_triggered=limit)

    def note_arguments(self, request_id: str, tool: str, arguments: dict[str, Any]) -> None:
        """The arguments of the mutating call ``request_id``, before it runs: if its handler refuses it, the same
        refusal repeated is flagged ``no_op`` (only their digest is kept, never the content)."""
        digest = arguments_digest(tool, arguments)
        with self._lock:
            self._arguments[request_id] = digest

    def task_meta(self, session_id: str) -> TaskMeta | None:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return None
            now = self._clock()
            # A closed task's budgets are spent news (issue 16): only an open task's, and the session's read
            # budget (reads go on after a close), belong on every answer.
            near = ((session.task.state is TaskState.OPEN and session.task.near_limit(now))
                    or session.read.near_limit(self.settings.read_limits))
            return TaskMeta(session.task.task_id, session.task.state.value, self._near_line(session, now), near)

    # -- task tools ------------------------------------------------------------------------------

    def open_task(self, session_id: str, limits: dict[str, int] | None = None, *,
                  request_id: str | None = None) -> TaskView:
        """Start a new task for the session; its current OPEN task closes CLOSED_INTERRUPTED (superseded)."""
        with self._lock:
            now = self._clock()
            session = self._session(session_id, now)
            defaults = self.settings.default_limits.as_dict()
            chosen = TaskLimits(**{**defaults, **{k: v for k, v in (limits or {}).items() if v is not None}})
            previous = session.task
            closed: TaskRecord | None = None
            if previous.state is TaskState.OPEN:
                closed = previous.with_changes(state=TaskState.CLOSED_INTERRUPTED, closed_at_ms=now,
                                               close_reason="superseded by open_task")
            task = self._new_task(session_id, chosen, now, implicit=False)
            # A previous task closed by this call's admission (its deadline) is not stored as closed yet.
            unsaved = previous if closed is None and previous != session.saved_task else None
            self._save(*(t for t in (unsaved, closed, task) if t is not None))
            if closed is not None:
                self._tell(closed.state)
            session.task = session.saved_task = task
            self._note(request_id, {"opened": task.task_id, "limits": chosen.as_dict(),
                                    **({"closed_previous": previous.task_id} if closed else {})})
            return TaskView(task, session.read, self._budget_line(session), closed)

    def close_task(self, session_id: str, outcome: Literal["success", "failed"], *,
                   request_id: str | None = None) -> TaskView:
        """Close the session's current task; 6003 if it is already closed. Tasks never reopen."""
        with self._lock:
            now = self._clock()
            session = self._session(session_id, now)
            task = session.task
            if task.state is not TaskState.OPEN:
                raise CodePlaneError(
                    ErrorCode.TASK_ALREADY_CLOSED,
                    f"task {task.task_id} is already {task.state.value}" + (
                        f" ({task.close_reason})" if task.close_reason else ""),
                    details={"task_id": task.task_id, "task_state": task.state.value,
                             "close_reason": task.close_reason, "hint": "call open_task to start a new task"})
            state = TaskState.CLOSED_SUCCESS if outcome == "success" else TaskState.CLOSED_FAILED
            closed = task.with_changes(state=state, closed_at_ms=now, close_reason=f"closed by client ({outcome})")
            self._save(closed)
            self._tell(closed.state)
            session.task = session.saved_task = closed
            self._note(request_id, {"closed": closed.task_id, "outcome": outcome})
            return TaskView(closed, session.read, self._budget_line(session))

    def get_task(self, session_id: str, task_id: str | None = None) -> TaskView:
        """The session's current task, or any task by id (live state if a session holds it); else 6002."""
        with self._lock:
            session = self._session(session_id, self._clock())
            if task_id is None or task_id == session.task.task_id:
                return TaskView(session.task, session.read, self._budget_line(session))
            live = next((s for s in self._sessions.all() if s.task.task_id == task_id), None)
            if live is not None:
                self._settle(live, self._clock())
                return TaskView(live.task, None, live.task.budget_line())
            stored = self.ledger.get_task(task_id)
            if stored is None:
                raise CodePlaneError(ErrorCode.TASK_NOT_FOUND, f"no task {task_id!r} (never existed or expired)",
                                     details={"task_id": task_id})
            return TaskView(stored, None, stored.budget_line())

    def task_operations(self, task_id: str, limit: int) -> list[dict[str, Any]]:
        """The task's newest ``limit`` ledger rows, oldest first (empty when the ledger is closed)."""
        return self.ledger.recent_operations(limit=limit, task_id=task_id) if self.ledger.is_open else []

    def reset_budget(self, session_id: str, *, request_id: str | None = None) -> tuple[ReadUse, ReadUse]:
        """Reset the session's read budget; returns (before, after). Recorded in the call's ledger row."""
        with self._lock:
            session = self._session(session_id, self._clock())
            before = session.read
            session.read = ReadUse(0, 0, before.resets + 1)
            self._note(request_id, {"reset_read_budget": {"calls": before.calls, "bytes": before.bytes,
                                                          "resets": session.read.resets}})
            return before, session.read

    # -- test runs -------------------------------------------------------------------------------

    def claim_run(self, run_id: str, request_id: str) -> None:
        """Note that the call ``request_id`` (still in flight) started ``run_id``: its failure is that call's task's."""
        with self._lock:
            admitted = self._inflight.get(request_id)
            if admitted is None:
                return
            self._run_owners[run_id] = admitted[0]
            while len(self._run_owners) > RUN_OWNERS_MAX:
                self._run_owners.popitem(last=False)

    def owns_run(self, run_id: str, request_id: str) -> bool:
        """Whether the call ``request_id`` (still in flight) runs under the task that started ``run_id``, so its
        answer may carry the run's failure to that task (§12.3: non-progress is judged within a task). The
        first caller to see the failure got it, another session's task or the next task of the same session."""
        with self._lock:
            admitted = self._inflight.get(request_id)
            return admitted is not None and self._run_owners.get(run_id) == admitted[0]

    # -- status ----------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        with self._lock:
            now = self._clock()
            self._sweep(now)
            sessions = self._sessions.all()
            for session in sessions:
                self._settle(session, now)
            # Compact rows (get_task has the full record): id, owner, time left and every budget's use.
            open_tasks = [
                {"task_id": s.task.task_id, "session_id": s.session_id, "implicit": s.task.implicit,
                 "opened_at_ms": s.task.opened_at_ms,
                 "remaining_duration_sec": max(0, s.task.deadline_ms - now) // 1000,
                 "counters": {"mutation_count": s.task.mutation_count, "test_run_count": s.task.test_run_count},
                 "limits": s.task.limits.as_dict(), "budget": self._budget_line(s),
                 "read_budget": {"calls": s.read.calls, "bytes": s.read.bytes, "resets": s.read.resets}}
                # Newest first: past the bound, the tasks just opened are the ones an operator looks for.
                for s in sorted(sessions, key=lambda s: (-s.task.opened_at_ms, s.task.task_id))
                if s.task.state is TaskState.OPEN
            ]
            recent = list(self._recent)
        # Memory only on purpose: describe includes this section, so it must not query the ledger (the last
        # operations were read from it at start, see _reload_recent).
        ledger: dict[str, Any] = {"path": str(self.ledger.path), "recording": self.settings.record_operations,
                                  "last_op_id": self.ledger.head[0]}
        return {
            "sessions": len(sessions),
            "open_tasks": open_tasks[:STATUS_MAX_TASKS],
            "open_task_count": len(open_tasks),
            "default_limits": self.settings.default_limits.as_dict(),
            "read_limits": {"max_calls": self.settings.read_limits.max_calls,
                            "max_bytes": self.settings.read_limits.max_bytes},
            "recent_operations": recent,
            "ledger": ledger,
        }

    # -- internals -------------------------------------------------------------------------------

    def _session(self, session_id: str, now: int) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            kept, notice = self._dormant.pop(session_id)
            task = kept or self._new_task(session_id, self.settings.default_limits, now, implicit=True)
            session = Session(session_id, now, now, task, ReadUse(), saved_task=kept,
                              notice=f"{notice}; a new implicit task {task.task_id} began" if notice else None)
            self._sessions.add(session)
        session.last_seen_ms = max(session.last_seen_ms, now)
        return session

    def _new_task(self, session_id: str, limits: TaskLimits, now: int, *, implicit: bool) -> TaskRecord:
        try:
            snapshot = self._snapshot()
        except Exception:  # a task must open even if HEAD cannot be read (e.g. a broken ref)
            log.exception("repo snapshot failed")
            snapshot = RepoSnapshot(None)
        self._tell(TaskState.OPEN)
        return TaskRecord(task_id=new_task_id(), session_id=session_id, opened_at_ms=now, state=TaskState.OPEN,
                          limits=limits, repo_snapshot=snapshot, implicit=implicit)

    def _tell(self, state: TaskState) -> None:
        if self.on_transition is not None:
            try:
                self.on_transition(state)
            except Exception:  # an observer must never fail a call
                log.exception("task transition observer failed")

    def _stash(self, data: bytes) -> ArtifactRef | None:
        store, writer = self._artifacts, self._artifact_writer
        if store is None or writer is None:
            return None

        def write() -> None:
            try:
                store.put_bytes(data)
            except OSError as exc:  # artifacts are disposable (§12.5); the row stays valid without it
                log.warning("could not store artifact", error=str(exc))

        try:
            writer.submit(write)
        except RuntimeError:  # shutting down: no artifact, still a row
            return None
        return store.ref_for(data)

    def _budget_line(self, session: Session) -> str:
        return f"{session.task.budget_line()}, {session.read.line(self.settings.read_limits)}"

    def _near_line(self, session: Session, now: int) -> str:
        """The budgets from :data:`NEAR_LIMIT_SHARE` of their limit on, as ``meta.budget`` shows them: the one
        running out, not the four (92 bytes on every answer)."""
        task, read, limits = session.task, session.read, self.settings.read_limits
        uses: tuple[tuple[str, int, int], ...] = (
            ("read_calls", read.calls, limits.max_calls), ("read_bytes", read.bytes, limits.max_bytes))
        if task.state is TaskState.OPEN:
            elapsed = max(0, now - task.opened_at_ms) // 1000
            uses = (("mutations", task.mutation_count, task.limits.max_mutations),
                    ("test_runs", task.test_run_count, task.limits.max_test_runs),
                    ("duration_sec", elapsed, task.limits.max_duration_sec), *uses)
        return ", ".join(f"{name} {used}/{limit}" for name, used, limit in uses if used >= NEAR_LIMIT_SHARE * limit)

    def _note_recent(self, row: OperationRecord, op_id: int | None) -> None:
        """Keep ``row`` (stored as ``op_id``; ``None``: not stored) among the status section's last operations."""
        values = dict(zip(HASHED_COLUMNS, operation_values(row, op_id or 0), strict=True))
        values["op_id"] = op_id
        self._recent.append(brief_operation(values))

    def _reload_recent(self) -> None:
        # Under the lock: a call recorded between the read and the refill would be missing until the next one.
        with self._lock:
            if not self.ledger.is_open:
                return
            try:
                rows = self.ledger.recent_operations(limit=STATUS_RECENT_OPS)
            except Exception:  # a status nicety: the server runs on without it
                log.exception("reading the last operations from the ledger failed")
                return
            self._recent.clear()
            self._recent.extend(brief_operation(r) for r in rows)

    def _unsaved(self, session: Session) -> tuple[TaskRecord, ...]:
        return () if session.saved_task == session.task else (session.task,)

    def _save(self, *tasks: TaskRecord) -> None:
        if self.ledger.is_open:
            with self.ledger.transaction() as conn:
                for task in tasks:
                    self.ledger.upsert_task_in(conn, task)

    def _note(self, request_id: str | None, detail: dict[str, Any]) -> None:
        if request_id is not None:
            self._call_detail[request_id] = detail

    def _sweep(self, now: int) -> None:
        if now - self._last_sweep < _SWEEP_EVERY_MS:
            return
        self._last_sweep = now
        for session in self._sessions.all():
            self._settle(session, now)
        for session in self._sessions.expire_idle(now):
            self._expire(session, now, "session idle timeout")

    def _expire(self, session: Session, now: int, reason: str) -> None:
        task = session.task
        if task.state is TaskState.OPEN:
            closed = self._interrupt(task, now, reason)
            if task.implicit:  # the client never opened a task: a new implicit one, announced
                idle = (now - session.last_seen_ms) // 1000
                why = f"after {idle}s idle" if reason == "session idle timeout" else f"({reason})"
                self._dormant.remember(session.session_id, None, f"task {task.task_id} was closed "
                                       f"CLOSED_INTERRUPTED {why}")
                return
            task = closed
        elif session.saved_task != task:
            self._save(task)
        self._dormant.remember(session.session_id, task, "")

    def _settle(self, session: Session, now: int) -> None:
        """Close the session's task CLOSED_FAILED if its deadline passed, with a ledger row saying so."""
        failed = deadline_failure(session.task, now)
        if failed is None:
            return
        closed, row = failed
        self._tell(closed.state)
        session.task = closed
        if self.ledger.is_open:
            try:
                self._note_recent(row, self.ledger.record(row, (closed,)))
                session.saved_task = closed
            except Exception:  # status and get_task must still answer; the session's next row stores the task
                log.exception("ledger write failed", op_type="task.failed")

    def _interrupt(self, task: TaskRecord, now: int, reason: str) -> TaskRecord:
        closed, row = interruption(task, now, reason)
        self._tell(closed.state)
        if self.ledger.is_open:
            self._note_recent(row, self.ledger.record(row, (closed,)))
        return closed

    def _own_write(self, session: Session) -> None:
        """A write was admitted: until its row is written, a kill must leave it attributable and counted (QA56 #3).
        Its marker (``core/unanswered``) names the session and task, and the task is stored now with the count this
        admission made: the implicit task a session's first call opens was in no row before the call's own, and a
        task's stored ``mutation_count`` left out the writes a kill cut short (attempts count, see ``budgets``)."""
        task = session.task
        unanswered.admitted(unanswered.Owner(session.session_id, task.task_id))
        if not self.settings.record_operations:
            return
        try:
            self._save(task)
            session.saved_task = task
        except Exception:  # the call's own row stores it; only a kill before that would leave the marker task-less
            log.exception("ledger write failed", op_type="task.admitted")
