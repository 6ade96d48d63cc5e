"""A restart never lifts a session's task limits (QA50 #1; spec §12.4 "No task resumes implicitly. Clients must
open a new task."; D10 every declared limit is enforced).

A session that had declared ``max_mutations: 1`` came back after ``cpl down`` / ``cpl up`` to a new implicit task
of 200 writes. Now it comes back to the task the restart interrupted, as after an idle expiry: writes and test runs
get 6003 naming that task until ``open_task``. An implicit task the restart interrupted declared no limits, so a
new implicit one replaces it, and the next answer's warning says so. Also (§12.2 "no success inference"):
``open_task`` closes the task it supersedes CLOSED_INTERRUPTED, not CLOSED_SUCCESS.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from codeplane.core.errors import ErrorCode
from codeplane.tasks import TaskState
from codeplane.tasks.tracker import TaskTracker
from tests.builders import answer_text, call, envelope, make_repo, mcp_client, running_server, start_server
from tests.task_calls import FakeClock, make_tracker, run_call

anyio = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def _create(path: str, **session: str) -> dict[str, Any]:
    return {**session, "edits": [{"path": path, "action": "create", "content": "x\n"}]}


async def _answer(client: Client, tool: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any], str]:
    res = await client.call_tool(tool, args)
    return bool(res.is_error), envelope(res), answer_text(res)


@anyio
async def test_a_clean_restart_does_not_lift_a_declared_mutation_limit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n", "pytest.ini": "[pytest]\n",
                                          "tests/test_a.py": "def test_a():\n    pass\n"})
    a, b = {"session_id": "agentA"}, {"session_id": "agentB"}
    with running_server(repo, "--profile", "full") as first:
        async with mcp_client(first) as client:
            opened = await call(client, "open_task", {**a, "limits": {"max_mutations": 1}})
            await call(client, "write_source", _create("r1.txt", **a))
            await call(client, "write_source", _create("b1.txt", **b))  # implicit only
            implicit_b = (await call(client, "get_task", b))["task"]["task_id"]
    task_id = opened["task"]["task_id"]

    with running_server(repo, "--profile", "full") as second:  # cpl down (SIGTERM), cpl up
        async with mcp_client(second) as client:
            failed, body, text = await _answer(client, "write_source", _create("r2.txt", **a))
            assert failed and body["error"]["code"] == ErrorCode.TASK_ALREADY_CLOSED.code, body
            # Was: applied under a new implicit task, "mutations 2/200".
            assert body["error"]["details"] == {"task_id": task_id, "task_state": "CLOSED_INTERRUPTED",
                                                "close_reason": "server stopped"}
            assert task_id in text and "call open_task" in text and "server stopped" in text
            assert not (repo / "r2.txt").exists()
            failed, body, _ = await _answer(client, "run_test_targets", {**a, "targets": ["tests/test_a.py"]})
            assert failed and body["error"]["code"] == ErrorCode.TASK_ALREADY_CLOSED.code  # test runs too
            state = (await call(client, "get_task", a))["task"]
            assert state["task_id"] == task_id and state["limits"]["max_mutations"] == 1
            assert state["counters"]["mutation_count"] == 1
            await call(client, "search", {**a, "query": "one"})  # reads go on (§12.3)
            failed, body, _ = await _answer(client, "write_source", _create("r2.txt", **a))
            assert failed and body["error"]["code"] == ErrorCode.TASK_ALREADY_CLOSED.code  # until open_task
            fresh = await call(client, "open_task", {**a, "limits": {"max_mutations": 1}})
            assert "closed_previous" not in fresh and fresh["task"]["task_id"] != task_id
            await call(client, "write_source", _create("r2.txt", **a))

            # The implicit-only session declared no limits: a new implicit task, and the answer says so.
            failed, body, _ = await _answer(client, "write_source", _create("b2.txt", **b))
            assert not failed, body
            new_b = body["meta"]["task_id"]
            assert new_b != implicit_b and body["meta"]["warnings"] == [
                f"task {implicit_b} was closed CLOSED_INTERRUPTED (server stopped); "
                f"a new implicit task {new_b} began"]


@anyio
async def test_a_killed_server_does_not_lift_the_limits_of_a_client_programs_session(tmp_path: Path) -> None:
    """The stateless client's own session (its clientInfo), a server killed: the start interrupts the task."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    first = start_server(repo)
    try:
        async with mcp_client(first, "s53-agent") as client:
            opened = await call(client, "open_task", {"limits": {"max_mutations": 3}})
            await call(client, "write_source", _create("k1.txt"))
    finally:
        first.stop(signal.SIGKILL)
    with running_server(repo) as second:
        async with mcp_client(second, "s53-agent") as client:
            failed, body, _ = await _answer(client, "write_source", _create("k2.txt"))
            assert failed and body["error"]["code"] == ErrorCode.TASK_ALREADY_CLOSED.code, body
            assert body["error"]["details"]["task_id"] == opened["task"]["task_id"]
            assert body["error"]["details"]["close_reason"] == "server restart"
        async with mcp_client(second) as other:  # another program: its own session, a new implicit task
            await call(other, "write_source", _create("k3.txt"))
    assert not (repo / "k2.txt").exists() and (repo / "k3.txt").exists()


@anyio
async def test_open_task_answers_the_task_it_superseded_as_interrupted(tmp_path: Path) -> None:
    """The task ``open_task`` replaced ended without an outcome: interrupted, not a success (§12.2)."""
    with running_server(make_repo(tmp_path / "repo", {"a.txt": "one\n"})) as server:
        async with mcp_client(server) as client:
            first = await call(client, "open_task", {"limits": {"max_mutations": 4}})
            await call(client, "write_source", _create("s1.txt"))
            second = await call(client, "open_task")
    closed = second["closed_previous"]
    assert closed["task_id"] == first["task"]["task_id"] and closed["counters"]["mutation_count"] == 1
    assert (closed["state"], closed["close_reason"]) == ("CLOSED_INTERRUPTED", "superseded by open_task")


def _open(tracker: TaskTracker, session: str, **limits: int) -> str:
    run_call(tracker, "open_task", "meta", session=session,
             during=lambda rid: tracker.open_task(session, limits, request_id=rid))
    return tracker.get_task(session).task.task_id


def test_a_budget_closed_task_still_refuses_writes_after_a_restart(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path)
    task_id = _open(tracker, "agent", max_mutations=1)
    assert run_call(tracker, "write_source", "mutation", session="agent").error is None
    assert run_call(tracker, "write_source", "mutation", session="agent").error is not None
    tracker.stop()
    restarted = make_tracker(tmp_path)
    refused = run_call(restarted, "write_source", "mutation", session="agent").error
    assert refused is not None and refused.code == ErrorCode.TASK_BUDGET_EXCEEDED.code
    assert refused.details["task_id"] == task_id and refused.details["budget_type"] == "mutations"


def test_open_task_as_a_sessions_first_call_is_the_task_a_restart_returns_to(tmp_path: Path) -> None:
    """The implicit task and the explicit one open in the same millisecond; the explicit one is the newer."""
    clock = FakeClock()
    tracker = make_tracker(tmp_path, clock)
    explicit = {f"agent{i}": _open(tracker, f"agent{i}", max_mutations=2) for i in range(12)}
    tracker.stop()
    restarted = make_tracker(tmp_path, clock)
    for session, task_id in explicit.items():
        refused = run_call(restarted, "write_source", "mutation", session=session).error
        assert refused is not None and refused.details["task_id"] == task_id, session


def test_a_session_new_to_the_restarted_server_starts_as_before(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path)
    run_call(tracker, "search", "read", session="old")
    tracker.stop()
    restarted = make_tracker(tmp_path)
    called = run_call(restarted, "write_source", "mutation", session="new")
    assert called.error is None and called.notes is not None and called.notes.warnings == ()
    assert restarted.get_task("new").task.implicit


def test_open_task_closes_the_task_it_supersedes_interrupted_not_successful(tmp_path: Path) -> None:
    tracker = make_tracker(tmp_path)
    first = _open(tracker, "agent", max_mutations=5)
    run_call(tracker, "write_source", "mutation", session="agent")
    view = tracker.open_task("agent")
    assert view.closed_previous is not None and view.closed_previous.task_id == first
    stored = tracker.ledger.get_task(first)
    assert stored is not None and stored.state is TaskState.CLOSED_INTERRUPTED
    assert stored.close_reason == "superseded by open_task" and stored.mutation_count == 1
