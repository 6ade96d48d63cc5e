"""Budgets, sessions and convergence signals of the task tracker, driven like the dispatcher drives it."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

from codeplane.core.calls import FailureReport
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.fingerprints import failure_fingerprint
from codeplane.tasks import TaskState
from tests.task_calls import FakeClock, edit, make_tracker, run_call


def _rows(state_dir: Path) -> list[sqlite3.Row]:
    conn = sqlite3.connect(state_dir / "ledger.db")
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM operations ORDER BY op_id").fetchall()
    finally:
        conn.close()


def test_mutation_budget_refuses_with_6001_closes_task_and_refuses_later_writes(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path, max_mutations=2)
    assert run_call(tracker, "write_source", "mutation", mutation=edit(sha="1" * 64)).error is None
    assert run_call(tracker, "write_source", "mutation", mutation=edit(sha="2" * 64)).error is None
    refused = run_call(tracker, "write_source", "mutation", mutation=edit(sha="3" * 64)).error
    assert refused is not None and refused.code == 6001
    assert refused.details["budget_type"] == "mutations"
    assert (refused.details["limit"], refused.details["current"]) == (2, 2)
    assert ("Mutation budget exceeded (2/2 mutating calls attempted, refused ones included; this one refused"
            in refused.message)
    view = tracker.get_task("s1")
    assert view.task.state is TaskState.CLOSED_FAILED and view.task.mutation_count == 2
    for kind in ("mutation", "test"):
        later = run_call(tracker, "any_tool", kind).error
        assert later is not None and later.code == 6001 and later.details["budget_type"] == "mutations"
    assert run_call(tracker, "search", "read").error is None, "reads go on (§12.3 refuses mutating operations)"
    assert run_call(tracker, "describe", "meta").error is None
    rows = _rows(tmp_path)
    assert [r["limit_triggered"] for r in rows][-5:] == ["mutations"] * 3 + [None, None]
    assert rows[2]["success"] == 0 and rows[2]["error_code"] == 6001


def test_failed_mutations_count_too(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path, max_mutations=1)
    failed = CodePlaneError(ErrorCode.MUTATION_PRECONDITION_FAILED)
    assert run_call(tracker, "write_source", "mutation", handler_error=failed).error is failed
    assert run_call(tracker, "write_source", "mutation").error.code == 6001  # type: ignore[union-attr]


def test_test_run_budget_refuses_but_keeps_task_open(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path, max_test_runs=1)
    assert run_call(tracker, "run_test_targets", "test").error is None
    refused = run_call(tracker, "run_test_targets", "test").error
    assert refused is not None and refused.code == 6001 and refused.details["budget_type"] == "test_runs"
    assert tracker.get_task("s1").task.state is TaskState.OPEN
    # The task stays open: the hint says what open_task would change, not that it is the only way on.
    assert "stays open" in refused.message and refused.details["hint"].startswith("open_task starts a new task")
    assert run_call(tracker, "write_source", "mutation").error is None
    assert run_call(tracker, "run_test_targets", "test").error.code == 6001  # type: ignore[union-attr]


def test_duration_limit_refuses_calls_after_deadline_and_closes_task(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock)
    tracker.open_task("s1", {"max_duration_sec": 60})
    clock.advance(59)
    assert run_call(tracker, "search", "read").error is None
    clock.advance(2)
    refused = run_call(tracker, "write_source", "mutation").error
    assert refused is not None and refused.code == 6001 and refused.details["budget_type"] == "duration"
    assert refused.details["limit"] == 60 and refused.details["current"] == 61
    task = tracker.get_task("s1").task
    assert task.state is TaskState.CLOSED_FAILED and task.limit_triggered is not None
    assert run_call(tracker, "run_test_targets", "test").error.details["budget_type"] == "duration"  # type: ignore[union-attr]
    assert run_call(tracker, "search", "read").error is None, "reads go on: a budget refuses what acts"


def test_a_read_past_the_deadline_closes_the_task_and_is_answered(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock)
    tracker.open_task("s1", {"max_duration_sec": 60})
    clock.advance(61)
    assert run_call(tracker, "search", "read").error is None
    assert tracker.get_task("s1").task.state is TaskState.CLOSED_FAILED
    assert run_call(tracker, "write_source", "mutation").error.code == 6001  # type: ignore[union-attr]


def test_read_budget_calls_and_bytes_then_reset_budget(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path, read_budget_calls=2, read_budget_bytes=10_000)
    assert run_call(tracker, "search", "read").error is None
    assert run_call(tracker, "search", "read").error is None
    refused = run_call(tracker, "search", "read").error
    assert refused is not None and refused.code == 6004 and refused.error is ErrorCode.READ_BUDGET_EXCEEDED
    assert refused.details["budget_type"] == "read_calls"
    assert tracker.get_task("s1").task.state is TaskState.OPEN  # the task is not closed by reads
    assert run_call(tracker, "write_source", "mutation").error is None  # other budgets unaffected
    before, after = tracker.reset_budget("s1")
    assert (before.calls, after.calls, after.resets) == (2, 0, 1)
    assert run_call(tracker, "search", "read", result_bytes=10_004).error is None  # crosses the byte limit
    by_bytes = run_call(tracker, "search", "read").error
    assert by_bytes is not None and by_bytes.details["budget_type"] == "read_bytes"
    assert by_bytes.details["current"] == 10_004


def test_reset_budget_is_recorded_in_its_own_row(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path)
    run_call(tracker, "search", "read", result_bytes=42)
    reset = run_call(tracker, "reset_budget", "meta",
                     during=lambda rid: tracker.reset_budget("s1", request_id=rid))
    last = _rows(tmp_path)[-1]
    assert last["op_type"] == "reset_budget" and last["request_id"] == reset.request_id
    assert json.loads(last["detail"]) == {"reset_read_budget": {"calls": 1, "bytes": 42, "resets": 1}}
    read = tracker.get_task("s1").read
    assert read is not None and (read.calls, read.bytes, read.resets) == (0, 0, 1)


def test_open_task_closes_previous_as_interrupted_and_sets_limits(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path)
    run_call(tracker, "search", "read")
    implicit = tracker.get_task("s1").task
    assert implicit.implicit and implicit.limits.max_mutations == 200
    view = tracker.open_task("s1", {"max_mutations": 3})
    assert view.closed_previous is not None and view.closed_previous.task_id == implicit.task_id
    assert view.closed_previous.state is TaskState.CLOSED_INTERRUPTED
    assert view.task.limits.max_mutations == 3 and view.task.limits.max_test_runs == 50
    assert tracker.get_task("s1", implicit.task_id).task.state is TaskState.CLOSED_INTERRUPTED
    closed = tracker.close_task("s1", "failed")
    assert closed.task.state is TaskState.CLOSED_FAILED and closed.task.limit_triggered is None
    try:
        tracker.close_task("s1", "success")
        raise AssertionError("closing twice must fail")
    except CodePlaneError as exc:
        assert exc.code == 6003
    later = run_call(tracker, "write_source", "mutation").error
    assert later is not None and later.code == 6003  # closed by the client: open_task first
    assert run_call(tracker, "search", "read").error is None  # reads go on
    assert tracker.open_task("s1").closed_previous is None
    assert run_call(tracker, "search", "read").error is None


def test_get_task_unknown_id_is_6002(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path)
    try:
        tracker.get_task("s1", "task_nope")
        raise AssertionError("expected 6002")
    except CodePlaneError as exc:
        assert exc.code == 6002


def test_sessions_do_not_share_counters(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path, max_mutations=1, read_budget_calls=1)
    assert run_call(tracker, "write_source", "mutation", session="a").error is None
    assert run_call(tracker, "search", "read", session="a").error is None
    assert run_call(tracker, "write_source", "mutation", session="b").error is None
    assert run_call(tracker, "search", "read", session="b").error is None
    assert run_call(tracker, "write_source", "mutation", session="a").error.code == 6001  # type: ignore[union-attr]
    assert tracker.get_task("b").task.state is TaskState.OPEN
    assert tracker.get_task("a").task.task_id != tracker.get_task("b").task.task_id


def test_identical_consecutive_mutations_are_no_op_and_still_counted(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path)
    first = run_call(tracker, "write_source", "mutation", mutation=edit(sha="1" * 64)).notes
    second = run_call(tracker, "write_source", "mutation", mutation=edit(sha="1" * 64)).notes
    third = run_call(tracker, "write_source", "mutation", mutation=edit(sha="2" * 64)).notes
    assert first is not None and second is not None and third is not None
    assert (first.no_op, second.no_op, third.no_op) == (False, True, False)
    assert first.mutation_fingerprint == second.mutation_fingerprint != third.mutation_fingerprint
    assert tracker.get_task("s1").task.mutation_count == 3
    rows = _rows(tmp_path)
    assert [r["no_op"] for r in rows] == [0, 1, 0]
    assert json.loads(rows[0]["changed_paths"]) == ["a.py"] and rows[0]["short_diff"] == "~ a.py"
    assert json.loads(rows[0]["diff_stats"]) == {"files_changed": 1, "insertions": 1, "deletions": 0}
    assert rows[0]["repo_before_hash"] == "b" * 40 and rows[0]["repo_after_hash"] == "c" * 40
    # The diff text (file contents) lives in an artifact, never in the ledger.
    assert all("secret content" not in str(tuple(r)) for r in rows)
    tracker.stop()  # waits for the artifact writer
    artifact = tmp_path / "artifacts" / rows[0]["artifact_id"]
    assert b"secret content" in artifact.read_bytes()


class _ChangedNothing:
    """A mutating tool's result that reports no change (like write_source replacing text with itself)."""

    def mutation_report(self) -> None:
        return None


def test_mutation_that_changed_nothing_is_no_op(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path)
    real = run_call(tracker, "write_source", "mutation", mutation=edit()).notes
    same_state = replace(edit(sha="5" * 64), repo_after="b" * 40)  # repo state before == after
    unchanged = run_call(tracker, "write_source", "mutation", mutation=same_state).notes
    nothing = run_call(tracker, "write_source", "mutation", result=_ChangedNothing()).notes
    unknown = run_call(tracker, "git_checkout", "mutation").notes  # result does not describe itself
    assert real is not None and unchanged is not None and nothing is not None and unknown is not None
    assert (real.no_op, unchanged.no_op, nothing.no_op, unknown.no_op) == (False, True, True, None)
    assert tracker.get_task("s1").task.mutation_count == 4


def _failure(line: int, address: str, tmp: str) -> FailureReport:
    stack = (f'File "{tmp}/test_a.py", line {line}, in test_x\n'
             f"AssertionError: <Obj at {address}> != 3 (took 0.{line}s)")
    fingerprint = failure_fingerprint(["tests/test_a.py::test_x"], "AssertionError", stack, 1)
    return FailureReport(fingerprint, ("tests/test_a.py::test_x",), "assertion", 1)


def test_same_failure_after_a_mutation_sets_non_progress(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path)
    one = run_call(tracker, "run_test_targets", "test", failure=_failure(10, "0x7f00aa11", "/tmp/pytest-1")).notes
    assert one is not None and one.non_progress is False
    # Same failure again without a mutation in between: repetition, but not "after a mutation".
    again = run_call(tracker, "run_test_targets", "test", failure=_failure(11, "0x7f00bb22", "/tmp/x")).notes
    assert again is not None and again.non_progress is False
    assert again.failure_fingerprint == one.failure_fingerprint  # normaliser removed the noise
    run_call(tracker, "write_source", "mutation", mutation=edit())
    stuck = run_call(tracker, "run_test_targets", "test", failure=_failure(12, "0x7f00cc33", "/tmp/y")).notes
    assert stuck is not None and stuck.non_progress is True
    run_call(tracker, "write_source", "mutation", mutation=edit(sha="9" * 64))
    other = FailureReport("ff_other", ("tests/test_a.py::test_y",), "assertion", 1)
    moved = run_call(tracker, "run_test_targets", "test", failure=other).notes
    assert moved is not None and moved.non_progress is False
    rows = _rows(tmp_path)
    assert [r["non_progress"] for r in rows if r["op_type"] == "run_test_targets"] == [0, 0, 1, 0]
    assert json.loads(rows[0]["failing_tests"]) == ["tests/test_a.py::test_x"]
    assert rows[0]["failure_class"] == "assertion"


def test_idle_session_is_dropped_and_its_task_interrupted(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock, session_idle_timeout_sec=60)
    run_call(tracker, "write_source", "mutation", session="idle")
    old = tracker.get_task("idle").task.task_id
    clock.advance(61)
    run_call(tracker, "search", "read", session="other")  # any call sweeps idle sessions
    assert tracker.ledger.get_task(old).state is TaskState.CLOSED_INTERRUPTED  # type: ignore[union-attr]
    fresh = tracker.get_task("idle").task
    assert fresh.task_id != old and fresh.mutation_count == 0
    assert any(r["op_type"] == "task.interrupted" and r["task_id"] == old for r in _rows(tmp_path))


def test_restart_interrupts_open_tasks_with_a_ledger_row(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path)
    run_call(tracker, "write_source", "mutation", mutation=edit())
    task_id = tracker.get_task("s1").task.task_id
    tracker.stop(interrupt_open=False)  # killed: a clean stop closes its tasks itself
    restarted = make_tracker(tmp_path)
    stored = restarted.ledger.get_task(task_id)
    assert stored is not None and stored.state is TaskState.CLOSED_INTERRUPTED
    assert stored.close_reason == "server restart" and stored.mutation_count == 1
    last = _rows(tmp_path)[-1]
    assert last["op_type"] == "task.interrupted" and json.loads(last["detail"]) == {"reason": "server restart"}
    assert restarted.ledger.verify().ok
    # Nothing resumes: the same session gets a new implicit task.
    assert restarted.get_task("s1").task.task_id != task_id


def test_meta_budget_line_names_the_budgets_running_out(tmp_path: Path) -> None:
    """It named all four (92 bytes on every answer) when one was near its limit; the full line is get_task's."""
    tracker = make_tracker(tmp_path, max_mutations=5, read_budget_calls=10)
    for _ in range(3):
        run_call(tracker, "write_source", "mutation")
    meta = tracker.task_meta("s1")
    assert meta is not None and meta.task_state == "OPEN" and not meta.budget_near and meta.budget == ""
    run_call(tracker, "write_source", "mutation")
    for _ in range(8):
        run_call(tracker, "search", "read")
    meta = tracker.task_meta("s1")
    assert meta is not None and meta.budget_near and meta.budget == "mutations 4/5, read_calls 8/10"
    assert tracker.get_task("s1").budget.startswith("mutations 4/5, test_runs 0/50, read_calls 8/10, read_bytes ")
