"""How a task closes without a call of its own: interrupted (a stop, a restart, an idle or ended session) or
failed by its deadline; and what a start does with the tasks a killed server left OPEN.

Each closing is the closed record plus the maintenance row that says so, written together. A task past its
``max_duration_sec`` fails whoever reaches it, a start after a kill included: it is never interrupted (QA56 #4:
a restart recorded it CLOSED_INTERRUPTED "server restart").
"""

from __future__ import annotations

from collections.abc import Callable

from codeplane.tasks.budgets import past_deadline
from codeplane.tasks.ledger import Ledger
from codeplane.tasks.models import OperationRecord, TaskRecord, TaskState
from codeplane.tasks.recording import record_unanswered

RESTART_REASON = "server restart"


def interruption(task: TaskRecord, now: int, reason: str) -> tuple[TaskRecord, OperationRecord]:
    """``task`` closed CLOSED_INTERRUPTED for ``reason``, and its ``task.interrupted`` row."""
    closed = task.with_changes(state=TaskState.CLOSED_INTERRUPTED, closed_at_ms=now, close_reason=reason)
    return closed, OperationRecord(task_id=task.task_id, timestamp_ms=now, op_type="task.interrupted", success=True,
                                   session_id=task.session_id, kind="maintenance", detail={"reason": reason})


def deadline_failure(task: TaskRecord, now: int) -> tuple[TaskRecord, OperationRecord] | None:
    """``task`` closed CLOSED_FAILED by its duration limit and its ``task.failed`` row, or ``None`` when it is not
    OPEN past its deadline."""
    closed = past_deadline(task, now)
    if closed is task:
        return None
    return closed, OperationRecord(task_id=task.task_id, timestamp_ms=now, op_type="task.failed", success=True,
                                   session_id=task.session_id, kind="maintenance", limit_triggered="duration",
                                   detail={"reason": closed.close_reason})


def close_left_open(ledger: Ledger, now: int, *, record_operations: bool,
                    tell: Callable[[TaskState], None]) -> list[str]:
    """At a start: record the writes the previous server applied and never answered (first: each row comes before
    its task's closing, as the call's own row would have), then close every task it left OPEN: CLOSED_FAILED past
    its deadline, else CLOSED_INTERRUPTED. Returns the ids of the interrupted tasks."""
    record_unanswered(ledger, record_operations=record_operations)
    interrupted = []
    for task in ledger.tasks_in_state(TaskState.OPEN, limit=1_000_000):
        failed = deadline_failure(task, now)
        closed, row = failed if failed is not None else interruption(task, now, RESTART_REASON)
        tell(closed.state)
        ledger.record(row, (closed,))
        if failed is None:
            interrupted.append(task.task_id)
    return interrupted
