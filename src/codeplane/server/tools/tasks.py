"""``open_task``, ``close_task``, ``get_task`` (D11, §12.2) and ``reset_budget`` (§23.4).

Thin adapters over :class:`codeplane.tasks.TaskTracker`. All four are ``meta`` calls: they are always
admitted and count against no budget, so a client can always inspect and recover. A task past its deadline is
closed CLOSED_FAILED before any of them sees it (``tasks/budgets.py``). The descriptions say what a closed task
refuses exactly as the code does (writes and test runs, never reads, §12.3): they said every further call was.
"""

from __future__ import annotations

from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from codeplane.core.clock import now_ms
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.tasks_render import render_reset, render_task
from codeplane.tasks import ReadUse, TaskRecord, TaskView

_MAX_LIMIT = 1_000_000


class TaskLimitsInput(BaseModel):
    """Limits for a new task; omitted ones take the server defaults (``tasks.*`` in the config)."""

    # defer_build: built by the warm-up after /ready (server/app.py), or on first use
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    max_mutations: int | None = Field(default=None, ge=1, le=_MAX_LIMIT,
                                      description=("State-mutating calls allowed (writes, refactor apply, git "
                                                   "writes), refused ones included."))
    max_test_runs: int | None = Field(default=None, ge=1, le=_MAX_LIMIT,
                                      description="Test-run calls allowed, refused ones included.")
    max_duration_sec: int | None = Field(default=None, ge=1, le=30 * 86_400,
                                         description=("Seconds after opening when the task closes CLOSED_FAILED: "
                                                      "writes and test runs are then refused (6001) until "
                                                      "open_task; reads go on."))


class TaskLimitsModel(ToolResult):
    max_mutations: int
    max_test_runs: int
    max_duration_sec: int


class RepoSnapshotModel(ToolResult):
    git_head: str | None
    index_version: int | None


class TaskCountersModel(ToolResult):
    mutation_count: int
    test_run_count: int


class TaskModel(ToolResult):
    """The persisted task state of §12.2."""

    task_id: str
    session_id: str
    state: Literal["OPEN", "CLOSED_SUCCESS", "CLOSED_FAILED", "CLOSED_INTERRUPTED"]
    implicit: bool
    opened_at_ms: int
    closed_at_ms: int | None
    close_reason: str | None
    limit_triggered: str | None
    repo_snapshot: RepoSnapshotModel
    limits: TaskLimitsModel
    counters: TaskCountersModel
    remaining_duration_sec: int
    last_mutation_fingerprint: str | None
    last_failure_fingerprint: str | None


class ReadBudgetModel(ToolResult):
    """The calling session's read budget (read/search tools), since it started or was last reset."""

    calls: int
    bytes: int
    max_calls: int
    max_bytes: int
    resets: int


class OperationModel(ToolResult):
    """One ledger row, content-free."""

    op_id: int
    timestamp: str
    op_type: str
    kind: str | None
    success: bool
    duration_ms: int | None
    error_code: int | None
    limit_triggered: str | None
    no_op: bool | None
    non_progress: bool | None
    mutation_fingerprint: str | None
    failure_fingerprint: str | None
    changed_paths: list[str] | None


class TaskResult(ToolResult):
    task: TaskModel
    #: Budget use, e.g. ``mutations 3/20, test_runs 0/50, read_calls 12/5000, read_bytes 1024/52428800``.
    budget: str
    read_budget: ReadBudgetModel | None = None
    #: open_task: the task it closed as CLOSED_INTERRUPTED (superseded: no outcome inferred), if one was OPEN.
    closed_previous: TaskModel | None = None
    #: get_task: the task's newest ledger rows, oldest first.
    operations: list[OperationModel] = []


class OpenTaskParams(ToolParams):
    limits: TaskLimitsInput | None = None


class CloseTaskParams(ToolParams):
    outcome: Literal["success", "failed"] = Field(description="How the client judges the task ended.")


class GetTaskParams(ToolParams):
    task_id: str | None = Field(default=None, max_length=64,
                                description="A task id (default: the calling session's current task).")
    operations: int = Field(default=10, ge=0, le=100, description="How many of the task's last ledger rows to include.")


class ResetBudgetParams(ToolParams):
    pass


class ResetBudgetResult(ToolResult):
    before: ReadBudgetModel
    after: ReadBudgetModel


def _task(record: TaskRecord) -> TaskModel:
    return TaskModel.model_validate(record.to_public(now_ms()))


def _read(services: Services, read: ReadUse | None) -> ReadBudgetModel | None:
    if read is None:
        return None
    limits = services.tasks.settings.read_limits
    return ReadBudgetModel(calls=read.calls, bytes=read.bytes, max_calls=limits.max_calls,
                           max_bytes=limits.max_bytes, resets=read.resets)


def _result(services: Services, view: TaskView, operations: list[dict[str, Any]] | None = None) -> TaskResult:
    return TaskResult(
        task=_task(view.task), budget=view.budget, read_budget=_read(services, view.read),
        closed_previous=_task(view.closed_previous) if view.closed_previous else None,
        operations=[OperationModel.model_validate(op) for op in operations or []],
    )


async def _open_task(ctx: ToolContext, params: OpenTaskParams) -> TaskResult:
    limits = params.limits.model_dump(exclude_none=True) if params.limits else None
    view = await anyio.to_thread.run_sync(
        lambda: ctx.services.tasks.open_task(ctx.session_id, limits, request_id=ctx.request_id))
    return _result(ctx.services, view)


async def _close_task(ctx: ToolContext, params: CloseTaskParams) -> TaskResult:
    view = await anyio.to_thread.run_sync(
        lambda: ctx.services.tasks.close_task(ctx.session_id, params.outcome, request_id=ctx.request_id))
    return _result(ctx.services, view)


async def _get_task(ctx: ToolContext, params: GetTaskParams) -> TaskResult:
    tracker = ctx.services.tasks

    def load() -> tuple[TaskView, list[dict[str, Any]]]:
        view = tracker.get_task(ctx.session_id, params.task_id)
        ops = tracker.task_operations(view.task.task_id, params.operations) if params.operations else []
        return view, ops

    view, ops = await anyio.to_thread.run_sync(load)
    return _result(ctx.services, view, ops)


async def _reset_budget(ctx: ToolContext, params: ResetBudgetParams) -> ResetBudgetResult:
    before, after = ctx.services.tasks.reset_budget(ctx.session_id, request_id=ctx.request_id)
    before_model, after_model = _read(ctx.services, before), _read(ctx.services, after)
    assert before_model is not None and after_model is not None
    return ResetBudgetResult(before=before_model, after=after_model)


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            name="open_task", category="tasks", kind="meta", handler=_open_task, render=render_task,
            params=OpenTaskParams, result=TaskResult,
            summary=("Start a new task (a correlation envelope with hard limits) for this session. The session's "
                     "current OPEN task is closed as CLOSED_INTERRUPTED (superseded) and returned as closed_previous."),
            when_to_use=("starting a unit of work that needs its own limits",
                         "continuing after a task closed (budget exhausted, close_task, deadline, idle, restart)"),
            when_not_to_use=("just to read state (use get_task)", "resetting the read budget (use reset_budget)"),
            examples=(ToolExample("default limits", {}),
                      ToolExample("tight budget", {"limits": {"max_mutations": 20, "max_test_runs": 10,
                                                              "max_duration_sec": 1800}})),
            read_only=False, idempotent=False,
        ),
        ToolSpec(
            name="close_task", category="tasks", kind="meta", handler=_close_task, render=render_task,
            params=CloseTaskParams, result=TaskResult,
            summary=("Close this session's current task with the client's outcome (success or failed). Closed "
                     "tasks are final: writes and test runs are refused (6003) until open_task; reads go on. A "
                     "task past a limit is already CLOSED_FAILED (6003 says so)."),
            when_to_use=("the work the task stood for is done or abandoned",),
            when_not_to_use=("to raise limits (use open_task, which supersedes the current task)",),
            examples=(ToolExample("finished", {"outcome": "success"}),),
            read_only=False, idempotent=False,
        ),
        ToolSpec(
            name="get_task", category="tasks", kind="meta", handler=_get_task, render=render_task,
            params=GetTaskParams, result=TaskResult,
            summary=("The current (or a named) task: state, limits, counters, remaining time, last fingerprints, "
                     "the session's read budget and the task's last ledger rows."),
            when_to_use=("checking remaining budget before a long edit/test loop",
                         "finding out why calls are refused (6001/6003)"),
            when_not_to_use=("repository state (use describe)",),
            examples=(ToolExample("current task", {}),
                      ToolExample("another task", {"task_id": "task_0123456789abcdef"})),
        ),
        ToolSpec(
            name="reset_budget", category="files", kind="meta", handler=_reset_budget, render=render_reset,
            params=ResetBudgetParams, result=ResetBudgetResult,
            summary=("Reset this session's read budget (bytes and calls of read/search tools). The reset is "
                     "recorded in the ledger with the use it cleared."),
            when_to_use=("a read or search was refused with 6004 READ_BUDGET_EXCEEDED",),
            when_not_to_use=("a task budget was exceeded (6001): use open_task",),
            examples=(ToolExample("reset", {}),),
            read_only=False,
        ),
    ]
