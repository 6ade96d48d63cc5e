"""Text renderings of the task tools (issue 16): a task as a line of its state and budget, its ledger rows one
line each, a read budget reset as before → after. The record keeps every field (epoch milliseconds, limits)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codeplane.repo.universe import quoted_path
from codeplane.server.answers import short_fingerprint, shown_id

if TYPE_CHECKING:
    from codeplane.server.tools.tasks import OperationModel, ResetBudgetResult, TaskModel, TaskResult


def _task_line(task: TaskModel, budget: str = "") -> str:
    # A ledger row may be older than the session_id rule (server/dispatch.py): shown escaped and bounded.
    who = f"session {shown_id(task.session_id)}" + (", implicit" if task.implicit else "")
    snap = task.repo_snapshot
    at = " ".join(part for part in ((snap.git_head or "")[:12], f"epoch {snap.index_version}"
                                    if snap.index_version is not None else "") if part)
    line = f"task {task.task_id} {task.state} ({who})" + (f" at {at}" if at else "")
    if budget:
        line += f": {budget}"
    if task.state == "OPEN":
        line += f"; {task.remaining_duration_sec}s left"
    for key, value in (("close_reason", task.close_reason), ("limit_triggered", task.limit_triggered)):
        if value:
            line += f"; {key}={value}"
    return line


def _fingerprints(task: TaskModel) -> str:
    seen = [f"{name}={short_fingerprint(value)}" for name, value in (
        ("last_mutation_fingerprint", task.last_mutation_fingerprint),
        ("last_failure_fingerprint", task.last_failure_fingerprint)) if value]
    return " ".join(seen)


def _operation(op: OperationModel) -> str:
    """``op_id HH:MM:SS op_type kind ok|ERROR code duration`` and what the row flags."""
    parts = [str(op.op_id), op.timestamp[11:19], op.op_type, op.kind or "",
             "ok" if op.success else f"ERROR {op.error_code or ''}".rstrip(),
             f"{op.duration_ms}ms" if op.duration_ms is not None else ""]
    parts += [flag for flag, on in (("no_op", op.no_op), ("non_progress", op.non_progress)) if on]
    if op.limit_triggered:
        parts.append(f"limit={op.limit_triggered}")
    for name, value in (("mutation_fingerprint", op.mutation_fingerprint),
                        ("failure_fingerprint", op.failure_fingerprint)):
        if value:
            parts.append(f"{name}={short_fingerprint(value)}")
    if op.changed_paths:
        parts.append("paths: " + " ".join(quoted_path(p) for p in op.changed_paths))
    return " ".join(part for part in parts if part)


def render_task(result: TaskResult) -> str:
    lines = [_task_line(result.task, result.budget)]
    if fingerprints := _fingerprints(result.task):
        lines.append(fingerprints)
    if result.read_budget is not None and result.read_budget.resets:
        lines.append(f"read budget reset {result.read_budget.resets} time(s)")
    if result.closed_previous is not None:
        lines.append("closed: " + _task_line(result.closed_previous))
    lines += [_operation(op) for op in result.operations]
    return "\n".join(lines)


def render_reset(result: ResetBudgetResult) -> str:
    before, after = result.before, result.after
    return (f"read budget reset: calls {before.calls} -> {after.calls}/{after.max_calls}, "
            f"bytes {before.bytes} -> {after.bytes}/{after.max_bytes}; resets {after.resets}")
