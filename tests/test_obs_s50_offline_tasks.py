"""QA39 #2: after a crash, ``cpl status`` reads the ledger itself; it said "open tasks: 50" with 60 open and
listed the 50 *oldest*, leaving out the task the crashed agent was using. Offline it now counts every open task
and lists the newest first, as a running server does."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.builders import call, cpl, cpl_json, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


async def test_offline_status_after_a_crash_counts_every_open_task_and_lists_the_newest(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            for n in range(55):
                await call(client, "open_task", {"session_id": f"agent-{n:02}"})
        handle.stop(signal.SIGKILL)  # no clean stop: the tasks stay OPEN in the ledger
    status = cpl_json("status", cwd=repo)
    text = cpl("status", cwd=repo).stdout
    assert status["running"] is False
    tasks = status["tasks"]
    assert tasks["open_task_count"] == 55 and len(tasks["open_tasks"]) == 50
    listed = [t["session_id"] for t in tasks["open_tasks"]]
    assert listed[0] == "agent-54" and set(listed) == {f"agent-{n:02}" for n in range(5, 55)}, listed
    opened = [t["opened_at_ms"] for t in tasks["open_tasks"]]
    assert opened == sorted(opened, reverse=True)
    assert "open tasks: 55 (the 50 newest shown)" in text and "agent-54" in text and "agent-00" not in text
