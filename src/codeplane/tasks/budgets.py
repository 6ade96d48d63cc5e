"""Admission control (§12.3, §23.9): may this call run, and what does it count against?

A pure function of the task, the session's read use and the call kind, so every rule is testable
without a server. Limits are hard: a refused call changes no counter except by closing the task, and
nothing here ever resets a counter.

Rules, in order:
1. After ``max_duration_sec`` the task becomes CLOSED_FAILED, at the first call of any kind past the deadline:
   meta calls too, or ``get_task`` showed the task OPEN with 0 s left and ``close_task``/``open_task`` recorded
   a task past its limit as CLOSED_SUCCESS.
2. ``meta`` calls (describe, open_task, get_task, close_task, reset_budget) are then always admitted and
   count against nothing, so a client can always inspect state and recover.
3. A closed task admits no mutation and no test run: 6001 naming the limit if a limit closed it, else 6003.
   The client must call ``open_task``. Reads go on (§12.3, §23.9: a budget refuses *mutating* operations), so
   an agent whose task a budget closed can still look at what it did.
4. ``mutation`` calls: the (max+1)-th is refused with 6001 and the task becomes CLOSED_FAILED.
5. ``test`` calls: the (max+1)-th is refused with 6001; the task stays OPEN (§12.3 closes only on
   the mutation budget).
6. ``read`` calls count against the *session* read budget: 6004 READ_BUDGET_EXCEEDED once the calls
   or bytes limit is reached, until ``reset_budget``. Bytes are added after the answer is built, so
   the answer that crosses the byte limit is still served and the next read is refused.
Admitted calls are counted on admission, whether or not the handler then succeeds: a loop of failing
edits is as finite as a loop of successful ones (§12.3 bounds a non-converging agent, and one whose every edit
is refused is not converging). So the counters are *attempts*, and the 6001 messages say so: "2/2 made" after
two refused edits read as if two edits had been written.
"""

from __future__ import annotations

from dataclasses import dataclass

from codeplane.core.calls import CallKind
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.tasks.models import BudgetType, ReadLimits, ReadUse, TaskRecord, TaskState


@dataclass(frozen=True)
class Admission:
    """The task and read use after admission; ``error`` is set when the call is refused."""

    task: TaskRecord
    read: ReadUse
    error: CodePlaneError | None = None
    limit_triggered: BudgetType | None = None


def _close_failed(task: TaskRecord, limit: BudgetType, now_ms: int, reason: str) -> TaskRecord:
    return task.with_changes(state=TaskState.CLOSED_FAILED, closed_at_ms=now_ms, close_reason=reason,
                             limit_triggered=limit)


def past_deadline(task: TaskRecord, now_ms: int) -> TaskRecord:
    """``task`` closed CLOSED_FAILED by its duration limit if ``now_ms`` is past its deadline, else ``task``."""
    if task.state is not TaskState.OPEN or now_ms < task.deadline_ms:
        return task
    return _close_failed(task, BudgetType.DURATION, now_ms, f"max_duration_sec {task.limits.max_duration_sec} exceeded")


def _task_error(task: TaskRecord, limit: BudgetType, limit_value: int, current: int, message: str,
                ) -> CodePlaneError:
    return CodePlaneError(
        ErrorCode.TASK_BUDGET_EXCEEDED, message,
        details={"budget_type": limit.value, "limit": limit_value, "current": current,
                 "task_id": task.task_id, "task_state": task.state.value,
                 # The task is closed already (CLOSED_FAILED): close_task would only answer 6003.
                 "hint": "call open_task to continue (it may set larger limits)"},
    )


def _limit_value(task: TaskRecord, limit: BudgetType) -> tuple[int, int]:
    if limit is BudgetType.MUTATIONS:
        return task.limits.max_mutations, task.mutation_count
    if limit is BudgetType.TEST_RUNS:
        return task.limits.max_test_runs, task.test_run_count
    elapsed = ((task.closed_at_ms or task.opened_at_ms) - task.opened_at_ms) // 1000
    return task.limits.max_duration_sec, elapsed


def admit(task: TaskRecord, read: ReadUse, read_limits: ReadLimits, kind: CallKind, now_ms: int,
          ) -> Admission:
    """Decide whether a call of ``kind`` may run now; see the module docstring for the rules."""
    if task.state is TaskState.OPEN and now_ms >= task.deadline_ms:
        elapsed = (now_ms - task.opened_at_ms) // 1000
        task = past_deadline(task, now_ms)
        if kind not in ("read", "meta"):
            return Admission(task, read, _task_error(
                task, BudgetType.DURATION, task.limits.max_duration_sec, elapsed,
                f"Duration budget exceeded ({elapsed}s/{task.limits.max_duration_sec}s)"), BudgetType.DURATION)
    if kind == "meta":
        return Admission(task, read)
    if task.state is not TaskState.OPEN and kind != "read":
        if task.limit_triggered is not None and task.state is TaskState.CLOSED_FAILED:
            limit_value, current = _limit_value(task, task.limit_triggered)
            return Admission(task, read, _task_error(
                task, task.limit_triggered, limit_value, current,
                f"task {task.task_id} is CLOSED_FAILED: its {task.limit_triggered.value} budget was "
                f"exhausted ({current}/{limit_value}); call open_task to start a new task"),
                task.limit_triggered)
        return Admission(task, read, CodePlaneError(
            ErrorCode.TASK_ALREADY_CLOSED,
            f"task {task.task_id} is {task.state.value}; call open_task to start a new task",
            details={"task_id": task.task_id, "task_state": task.state.value,
                     "close_reason": task.close_reason}))
    if kind == "mutation":
        if task.mutation_count >= task.limits.max_mutations:
            closed = _close_failed(task, BudgetType.MUTATIONS, now_ms,
                                   f"max_mutations {task.limits.max_mutations} exceeded")
            return Admission(closed, read, _task_error(
                closed, BudgetType.MUTATIONS, task.limits.max_mutations, task.mutation_count,
                f"Mutation budget exceeded ({task.mutation_count}/{task.limits.max_mutations} mutating calls "
                "attempted, refused ones included; this one refused and the task closed)"),
                BudgetType.MUTATIONS)
        return Admission(task.with_changes(mutation_count=task.mutation_count + 1), read)
    if kind == "test":
        if task.test_run_count >= task.limits.max_test_runs:
            refused = _task_error(task, BudgetType.TEST_RUNS, task.limits.max_test_runs, task.test_run_count,
                                  f"Test run budget exceeded ({task.test_run_count}/{task.limits.max_test_runs} "
                                  "test calls attempted, refused ones included; this one refused, the task stays "
                                  "open for edits and reads)")
            # The task is OPEN: the hint of a closed one (only open_task helps) would mislead.
            refused.details["hint"] = "open_task starts a new task with a new test-run budget"
            return Admission(task, read, refused, BudgetType.TEST_RUNS)
        return Admission(task.with_changes(test_run_count=task.test_run_count + 1), read)
    for limit, current, maximum in ((BudgetType.READ_CALLS, read.calls, read_limits.max_calls),
                                    (BudgetType.READ_BYTES, read.bytes, read_limits.max_bytes)):
        if current >= maximum:
            return Admission(task, read, CodePlaneError(
                ErrorCode.READ_BUDGET_EXCEEDED,
                f"Session read budget exceeded ({limit.value} {current}/{maximum}); call reset_budget",
                details={"budget_type": limit.value, "limit": maximum, "current": current,
                         "session_id": task.session_id, "hint": "call reset_budget to continue reading"},
            ), limit)
    return Admission(task, ReadUse(read.bytes, read.calls + 1, read.resets))
