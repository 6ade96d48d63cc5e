"""``cpl status`` with more open tasks than it lists: the count is the whole count, and the tasks listed are the
newest. With 44 open it printed "open tasks: 20" (the length of the bounded list) and left out the five just
opened, which an operator was looking for."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import call, cpl, cpl_json, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


async def test_status_counts_every_open_task_and_lists_the_newest(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            for n in range(25):
                await call(client, "open_task", {"session_id": f"agent-{n:02}"})
        status = cpl_json("status", cwd=repo)
        text = cpl("status", cwd=repo).stdout
    tasks = status["tasks"]
    assert tasks["open_task_count"] == 25 and len(tasks["open_tasks"]) == 20
    listed = [t["session_id"] for t in tasks["open_tasks"]]
    assert listed[0] == "agent-24" and not {"agent-00", "agent-01", "agent-02", "agent-03"} & set(listed), listed
    assert "open tasks: 25 (the 20 newest shown)" in text and "agent-24" in text
