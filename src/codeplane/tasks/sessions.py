"""Sessions (D11, §23.3): who is calling, their current task and their read budget.

A session id comes from the MCP session header (``mcp_<id>``), an explicit ``session_id`` argument,
or the client connection (the dispatcher decides). A session appears on its first call with an
implicit task, and disappears after ``session_idle_timeout_sec`` without calls - a session waiting on a call
of its own is not idle, however long the call runs; its OPEN task is then closed CLOSED_INTERRUPTED (§12.2:
client disconnect). Sessions live in memory only: a restart interrupts every task instead of resuming one
(§12.4).

A session that ended - idle, or with the server that served it - is remembered as *dormant* with what it comes
back to (:func:`comes_back_to`): the closed task it left, so its writes stay refused until ``open_task``
(§12.4: no task resumes, and a limit the client declared is never lifted by a fresh task of the default limits),
or nothing when that task was implicit and merely interrupted, which a new implicit task replaces (it declared
no limits, so the defaults lift none) with a warning on the session's next answer.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from codeplane.tasks.models import ReadUse, TaskRecord, TaskState


@dataclass
class Session:
    """Mutable per-session state, owned and locked by the tracker."""

    session_id: str
    created_ms: int
    last_seen_ms: int
    task: TaskRecord
    read: ReadUse
    #: The task as last written to the ledger, to save only what changed.
    saved_task: TaskRecord | None = None
    #: Calls admitted and not yet finished: while any runs, the session is not idle.
    in_flight: int = 0
    #: A warning the session's next answer carries (its implicit task was replaced while it was away).
    notice: str | None = None


class SessionTable:
    """Sessions by id, with idle expiry. Not thread-safe on its own (the tracker holds a lock)."""

    def __init__(self, idle_timeout_ms: int) -> None:
        self.idle_timeout_ms = idle_timeout_ms
        self._sessions: dict[str, Session] = {}

    def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    def add(self, session: Session) -> None:
        self._sessions[session.session_id] = session

    def expire_idle(self, now_ms: int) -> list[Session]:
        """Remove and return sessions idle for longer than the timeout, oldest first. A session with a call in
        flight is never idle: its task was interrupted, and its limits replaced, while its own call ran."""
        cutoff = now_ms - self.idle_timeout_ms
        expired = sorted((s for s in self._sessions.values() if s.last_seen_ms < cutoff and not s.in_flight),
                         key=lambda s: (s.last_seen_ms, s.session_id))
        for session in expired:
            del self._sessions[session.session_id]
        return expired

    def drop(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def all(self) -> list[Session]:
        return sorted(self._sessions.values(), key=lambda s: (s.created_ms, s.session_id))

    def __len__(self) -> int:
        return len(self._sessions)


def comes_back_to(task: TaskRecord) -> tuple[TaskRecord | None, str]:
    """What a session whose last task is ``task`` (closed) gets on its next call: the task itself, or ``None``
    and the notice saying why a new implicit task replaces it (``task`` was implicit and interrupted)."""
    if task.implicit and task.state is TaskState.CLOSED_INTERRUPTED:
        return None, f"task {task.task_id} was closed CLOSED_INTERRUPTED ({task.close_reason})"
    return task, ""


class DormantSessions:
    """Ended sessions by id with what each comes back to, the oldest forgotten first past ``max_size``. Not
    thread-safe on its own (the tracker holds a lock)."""

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._entries: OrderedDict[str, tuple[TaskRecord | None, str]] = OrderedDict()

    def remember(self, session_id: str, task: TaskRecord | None, notice: str) -> None:
        self._entries[session_id] = (task, notice)
        self._entries.move_to_end(session_id)
        while len(self._entries) > self.max_size:
            self._entries.popitem(last=False)

    def pop(self, session_id: str) -> tuple[TaskRecord | None, str]:
        """The closed task the session left (or ``None``: a new implicit task) and the notice; forgotten after."""
        return self._entries.pop(session_id, (None, ""))
