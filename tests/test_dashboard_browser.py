"""The dashboard as a person sees it: headless Chromium against the real server after real tool calls.

Screenshots land in the test's temp dir (``dashboard-*.png``) so CI can keep them as artifacts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import call, call_error, cpl_env, make_repo, mcp_client, running_server
from tests.webdriver import browser

pytestmark = pytest.mark.anyio

FILES = {
    "src/app.py": "def handle_request():\n    return 1\n",
    "tests/test_app.py": "def test_handle():\n    assert 1 + 1 == 2\n",
}


async def test_dashboard_shows_tools_operations_a_trace_and_the_task_budget(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    shots = tmp_path / "screenshots"
    shots.mkdir()
    env = cpl_env({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    with running_server(repo, env=env) as server, browser(tmp_path / "chromium-profile") as page:
        async with mcp_client(server) as client:
            opened = await call(client, "open_task", {"limits": {"max_mutations": 4}})
            task_id = opened["task"]["task_id"]
            for _ in range(3):
                await call(client, "search", {"query": "handle_request"})
            await call(client, "write_source", {"edits": [
                {"path": "src/extra.py", "action": "create", "content": "EXTRA = 2\n"}]})
            await call_error(client, "read_source", {"targets": [{"path": "missing.py"}]})
            run = await call(client, "run_test_targets", {"targets": ["tests/test_app.py"], "wait_sec": 60})
            assert run["state"] == "passed", run

        page.open(f"{server.base_url}/dashboard")
        # The per-tool table: one row per tool called, with its call count.
        rows = page.wait_for("the search row", lambda: [
            t for t in page.texts("#tools-table tbody tr[data-tool='search']") if t.split()[1] == "3"])
        assert rows[0].startswith("search 3")
        tools = {t.split()[0] for t in page.texts("#tools-table tbody tr[data-tool]")}
        assert {"search", "write_source", "read_source", "open_task", "run_test_targets"} <= tools
        assert page.texts("#health")[0] == "healthy"
        index_facts = page.texts("#index-facts")[0]
        assert "watcher" in index_facts and "running" in index_facts and "(indexed)" in index_facts
        page.wait_for("the test run", lambda: [
            t for t in page.texts("#runs-table tbody tr[data-run]") if "passed" in t])
        page.screenshot(shots / "dashboard-overview.png")

        # The open task with its budget: 1 of 4 mutations used.
        mutations = page.wait_for("the task's budget", lambda: page.texts(
            f"#tasks .task[data-task='{task_id}'] [data-budget='mutations']"))
        assert mutations[0].startswith("1 / 4") and "(25%)" in mutations[0]
        test_runs = page.texts(f"#tasks .task[data-task='{task_id}'] [data-budget='test_runs']")
        assert test_runs[0].startswith("1 / 50")

        # Filter the operations to errors of this task: exactly the failed read.
        page.select("#f-task", task_id)
        page.select("#f-outcome", "error")
        failed = page.wait_for("the filtered operation", lambda: (
            rows if len(rows := page.texts("#ops-table tbody tr[data-trace]")) == 1 else None))
        assert "read_source" in failed[0] and "error" in failed[0]
        page.screenshot(shots / "dashboard-filtered-errors.png")

        # One write's trace and its span breakdown.
        page.select("#f-outcome", "")
        page.select("#f-tool", "write_source")
        page.wait_for("the write row", lambda: page.texts("#ops-table tbody tr[data-tool='write_source']"))
        page.click("#ops-table tbody tr[data-tool='write_source']")
        spans = page.wait_for("the trace view", lambda: page.texts("#trace-view .span-row .span-name"))
        assert spans[0] == "tools/call write_source"
        for step in ("handler", "mutation.commit", "index.refresh", "tasks.record"):
            assert step in spans
        assert "src/extra.py" in page.texts("#trace-facts")[0]
        page.script("document.getElementById('trace-panel').scrollIntoView()")
        page.screenshot(shots / "dashboard-trace.png")
    for name in ("dashboard-overview.png", "dashboard-filtered-errors.png", "dashboard-trace.png"):
        assert (shots / name).stat().st_size > 10_000
    print(f"screenshots: {shots}")
