"""Task accounting seen through the real server and the official MCP client (QA36 §4-§7, §9).

- A run's failure fingerprint belongs to the task that started the run, not to whichever session polls first.
- A tool name the registry does not serve is stored and echoed bounded.
- The task tools' descriptions say what a closed task refuses as the server does it (writes and test runs).
- A mutating call is counted whatever it fails on, its argument shape included; the same refused edit again is
  flagged ``no_op``.
- A closed task's budget line leaves ``meta``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    cpl_json,
    envelope,
    make_repo,
    mcp_client,
    running_server,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("tasks_s50") / "repo", {
        "pytest.ini": "[pytest]\n", "pkg/core.py": "VALUE = 1\n",
        "tests/test_f.py": "def test_f():\n    assert 1 + 1 == 3, 'still broken'\n"})
    with running_server(repo) as handle:
        yield handle


async def _answer(client: Client, tool: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any], str]:
    res = await client.call_tool(tool, args)
    return bool(res.is_error), envelope(res), answer_text(res)


async def test_a_runs_failure_goes_to_the_task_that_started_it_not_the_first_poller(server: ServerHandle) -> None:
    a, b = {"session_id": "s50-run-a"}, {"session_id": "s50-run-b"}
    async with mcp_client(server) as client:
        await call(client, "open_task", a)
        await call(client, "open_task", b)
        run = await call(client, "run_test_targets", {**a, "targets": ["tests/test_f.py"], "wait_sec": 0})
        _, polled_by_b, _ = await _answer(client, "get_test_run", {**b, "run_id": run["run_id"], "wait_sec": 60})
        assert polled_by_b["result"]["state"] == "failed"
        assert "failure_fingerprint" not in polled_by_b["meta"]  # was given to B
        _, polled_by_a, _ = await _answer(client, "get_test_run", {**a, "run_id": run["run_id"], "wait_sec": 5})
        fingerprint = polled_by_a["meta"]["failure_fingerprint"]  # was {}: B had taken it
        task_a = (await call(client, "get_task", a))["task"]
        task_b = (await call(client, "get_task", b))["task"]
    assert task_a["last_failure_fingerprint"] == fingerprint
    assert task_b.get("last_failure_fingerprint") is None and task_b["counters"]["test_run_count"] == 0


async def test_a_failure_seen_after_open_task_is_not_the_new_tasks(server: ServerHandle) -> None:
    s = {"session_id": "s50-run-same"}
    async with mcp_client(server) as client:
        run = await call(client, "run_test_targets", {**s, "targets": ["tests/test_f.py"], "wait_sec": 0})
        await call(client, "open_task", s)
        _, polled, _ = await _answer(client, "get_test_run", {**s, "run_id": run["run_id"], "wait_sec": 60})
        assert polled["result"]["state"] == "failed" and "failure_fingerprint" not in polled["meta"]
        task = (await call(client, "get_task", s))["task"]
    assert task.get("last_failure_fingerprint") is None and task["counters"]["test_run_count"] == 0


async def test_an_unknown_tool_name_is_stored_and_echoed_bounded(server: ServerHandle) -> None:
    s = {"session_id": "s50-unknown"}
    async with mcp_client(server) as client:
        failed, body, _ = await _answer(client, "x" * 5000, s)
        assert failed and body["error"]["code"] == 1004
        task = await call(client, "get_task", s)
        described = await call(client, "describe", {})
    shown = [op["op_type"] for op in task["operations"] if op["op_type"].startswith("xxx")]
    assert len(shown) == 1 and len(shown[0]) <= 120 and shown[0].endswith("…(5,000 chars)"), shown
    recent = [op["op_type"] for op in described["status"]["tasks"]["recent_operations"]]
    assert shown[0] in recent and all(len(op) <= 120 for op in recent), recent
    status = cpl_json("status", cwd=server.root)
    assert all(len(op["op_type"]) <= 120 for op in status["tasks"]["recent_operations"])


async def test_the_task_tools_say_a_closed_task_refuses_writes_and_test_runs_not_reads(server: ServerHandle) -> None:
    s = {"session_id": "s50-docs"}
    async with mcp_client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        await call(client, "close_task", {**s, "outcome": "success"})
        read_failed, _, _ = await _answer(client, "read_source", {**s, "targets": [{"path": "pkg/core.py"}]})
        write_failed, write, _ = await _answer(client, "write_source", {**s, "edits": [
            {"path": "pkg/new.py", "action": "create", "content": "X = 1\n"}]})
    close = tools["close_task"].description or ""
    assert "non-meta calls are refused" not in close  # reads were served all along
    assert "writes and test runs are refused (6003)" in close and "reads go on" in close
    duration = tools["open_task"].input_schema["$defs"]["TaskLimitsInput"]["properties"]["max_duration_sec"]
    assert "every further call is refused" not in duration["description"]
    assert "reads go on" in duration["description"]
    assert not read_failed and write_failed and write["error"]["code"] == 6003


async def test_identical_refused_edits_are_flagged_no_op(server: ServerHandle) -> None:
    s = {"session_id": "s50-refused"}
    edit = {**s, "edits": [{"path": "pkg/core.py", "action": "update", "old_text": "NOT THERE", "new_text": "Y"}]}
    async with mcp_client(server) as client:
        await call(client, "open_task", s)
        metas = []
        for _ in range(3):
            failed, body, _ = await _answer(client, "write_source", edit)
            assert failed and body["error"]["code"] == 5002
            metas.append(body["meta"])
        other = {**s, "edits": [{"path": "pkg/core.py", "action": "update", "old_text": "ELSE", "new_text": "Y"}]}
        _, different, _ = await _answer(client, "write_source", other)
        task = await call(client, "get_task", s)
    assert "no_op" not in metas[0]
    assert metas[1]["no_op"] is True and metas[2]["no_op"] is True  # was {} every time
    assert metas[1]["mutation_fingerprint"] == metas[2]["mutation_fingerprint"]
    assert "no_op" not in different["meta"]
    assert [op["no_op"] for op in task["operations"] if op["op_type"] == "write_source"] == [False, True, True, False]


async def test_a_write_with_invalid_arguments_counts_against_the_mutation_budget(server: ServerHandle) -> None:
    s = {"session_id": "s50-invalid"}
    async with mcp_client(server) as client:
        await call(client, "open_task", {**s, "limits": {"max_mutations": 2}})
        bad = {**s, "edits": [{"path": "pkg/core.py", "old": "VALUE", "new": "OTHER"}]}
        codes = []
        for _ in range(3):
            _, body, _ = await _answer(client, "write_source", bad)
            codes.append(body["error"]["code"])
        dry_bad = {**s, "dry_run": True, "edits": [{"path": "pkg/core.py", "old": "VALUE"}]}
        task = await call(client, "get_task", s)
        reopened = await call(client, "open_task", s)
        _, dry, _ = await _answer(client, "write_source", dry_bad)
        after_dry = await call(client, "get_task", s)
    assert codes == [1003, 1003, 6001]  # was 1003 for ever, "mutations 0/2"
    assert task["task"]["state"] == "CLOSED_FAILED" and task["task"]["limit_triggered"] == "mutations"
    assert reopened["task"]["state"] == "OPEN"
    # A mis-shaped dry run asks for a read: it is counted as one, not as a mutation.
    assert dry["error"]["code"] == 1003 and after_dry["task"]["counters"]["mutation_count"] == 0


async def test_a_closed_tasks_budget_line_leaves_the_answers(server: ServerHandle) -> None:
    s = {"session_id": "s50-budget"}
    async with mcp_client(server) as client:
        await call(client, "open_task", {**s, "limits": {"max_mutations": 5}})
        meta: dict[str, Any] = {}
        for n in range(4):
            _, body, _ = await _answer(client, "write_source", {**s, "edits": [
                {"path": f"pkg/b{n}.py", "action": "create", "content": "B = 1\n"}]})
            meta = body["meta"]
        assert meta.get("budget") == "mutations 4/5"
        await call(client, "close_task", {**s, "outcome": "success"})
        _, after, text = await _answer(client, "read_source", {**s, "targets": [{"path": "pkg/core.py"}]})
    assert "budget" not in after["meta"] and "budget=" not in text  # was "mutations 4/5" until open_task
