"""The seam between the tool dispatcher (``server``) and whoever accounts for calls (``tasks``).

The server calls an observer before and after every tool call; the tasks subsystem implements it
(budgets, ledger). Defined here, below both, so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

CallKind = Literal["read", "mutation", "test", "meta"]


@dataclass(frozen=True)
class CallInfo:
    tool: str
    kind: CallKind
    session_id: str
    request_id: str
    started_ms: int


@dataclass(frozen=True)
class CallOutcome:
    info: CallInfo
    duration_ms: float
    ok: bool
    error_code: int | None = None
    error_name: str | None = None
    #: The handler's result model (``None`` on failure); observers read typed fields from it.
    result: Any = None
    #: Bytes of the serialised result, for read budgets.
    result_bytes: int = 0


@dataclass(frozen=True)
class TaskMeta:
    task_id: str | None
    task_state: str | None
    budget: str | None = None


class CallObserver(Protocol):
    def before_call(self, info: CallInfo) -> None:
        """Raise a ``CodePlaneError`` to refuse the call (e.g. budget exhausted)."""

    def after_call(self, outcome: CallOutcome) -> None:
        """Record the call. Must not raise for a normal failure of the call itself."""

    def task_meta(self, session_id: str) -> TaskMeta | None:
        """Task fields for the envelope of the session's next answer."""
