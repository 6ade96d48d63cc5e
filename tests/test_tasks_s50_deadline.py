"""A task past ``max_duration_sec`` is CLOSED_FAILED whoever reaches it first (QA36 §1, §3).

Meta calls skipped the deadline: ``get_task`` showed the task OPEN with 0 s left, ``close_task(success)`` and
``open_task`` recorded it CLOSED_SUCCESS, a stop CLOSED_INTERRUPTED. A real tracker and ledger, a settable clock.
"""

from __future__ import annotations

from pathlib import Path

from codeplane.core.calls import CallInfo
from codeplane.core.errors import ErrorCode
from codeplane.tasks import BudgetType, TaskState
from codeplane.tasks.tracker import TaskTracker
from tests.task_calls import FakeClock, make_tracker, run_call


def _stored(tracker: TaskTracker, task_id: str) -> tuple[TaskState, BudgetType | None]:
    task = tracker.ledger.get_task(task_id)
    assert task is not None
    return task.state, task.limit_triggered


def _open(tracker: TaskTracker, seconds: int = 10) -> str:
    called = run_call(tracker, "open_task", "meta", during=lambda rid: tracker.open_task(
        "s1", {"max_duration_sec": seconds}, request_id=rid))
    assert called.error is None
    return tracker.get_task("s1").task.task_id


def test_get_task_past_the_deadline_answers_closed_failed_by_duration(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock)
    task_id = _open(tracker)
    clock.advance(12)
    seen: list[TaskState] = []
    run_call(tracker, "get_task", "meta", during=lambda rid: seen.append(tracker.get_task("s1").task.state))
    assert seen == [TaskState.CLOSED_FAILED]  # was OPEN, "0s left"
    assert _stored(tracker, task_id) == (TaskState.CLOSED_FAILED, BudgetType.DURATION)


def test_close_task_success_past_the_deadline_is_refused_and_the_task_stays_failed(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock)
    task_id = _open(tracker)
    clock.advance(12)
    called = run_call(tracker, "close_task", "meta", during=lambda rid: tracker.close_task("s1", "success",
                                                                                           request_id=rid))
    assert called.error is not None and called.error.code == ErrorCode.TASK_ALREADY_CLOSED.code
    assert "max_duration_sec 10 exceeded" in called.error.message
    assert _stored(tracker, task_id) == (TaskState.CLOSED_FAILED, BudgetType.DURATION)  # was CLOSED_SUCCESS


def test_open_task_past_the_deadline_does_not_supersede_the_failed_task(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock)
    task_id = _open(tracker)
    clock.advance(12)
    views = []
    run_call(tracker, "open_task", "meta", during=lambda rid: views.append(tracker.open_task("s1", request_id=rid)))
    assert views[0].closed_previous is None and views[0].task.state is TaskState.OPEN
    assert _stored(tracker, task_id) == (TaskState.CLOSED_FAILED, BudgetType.DURATION)  # was "superseded"


def test_status_and_another_sessions_get_task_never_show_a_task_past_its_deadline_open(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock)
    task_id = _open(tracker)
    clock.advance(12)
    assert tracker.status()["open_tasks"] == []
    assert tracker.get_task("other", task_id).task.state is TaskState.CLOSED_FAILED
    assert _stored(tracker, task_id) == (TaskState.CLOSED_FAILED, BudgetType.DURATION)


def test_a_stop_closes_a_task_past_its_deadline_failed_not_interrupted(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock)
    task_id = _open(tracker)
    clock.advance(12)
    tracker.stop()
    tracker.ledger.open()
    assert _stored(tracker, task_id) == (TaskState.CLOSED_FAILED, BudgetType.DURATION)


def test_a_stop_keeps_the_count_of_a_call_still_in_flight(tmp_path: Path) -> None:
    """The stop interrupted the task as the ledger last stored it: the admitted test run was not counted."""
    tracker = make_tracker(tmp_path)
    task_id = _open(tracker, 600)
    tracker.before_call(CallInfo(tool="run_test_targets", kind="test", session_id="s1", request_id="req_cut",
                                 started_ms=0))
    tracker.stop()
    tracker.ledger.open()
    stored = tracker.ledger.get_task(task_id)
    assert stored is not None and stored.state is TaskState.CLOSED_INTERRUPTED
    assert stored.test_run_count == 1


def test_a_closed_tasks_budget_leaves_meta_but_the_read_budget_stays(tmp_path: Path) -> None:
    """A closed task's budget line stayed on every answer until open_task, its duration counting up for ever."""
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock, max_mutations=5, read_budget_calls=10)
    for _ in range(4):
        run_call(tracker, "write_source", "mutation")
    meta = tracker.task_meta("s1")
    assert meta is not None and meta.budget_near and meta.budget == "mutations 4/5"
    run_call(tracker, "close_task", "meta", during=lambda rid: tracker.close_task("s1", "success", request_id=rid))
    clock.advance(3600)
    meta = tracker.task_meta("s1")
    assert meta is not None and not meta.budget_near and meta.budget == ""
    for _ in range(8):  # reads go on after a close, and their budget is the session's
        run_call(tracker, "search", "read")
    meta = tracker.task_meta("s1")
    assert meta is not None and meta.budget_near and meta.budget == "read_calls 8/10"
