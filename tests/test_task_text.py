"""The text a model reads for a task (issue 16): its state and budget on one line, ledger rows one a line,
fingerprints by their kind and first digits."""

from __future__ import annotations

from codeplane.server.tools.tasks import (
    OperationModel,
    RepoSnapshotModel,
    TaskCountersModel,
    TaskLimitsModel,
    TaskModel,
    TaskResult,
)
from codeplane.server.tools.tasks_render import render_task

_FP = "ff_" + "0123456789abcdef" * 2


def test_a_task_is_one_line_of_state_and_budget_then_its_ledger_rows() -> None:
    task = TaskModel(task_id="task_1", session_id="s1", state="OPEN", implicit=True, opened_at_ms=0,
                     closed_at_ms=None, close_reason=None, limit_triggered=None,
                     repo_snapshot=RepoSnapshotModel(git_head="a" * 40, index_version=3),
                     limits=TaskLimitsModel(max_mutations=20, max_test_runs=5, max_duration_sec=60),
                     counters=TaskCountersModel(mutation_count=1, test_run_count=1), remaining_duration_sec=42,
                     last_mutation_fingerprint=None, last_failure_fingerprint=_FP)
    op = OperationModel(op_id=7, timestamp="2026-01-01T10:11:12.345Z", op_type="run_test_targets", kind="test",
                        success=True, duration_ms=900, error_code=None, limit_triggered=None, no_op=None,
                        non_progress=True, mutation_fingerprint=None, failure_fingerprint=_FP, changed_paths=None)
    text = render_task(TaskResult(task=task, budget="mutations 1/20, test_runs 1/5", operations=[op]))
    assert text.splitlines() == [
        "task task_1 OPEN (session s1, implicit) at aaaaaaaaaaaa epoch 3: mutations 1/20, test_runs 1/5; 42s left",
        "last_failure_fingerprint=ff_0123456789ab",
        "7 10:11:12 run_test_targets test ok 900ms non_progress failure_fingerprint=ff_0123456789ab",
    ], text
