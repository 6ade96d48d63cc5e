"""Tasks, budgets and the ledger through the real server and the official MCP client."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from codeplane.tasks.inspection import check_ledger
from tests.builders import (
    ServerHandle,
    call,
    call_error,
    cpl_json,
    envelope,
    make_repo,
    mcp_client,
    running_server,
    start_server,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("tasks") / "repo", {
        "a.txt": "one\n", "pytest.ini": "[pytest]\n",
        "tests/test_stuck.py": "def test_stuck():\n    assert 1 + 1 == 3, 'still broken'\n"})
    with running_server(repo, "--set", "tasks.read_budget_calls=4") as handle:
        yield handle


async def answer(client: Client, tool: str, args: dict[str, Any] | None = None) -> tuple[bool, dict[str, Any]]:
    """(is_error, envelope) for any call."""
    res = await client.call_tool(tool, args or {})
    return bool(res.is_error), envelope(res)


def _create(path: str, content: str = "x\n", *, dry_run: bool = False, overwrite: bool = False) -> dict[str, Any]:
    return {"edits": [{"path": path, "action": "create", "content": content, "overwrite": overwrite}],
            "dry_run": dry_run}


async def test_meta_names_the_task_once_and_the_budget_only_near_a_limit(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        failed, body = await answer(client, "describe")
        assert not failed
        meta = body["meta"]
        assert meta["task_id"].startswith("task_") and "task_state" not in meta, "OPEN is not news"
        assert "budget" not in meta, "no limit is near"
        task = await call(client, "get_task")
        assert task["task"]["implicit"] is True and task["task"]["task_id"] == meta["task_id"]
        assert task["task"]["repo_snapshot"]["git_head"]
        assert task["budget"].startswith("mutations 0/200, test_runs 0/50, read_calls 0/4, read_bytes 0/")
        failed, body = await answer(client, "describe", {"action": "nonsense"})
        assert failed and body["meta"] == {}, "the task is not news any more"
        for _ in range(4):  # the fixture's read budget is 4 calls: from 80 % on, every answer shows it
            failed, body = await answer(client, "write_source", _create("r.txt", dry_run=True))
        assert not failed and "read_calls 4/4" in body["meta"]["budget"]


async def test_mutation_budget_exhaustion_closes_task_and_refuses_later_calls(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        implicit = (await call(client, "get_task"))["task"]["task_id"]
        opened = await call(client, "open_task", {"limits": {"max_mutations": 1}})
        assert opened["closed_previous"]["task_id"] == implicit
        assert opened["closed_previous"]["state"] == "CLOSED_INTERRUPTED"
        assert opened["task"]["limits"] == {"max_mutations": 1, "max_test_runs": 50, "max_duration_sec": 14400}
        failed, body = await answer(client, "write_source", _create("m1.txt"))
        assert not failed and body["meta"]["budget"].startswith("mutations 1/1")
        failed, body = await answer(client, "write_source", _create("m2.txt"))
        assert failed and body["error"]["code"] == 6001 and body["error"]["error"] == "TASK_BUDGET_EXCEEDED"
        assert body["error"]["details"]["budget_type"] == "mutations"
        assert (body["error"]["details"]["limit"], body["error"]["details"]["current"]) == (1, 1)
        assert body["meta"]["task_state"] == "CLOSED_FAILED"
        # The hint is a call that works: close_task on the closed task is 6003 (it said "close_task and open_task").
        assert body["error"]["details"]["hint"].startswith("call open_task")
        assert (await call_error(client, "close_task", {"outcome": "success"}))["code"] == 6003
        assert not (server.root / "m2.txt").exists()
        failed, body = await answer(client, "write_source", _create("m3.txt"))
        assert failed and body["error"]["code"] == 6001  # every later write, until open_task
        failed, body = await answer(client, "write_source", _create("m3.txt", dry_run=True))
        assert not failed, "reads go on: a budget refuses mutating operations (§12.3)"
        state = await call(client, "get_task", {"operations": 5})
        assert state["task"]["state"] == "CLOSED_FAILED" and state["task"]["limit_triggered"] == "mutations"
        assert [op.get("limit_triggered") for op in state["operations"] if op["op_type"] == "write_source"] == [
            None, "mutations", "mutations", None]
        fresh = await call(client, "open_task")
        assert "closed_previous" not in fresh and fresh["task"]["state"] == "OPEN"
        await call(client, "write_source", _create("m2.txt"))


async def test_duration_limit_refuses_calls_after_the_deadline(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        await call(client, "open_task", {"limits": {"max_duration_sec": 1}})
        await anyio.sleep(1.1)
        failed, body = await answer(client, "write_source", _create("late.txt"))
        assert failed and body["error"]["code"] == 6001
        assert body["error"]["details"]["budget_type"] == "duration"
        assert body["meta"]["task_state"] == "CLOSED_FAILED"
        await call(client, "describe")  # meta calls still work
        await call(client, "write_source", _create("late.txt", dry_run=True))  # and reads


async def test_read_budget_is_enforced_and_reset_budget_restores_it(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        for _ in range(4):
            await call(client, "write_source", _create("r.txt", dry_run=True))  # dry runs are reads
        failed, body = await answer(client, "write_source", _create("r.txt", dry_run=True))
        assert failed and body["error"]["code"] == 6004 and body["error"]["error"] == "READ_BUDGET_EXCEEDED"
        assert body["error"]["details"]["budget_type"] == "read_calls"
        assert "task_state" not in body["meta"] and "read_calls 4/4" in body["meta"]["budget"]
        reset = await call(client, "reset_budget")
        assert reset["before"]["calls"] == 4 and reset["before"]["bytes"] > 0
        assert reset["after"] == {**reset["before"], "calls": 0, "bytes": 0, "resets": 1}
        await call(client, "write_source", _create("r.txt", dry_run=True))
        ops = (await call(client, "get_task", {"operations": 3}))["operations"]
        assert [(op["op_type"], op.get("error_code")) for op in ops] == [
            ("write_source", 6004), ("reset_budget", None), ("write_source", None)]


async def test_rewriting_identical_content_is_flagged_no_op(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        failed, first = await answer(client, "write_source", _create("n.txt", "C\n", overwrite=True))
        assert not failed and set(first["meta"]) == {"task_id"}, "a first mutation is not news"
        _, second = await answer(client, "write_source", _create("n.txt", "C\n", overwrite=True))
        _, third = await answer(client, "write_source", _create("n.txt", "C\n", overwrite=True))
        assert second["meta"]["no_op"] is True and third["meta"]["no_op"] is True
        assert second["meta"]["mutation_fingerprint"] == third["meta"]["mutation_fingerprint"]
        counters = (await call(client, "get_task"))["task"]["counters"]
        assert counters["mutation_count"] == 3  # no-ops still count


async def test_sessions_do_not_share_counters_unless_joined_explicitly(server: ServerHandle) -> None:
    async with mcp_client(server) as one, mcp_client(server) as two:
        await call(one, "open_task", {"limits": {"max_mutations": 1}})
        await call(one, "write_source", _create("s1.txt"))
        failed, _ = await answer(one, "write_source", _create("s2.txt"))
        assert failed
        _, body = await answer(two, "write_source", _create("s3.txt"))
        assert body["meta"] == {"task_id": body["meta"]["task_id"]}
        assert (await call(two, "get_task"))["budget"].startswith("mutations 1/200")
        # Concurrent reads from two sessions land on each session's own read budget. (Concurrent calls
        # may use several HTTP connections, so the sessions are named explicitly here.)
        async with anyio.create_task_group() as group:
            for client, session in ((one, "sess_a"), (two, "sess_b"), (two, "sess_a"), (one, "sess_b"),
                                    (one, "sess_a")):
                group.start_soon(call, client, "write_source", {**_create("c.txt", dry_run=True),
                                                                "session_id": session})
        assert (await call(one, "get_task", {"session_id": "sess_a"}))["read_budget"]["calls"] == 3
        assert (await call(one, "get_task", {"session_id": "sess_b"}))["read_budget"]["calls"] == 2
        # An explicit session_id joins one session (and its task and budgets) from two connections.
        await call(one, "write_source", {**_create("j.txt"), "session_id": "sess_joined"})
        joined = await call(two, "get_task", {"session_id": "sess_joined"})
        assert joined["task"]["session_id"] == "sess_joined" and joined["task"]["counters"]["mutation_count"] == 1


async def test_every_call_is_a_ledger_row_and_status_shows_open_tasks(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        await answer(client, "describe", {"action": "nonsense"})
        await answer(client, "no_such_tool")
        await call(client, "describe")
        state = await call(client, "get_task", {"operations": 10})
        codes = [(op["op_type"], op.get("error_code")) for op in state["operations"]]
        assert codes[:3] == [("describe", 1003), ("no_such_tool", 1004), ("describe", None)]
        status = cpl_json("status", cwd=server.root)
        tasks = status["tasks"]
        mine = [t for t in tasks["open_tasks"] if t["task_id"] == state["task"]["task_id"]]
        assert mine and mine[0]["budget"] == "mutations 0/200, test_runs 0/50, read_calls 0/4, read_bytes 0/52428800"
        assert tasks["recent_operations"] and tasks["ledger"]["last_op_id"] >= 4


async def test_restart_interrupts_open_tasks_and_doctor_detects_tampering(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    handle = start_server(repo)
    try:
        async with mcp_client(handle) as client:
            opened = await call(client, "open_task", {"limits": {"max_mutations": 5}})
            await call(client, "write_source", _create("w.txt"))
    finally:
        handle.stop()
    with running_server(repo) as again:
        async with mcp_client(again) as client:
            old = await call(client, "get_task", {"task_id": opened["task"]["task_id"], "operations": 5})
            # the server stopped cleanly (SIGTERM) and closed it; a killed one leaves it to the restart
            assert old["task"]["state"] == "CLOSED_INTERRUPTED" and old["task"]["close_reason"] == "server stopped"
            assert old["task"]["counters"]["mutation_count"] == 1
            assert old["operations"][-1]["op_type"] == "task.interrupted"
            assert (await call(client, "get_task"))["task"]["state"] == "OPEN"
    intact = check_ledger(repo)
    assert intact[0].ok and "hash chain intact" in intact[0].detail and intact[1].ok
    conn = sqlite3.connect(repo / ".codeplane" / "ledger.db", isolation_level=None)
    with pytest.raises(sqlite3.DatabaseError):
        conn.execute("UPDATE operations SET success = 1 WHERE op_id = 2")
    with pytest.raises(sqlite3.DatabaseError):
        conn.execute("DELETE FROM operations WHERE op_id = 2")
    conn.execute("DROP TRIGGER operations_reject_update")
    conn.execute("UPDATE operations SET duration_ms = duration_ms + 1 WHERE op_id = 3")
    conn.close()
    report = cpl_json("doctor", cwd=repo)
    chain = next(c for c in report["checks"] if c["name"] == "ledger hash chain")
    assert report["ok"] is False and not chain["ok"] and "op_id=3" in chain["detail"]


async def test_test_run_budget_and_same_failure_after_a_mutation_flags_non_progress(server: ServerHandle) -> None:
    session = {"session_id": "sess_tests"}
    run = {"targets": ["tests/test_stuck.py"], "wait_sec": 120, **session}
    async with mcp_client(server) as client:
        await call(client, "open_task", {"limits": {"max_test_runs": 2}, **session})
        failed, first = await answer(client, "run_test_targets", run)
        assert not failed and first["result"]["state"] == "failed" and first["result"]["finished"]
        assert first["meta"]["failure_fingerprint"] and "non_progress" not in first["meta"]
        await call(client, "write_source", {**_create("notes.txt", "tried something\n"), **session})
        _, second = await answer(client, "run_test_targets", run)
        assert second["meta"]["failure_fingerprint"] == first["meta"]["failure_fingerprint"]
        assert second["meta"]["non_progress"] is True
        failed, third = await answer(client, "run_test_targets", run)
        assert failed and third["error"]["code"] == 6001 and third["error"]["details"]["budget_type"] == "test_runs"
        assert "task_state" not in third["meta"]  # the test budget refuses runs, it does not close the task
        assert (await call(client, "get_task", session))["task"]["state"] == "OPEN"
        await call(client, "write_source", {**_create("notes.txt", "again\n", overwrite=True), **session})


async def test_in_the_core_profile_a_spent_budget_is_recovered_with_the_calls_its_errors_name(tmp_path: Path) -> None:
    """The default profile used to withhold open_task and reset_budget, the calls 6001 and 6004 name: an agent
    whose budget ran out was stuck (every call refused) until its session expired."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    with running_server(repo, "--profile", "core", "--set", "tasks.max_mutations=1",
                        "--set", "tasks.read_budget_calls=2") as server:
        async with mcp_client(server) as client:
            await call(client, "write_source", _create("one.txt"))
            failed, body = await answer(client, "write_source", _create("two.txt"))
            assert failed and body["error"]["code"] == 6001
            assert body["error"]["details"]["hint"].startswith("call open_task")
            await call(client, "open_task", {"limits": {"max_mutations": 5}})
            await call(client, "write_source", _create("two.txt"))
            for _ in range(2):
                await call(client, "search", {"query": "a"})
            failed, body = await answer(client, "search", {"query": "a"})
            assert failed and body["error"]["code"] == 6004
            await call(client, "reset_budget", {})
            await call(client, "search", {"query": "a"})
    assert (repo / "two.txt").is_file()
