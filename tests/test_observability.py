"""Metrics and traces through the real server (spec §13): ``/metrics`` as Prometheus parses it, one span
tree per call in the dashboard API, the OTLP export to a local receiver, and observability switched off."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client.parser import text_string_to_metric_families

from codeplane.server.observability.metrics import IndexSample, ServerMetrics, StateReaders, TasksSample
from tests.builders import ServerHandle, call, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {"src/app.py": "def handle_request():\n    return 1\n", "README.md": "# demo\n"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerHandle]:
    with running_server(make_repo(tmp_path / "repo", FILES)) as handle:
        yield handle


def samples(server: ServerHandle) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Every sample of ``/metrics`` by sample name, parsed by prometheus_client's own text parser."""
    response = server.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return out


def value(found: dict[str, list[tuple[dict[str, str], float]]], name: str, **labels: str) -> float:
    return sum(v for lbl, v in found.get(name, []) if all(lbl.get(k) == want for k, want in labels.items()))


def operations(server: ServerHandle, **params: str) -> dict[str, Any]:
    response = server.get("/dashboard/api/operations", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_call_counts_and_latency_histograms_move_with_calls(server: ServerHandle) -> None:
    before = samples(server)
    assert value(before, "codeplane_tool_calls_total", tool="describe") == 0
    async with mcp_client(server) as client:
        for _ in range(3):
            await call(client, "describe")
        missing = await call_error(client, "read_source", {"targets": [{"path": "nope.py"}]})
        invalid = await call_error(client, "search", {"query": "x", "limit": "many"})
    after = samples(server)
    assert value(after, "codeplane_tool_calls_total", tool="describe", outcome="ok", error_code="") == 3
    assert value(after, "codeplane_tool_call_duration_seconds_count", tool="describe") == 3
    assert value(after, "codeplane_tool_call_duration_seconds_bucket", tool="describe", le="+Inf") == 3
    assert value(after, "codeplane_tool_call_duration_seconds_sum", tool="describe") > 0
    # Each failure is counted under its catalog code.
    assert value(after, "codeplane_tool_calls_total", tool="read_source", outcome="error",
                 error_code=str(missing["code"])) == 1
    assert invalid["code"] == 1003
    assert value(after, "codeplane_tool_calls_total", tool="search", outcome="error", error_code="1003") == 1
    # State read at scrape time, and the process collector.
    assert value(after, "codeplane_index_ready") == 1
    assert value(after, "codeplane_index_files", kind="text") >= 2
    assert value(after, "codeplane_index_head_drift") == 0
    assert value(after, "codeplane_index_last_reconcile_age_seconds") >= 0
    assert value(after, "codeplane_watcher_state", state="running") == 1
    assert value(after, "codeplane_tasks_open") >= 1
    assert value(after, "codeplane_tasks_opened_total") >= 1
    assert value(after, "process_resident_memory_bytes") > 0
    assert value(after, "process_open_fds") > 0
    assert value(after, "codeplane_index_reconcile_duration_seconds_count", kind="full") >= 1


async def test_task_counters_count_the_implicit_task_open_task_replaces(server: ServerHandle) -> None:
    """A new client's first call, ``open_task``: its implicit task opened and closed (superseded) within that
    call, and neither was counted (the counters followed the task id the answers showed)."""
    before = samples(server)
    async with mcp_client(server) as client:
        await call(client, "open_task")
        await call(client, "close_task", {"outcome": "failed"})
    after = samples(server)
    opened = value(after, "codeplane_tasks_opened_total") - value(before, "codeplane_tasks_opened_total")
    assert opened == 2, opened  # the implicit one and the one open_task opened
    for state, closed in (("CLOSED_INTERRUPTED", 1), ("CLOSED_FAILED", 1)):
        moved = value(after, "codeplane_tasks_closed_total", state=state) - value(
            before, "codeplane_tasks_closed_total", state=state)
        assert moved == closed, (state, moved)


async def test_a_write_is_one_span_tree_with_its_subsystem_steps(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        opened = await call(client, "open_task")
        await call(client, "write_source", {"edits": [
            {"path": "src/new_mod.py", "action": "create", "content": "VALUE = 1\n"}]})
        await call(client, "search", {"query": "VALUE"})
    task_id = opened["task"]["task_id"]
    found = operations(server, tool="write_source")
    assert found["total"] == 1
    op = found["operations"][0]
    assert (op["outcome"], op["task_id"], op["files"]) == ("ok", task_id, ["src/new_mod.py"])
    trace = server.get(f"/dashboard/api/traces/{op['trace_id']}").json()
    names = [s["name"] for s in trace["spans"]]
    assert names[0] == "tools/call write_source"
    for step in ("validate", "tasks.admit", "handler", "mutation.plan", "mutation.commit", "index.refresh",
                 "index.publish_epoch", "tasks.record"):
        assert step in names, (step, names)
    by_name = {s["name"]: s for s in trace["spans"]}
    root = by_name["tools/call write_source"]
    assert root["attrs"]["task_id"] == task_id and root["attrs"]["outcome"] == "ok"
    assert root["attrs"]["files"] == "src/new_mod.py"
    # The subsystem spans nest under the handler (across the worker thread the tool runs in).
    handler = by_name["handler"]
    assert by_name["mutation.commit"]["parent_id"] == handler["span_id"]
    assert by_name["mutation.commit"]["depth"] == 2
    assert all(s["duration_ms"] >= 0 for s in trace["spans"])
    search = operations(server, tool="search")["operations"][0]
    search_spans = [s["name"] for s in server.get(f"/dashboard/api/traces/{search['trace_id']}").json()["spans"]]
    assert "index.search" in search_spans


async def test_operations_filter_by_task_tool_outcome_and_time(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        await call(client, "describe")
        started = int(time.time() * 1000)
        opened = await call(client, "open_task")
        await call_error(client, "read_source", {"targets": [{"path": "missing.py"}]})
        await call(client, "describe")
    task_id = opened["task"]["task_id"]
    errors = operations(server, outcome="error")["operations"]
    assert [op["tool"] for op in errors] == ["read_source"] and errors[0]["error_code"] is not None
    in_task = operations(server, task=task_id)["operations"]
    assert [op["tool"] for op in in_task] == ["describe", "read_source", "open_task"]  # newest first
    recent = operations(server, tool="describe", since_ms=str(started))["operations"]
    assert len(recent) == 1
    body = operations(server)
    assert "describe" in body["tools"] and task_id in body["tasks"]
    assert server.get("/dashboard/api/operations", params={"outcome": "maybe"}).status_code == 400
    assert server.get("/dashboard/api/operations", params={"limit": "0"}).status_code == 400
    assert server.get("/dashboard/api/traces/nope").status_code == 404
    live = server.get("/dashboard/api/live").json()
    assert live["calls"]["tools"]["describe"]["calls"] == 2
    task = next(t for t in live["tasks"] if t["task_id"] == task_id)
    assert task["use"]["read_calls"][0] >= 1 and task["operations"] == 3
    assert task["per_min"] > 0 and task["idle_s"] is not None and task["idle_s"] >= 0


def test_dashboard_is_served_from_the_package_and_guarded(server: ServerHandle) -> None:
    page = server.get("/dashboard")
    assert page.status_code == 200 and "dashboard.js" in page.text
    assert "http" not in page.text.replace("http-equiv", "")  # nothing from a CDN
    assert server.get("/dashboard/static/dashboard.js").status_code == 200
    assert server.get("/dashboard/static/evil.js").status_code == 404
    for route in ("/dashboard", "/dashboard/api/live", "/metrics"):
        assert server.get(route, headers={"Origin": "http://evil.example"}).status_code == 403


class _Receiver(BaseHTTPRequestHandler):
    requests: list[ExportTraceServiceRequest] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        message = ExportTraceServiceRequest()
        message.ParseFromString(body)
        type(self).requests.append(message)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return None


async def test_traces_go_to_a_configured_otlp_endpoint(tmp_path: Path) -> None:
    receiver = HTTPServer(("127.0.0.1", 0), _Receiver)
    _Receiver.requests = []
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{receiver.server_port}/v1/traces"
    try:
        with running_server(make_repo(tmp_path / "repo", FILES), "--set",
                            f"observability.otlp_endpoint={endpoint}") as server:
            async with mcp_client(server) as client:
                await call(client, "search", {"query": "handle_request"})
            deadline = time.monotonic() + 15
            while not _Receiver.requests and time.monotonic() < deadline:
                time.sleep(0.1)
    finally:
        receiver.shutdown()
    spans = [(span, rs.resource) for req in _Receiver.requests for rs in req.resource_spans
             for ss in rs.scope_spans for span in ss.spans]
    names = {span.name for span, _ in spans}
    assert {"tools/call search", "handler", "index.search"} <= names, names
    root, resource = next((s, r) for s, r in spans if s.name == "tools/call search")
    attrs = {a.key: a.value.string_value or a.value.int_value for a in root.attributes}
    assert attrs["codeplane.tool"] == "search" and attrs["codeplane.outcome"] == "ok"
    assert {a.key: a.value.string_value for a in resource.attributes}["service.name"] == "codeplane"
    search_span = next(s for s, _ in spans if s.name == "index.search")
    assert search_span.trace_id == root.trace_id and search_span.end_time_unix_nano >= search_span.start_time_unix_nano


async def test_observability_off_keeps_process_metrics_only(tmp_path: Path) -> None:
    with running_server(make_repo(tmp_path / "repo", FILES), "--set", "observability.enabled=false") as server:
        async with mcp_client(server) as client:
            await call(client, "describe")
        found = samples(server)
        assert value(found, "process_resident_memory_bytes") > 0
        assert value(found, "codeplane_tool_calls_total") == 0
        assert "codeplane_index_epoch" not in found
        assert operations(server)["total"] == 0
        assert server.get("/dashboard/api/live").json()["server"]["observability"] is False


def test_bad_otlp_endpoint_is_a_config_error(tmp_path: Path) -> None:
    from codeplane.core.config import load_config
    from codeplane.core.errors import CodePlaneError

    with pytest.raises(CodePlaneError) as caught:
        load_config(tmp_path, overrides=["observability.otlp_endpoint=localhost:4318"], environ={},
                    global_path=tmp_path / "no-global.yaml")
    assert caught.value.code == 2002 and "otlp_endpoint" in caught.value.message


async def test_a_budget_refusal_is_counted_and_listed_as_refused(tmp_path: Path) -> None:
    with running_server(make_repo(tmp_path / "repo", FILES), "--set", "tasks.read_budget_calls=2") as server:
        async with mcp_client(server) as client:
            for _ in range(2):
                await call(client, "search", {"query": "handle_request"})
            refused = await call_error(client, "search", {"query": "handle_request"})
        found = samples(server)
        assert value(found, "codeplane_task_budget_exhausted_total", budget="read_calls") == 1
        assert value(found, "codeplane_tool_calls_total", tool="search", outcome="refused",
                     error_code=str(refused["code"])) == 1
        op = operations(server, outcome="refused")["operations"][0]
        spans = server.get(f"/dashboard/api/traces/{op['trace_id']}").json()["spans"]
        assert [s["name"] for s in spans] == ["tools/call search", "validate", "tasks.admit", "tasks.record"]
        assert spans[2]["error"] == "CodePlaneError"


def test_the_watcher_state_metric_names_a_watcher_waiting_for_the_first_build() -> None:
    sample = IndexSample(ready=False, epoch=0, last_reconcile_ms=None, pending_changes=0, head_drift=False,
                         files_by_kind={}, watcher="starting")
    metrics = ServerMetrics(StateReaders(index=lambda: sample, tasks=lambda: TasksSample(0, 0),
                                         active_test_runs=lambda: 0, traces_kept=lambda: 0, now_ms=lambda: 0))
    text = metrics.exposition().decode()
    assert 'codeplane_watcher_state{state="starting"} 1.0' in text
    assert 'codeplane_watcher_state{state="running"} 0.0' in text
