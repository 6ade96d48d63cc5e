"""Idle expiry never replaces a closed task, nor expires a session waiting on its own call (QA36 §2).

A session whose task a budget closed came back after ``session_idle_timeout_sec`` with a fresh task of the default
limits (200 more writes, never an ``open_task``); a session waiting on a long test run had its explicit task
interrupted under it. A real tracker and ledger, a settable clock.
"""

from __future__ import annotations

from pathlib import Path

from codeplane.core.calls import CallInfo, CallOutcome
from codeplane.core.errors import ErrorCode
from codeplane.tasks import TaskState
from codeplane.tasks.tracker import TaskTracker
from tests.task_calls import FakeClock, make_tracker, run_call


def _open(tracker: TaskTracker, session: str, **limits: int) -> str:
    run_call(tracker, "open_task", "meta", session=session,
             during=lambda rid: tracker.open_task(session, limits, request_id=rid))
    return tracker.get_task(session).task.task_id


def _sweep(tracker: TaskTracker, clock: FakeClock, seconds: float) -> None:
    clock.advance(seconds)
    run_call(tracker, "search", "read", session="bystander")  # any call sweeps idle sessions


def test_a_budget_closed_task_keeps_refusing_after_the_session_expired(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock, session_idle_timeout_sec=60)
    task_id = _open(tracker, "agent", max_mutations=1)
    assert run_call(tracker, "write_source", "mutation", session="agent").error is None
    refused = run_call(tracker, "write_source", "mutation", session="agent").error
    assert refused is not None and refused.code == ErrorCode.TASK_BUDGET_EXCEEDED.code
    _sweep(tracker, clock, 61)
    again = run_call(tracker, "write_source", "mutation", session="agent").error
    assert again is not None and again.code == ErrorCode.TASK_BUDGET_EXCEEDED.code  # was: written, 1/200
    assert tracker.get_task("agent").task.task_id == task_id
    assert run_call(tracker, "search", "read", session="agent").error is None  # reads go on
    fresh = _open(tracker, "agent")
    assert fresh != task_id and run_call(tracker, "write_source", "mutation", session="agent").error is None


def test_an_explicit_task_interrupted_by_idle_expiry_is_not_replaced_implicitly(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock, session_idle_timeout_sec=60)
    task_id = _open(tracker, "agent", max_mutations=3)
    _sweep(tracker, clock, 61)
    stored = tracker.ledger.get_task(task_id)
    assert stored is not None and stored.state is TaskState.CLOSED_INTERRUPTED
    refused = run_call(tracker, "write_source", "mutation", session="agent").error
    assert refused is not None and refused.code == ErrorCode.TASK_ALREADY_CLOSED.code
    assert refused.details["close_reason"] == "session idle timeout"
    task = tracker.get_task("agent").task
    assert task.task_id == task_id and task.limits.max_mutations == 3  # not the defaults


def test_an_implicit_idle_task_is_replaced_and_the_next_answer_says_so(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock, session_idle_timeout_sec=60)
    run_call(tracker, "write_source", "mutation", session="agent")
    old = tracker.get_task("agent").task.task_id
    _sweep(tracker, clock, 61)
    called = run_call(tracker, "write_source", "mutation", session="agent")
    new = tracker.get_task("agent").task
    assert called.error is None and new.task_id != old and new.implicit
    assert called.notes is not None and called.notes.warnings == (
        f"task {old} was closed CLOSED_INTERRUPTED after 61s idle; a new implicit task {new.task_id} began",)
    again = run_call(tracker, "write_source", "mutation", session="agent")
    assert again.notes is not None and again.notes.warnings == ()  # said once


def test_a_session_waiting_on_its_own_call_is_not_idle(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock, session_idle_timeout_sec=5)
    task_id = _open(tracker, "midcall", max_test_runs=4)
    info = CallInfo(tool="run_test_targets", kind="test", session_id="midcall", request_id="req_long", started_ms=0)
    tracker.before_call(info)
    for _ in range(8):  # 24 s of a test run; another session's calls sweep every 3 s
        _sweep(tracker, clock, 3)
    tracker.after_call(CallOutcome(info=info, duration_ms=24_000, ok=True))
    task = tracker.get_task("midcall").task
    assert task.task_id == task_id and task.state is TaskState.OPEN and task.test_run_count == 1
    _sweep(tracker, clock, 6)  # idle from the call's end on
    stored = tracker.ledger.get_task(task_id)
    assert stored is not None and stored.state is TaskState.CLOSED_INTERRUPTED and stored.test_run_count == 1
