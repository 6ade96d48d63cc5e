"""Sessions (D11, §23.3): who is calling, their current task and their read budget.

A session id comes from the MCP session header (``mcp_<id>``), an explicit ``session_id`` argument,
or the client connection (the dispatcher decides). A session appears on its first call with an
implicit task, and disappears after ``session_idle_timeout_sec`` without calls - a session waiting on a call
of its own is not idle, however long the call runs; its OPEN task is then closed CLOSED_INTERRUPTED (§12.2:
client disconnect). Sessions live in memory only: a restart interrupts every task instead of resuming one
(§12.4).
"""

from __future__ import annotations

from dataclasses import dataclass

from codeplane.tasks.models import ReadUse, TaskRecord


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

    def all(self) -> list[Session]:
        return sorted(self._sessions.values(), key=lambda s: (s.created_ms, s.session_id))

    def __len__(self) -> int:
        return len(self._sessions)
