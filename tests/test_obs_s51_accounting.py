"""What the operator reads about calls, runs and exports names the right thing (qa39 section 8): the budget a
refusal hit, the ledger row a log line belongs to, a killed run's real duration, an OTLP collector that is down."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.builders import ServerHandle, call, call_error, make_repo, mcp_client, running_server, start_server

pytestmark = pytest.mark.anyio

FILES = {"src/app.py": "def handle_request():\n    return 1\n", "pytest.ini": "[pytest]\n",
         "tests/test_ok.py": "def test_ok():\n    assert True\n"}


def _create(path: str) -> dict[str, Any]:
    return {"edits": [{"path": path, "action": "create", "content": "x\n"}]}


def _budget_samples(server: ServerHandle) -> dict[tuple[tuple[str, str], ...], float]:
    out: dict[tuple[tuple[str, str], ...], float] = {}
    for family in text_string_to_metric_families(server.get("/metrics").text):
        for sample in family.samples:
            if sample.name == "codeplane_task_budget_exhausted_total":
                out[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def _log(root: Path) -> list[dict[str, Any]]:
    text = (root / ".codeplane" / "logs" / "codeplane.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


async def test_budget_refusals_are_counted_by_the_budget_that_ran_out(tmp_path: Path) -> None:
    with running_server(make_repo(tmp_path / "repo", FILES)) as server:
        async with mcp_client(server) as client:
            await call(client, "open_task", {"limits": {"max_mutations": 1}})
            await call(client, "write_source", _create("m1.txt"))
            assert (await call_error(client, "write_source", _create("m2.txt")))["code"] == 6001
            # The task closed on its mutations budget: a test run is refused for it, not for the test budget.
            refused = await call_error(client, "run_test_targets", {"targets": ["tests/test_ok.py"]})
            assert refused["details"]["budget_type"] == "mutations"
        assert _budget_samples(server) == {(("budget", "mutations"),): 2.0}


async def test_a_failed_calls_log_line_names_its_ledger_row_and_tool(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            await call(client, "search", {"query": "handle_request"})
            await call_error(client, "read_source", {"targets": [{"path": "missing.py"}]})
    conn = sqlite3.connect(f"{(repo / '.codeplane' / 'ledger.db').as_uri()}?mode=ro", uri=True)
    try:
        rows = dict(conn.execute("SELECT request_id, op_id FROM operations WHERE op_type = 'read_source'"))
    finally:
        conn.close()
    lines = _log(repo)
    failed = [e for e in lines if e["event"] == "tool call failed"]
    assert len(failed) == 1 and failed[0]["tool"] == "read_source"
    assert failed[0]["op_id"] == rows[failed[0]["request_id"]], (failed, rows)
    # No line carries a tool name where the ledger's number belongs.
    assert all(isinstance(e["op_id"], int) for e in lines if "op_id" in e)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_an_unreachable_otlp_collector_shows_in_status_live_and_the_log(tmp_path: Path) -> None:
    endpoint = f"http://otluser:otlpPASSWORD99@127.0.0.1:{_closed_port()}/v1/traces"
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo, "--set", f"observability.otlp_endpoint={endpoint}") as server:
        server.wait_serving()
        async with mcp_client(server) as client:
            await call(client, "search", {"query": "handle_request"})
        deadline = time.monotonic() + 20
        otlp: dict[str, Any] = {}
        while time.monotonic() < deadline:
            otlp = server.get("/status").json()["observability"]["otlp"]
            if otlp["failed_batches"]:
                break
            time.sleep(0.2)
        assert otlp["failed_batches"] >= 1 and otlp["failed_spans"] >= 1 and otlp["failing"] is True, otlp
        assert "refused" in otlp["last_error"].lower() and otlp["last_error_at"].endswith("Z")
        assert otlp["endpoint"].startswith("http://otluser:***@")
        live = server.get("/dashboard/api/live").json()["server"]
        assert live["otlp_export"] is True and live["otlp_failing"] == otlp["last_error"]
    told = [e for e in _log(repo) if e["event"] == "OTLP export failing"]
    assert len(told) == 1, "one line when it starts failing, not one per batch"
    assert "refused" in told[0]["error"].lower() and "otlpPASSWORD99" not in json.dumps(told)


async def test_a_run_cut_by_a_kill_does_not_count_the_servers_downtime(tmp_path: Path) -> None:
    files = {**FILES, "tests/test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(120)\n"}
    repo = make_repo(tmp_path / "repo", files)
    first = start_server(repo)
    began = time.monotonic()  # before the run starts: its duration is at most the time up to the kill
    try:
        async with mcp_client(first) as client:
            started = await call(client, "run_test_targets", {"targets": ["tests/test_slow.py"], "wait_sec": 0})
            time.sleep(5)
    finally:
        alive_for = time.monotonic() - began
        first.stop(signal.SIGKILL)
    time.sleep(6)  # the server is down: this must not count
    with running_server(repo) as second:
        async with mcp_client(second) as client:
            run = await call(client, "get_test_run", {"run_id": started["run_id"]})
    assert run["state"] == "failed" and "server stopped" in run["message"]
    # Ended at its last heartbeat (every 2 s) before the kill, not at the restart 6 s and a boot later.
    assert 3.0 <= run["duration_s"] <= alive_for + 0.2, (run["duration_s"], alive_for)
