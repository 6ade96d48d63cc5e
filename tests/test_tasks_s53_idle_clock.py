"""Sessions expire on the clock, with no call arriving (QA49 F1): expiry ran only inside a call's admission, so once
agents stopped calling, their sessions and tasks stayed open for good (``/status``, ``cpl status``, the metrics), and
the next unrelated call closed them all stamped with its own time. A real tracker, ledger and sweeper thread; a
settable clock stands for the passing of the timeout."""

from __future__ import annotations

import time
from pathlib import Path

from codeplane.tasks import TaskState
from codeplane.tasks.idle import sweep_period
from tests.task_calls import FakeClock, make_tracker, run_call


def test_an_idle_session_expires_without_any_call(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock, session_idle_timeout_sec=10)  # swept every second
    try:
        run_call(tracker, "open_task", "meta", session="agent",
                 during=lambda rid: tracker.open_task("agent", {"max_mutations": 3}, request_id=rid))
        task_id = tracker.get_task("agent").task.task_id
        clock.advance(11)
        deadline = time.monotonic() + 10
        stored = tracker.ledger.get_task(task_id)
        while stored is not None and stored.state is TaskState.OPEN and time.monotonic() < deadline:
            time.sleep(0.1)
            stored = tracker.ledger.get_task(task_id)
        assert stored is not None and stored.state is TaskState.CLOSED_INTERRUPTED
        assert stored.close_reason == "session idle timeout"
        assert tracker.status()["open_task_count"] == 0
    finally:
        tracker.stop()


def test_status_itself_expires_what_is_idle(tmp_path: Path) -> None:
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock, session_idle_timeout_sec=3600)  # the sweeper waits 30 s
    try:
        run_call(tracker, "search", "read", session="reader")
        assert tracker.status()["sessions"] == 1
        clock.advance(3601)
        assert tracker.status()["sessions"] == 0  # no call, no sweeper tick: /status asked
    finally:
        tracker.stop()


def test_the_sweep_period_is_a_tenth_of_the_timeout_within_bounds() -> None:
    assert (sweep_period(2), sweep_period(60), sweep_period(1800)) == (1.0, 6.0, 30.0)
