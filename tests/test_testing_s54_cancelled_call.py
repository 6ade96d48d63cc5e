"""QA54 F2: a ``run_test_targets`` call its client gives up on (``notifications/cancelled``, as the TypeScript SDK
sends after its 60 s timeout, or the user's interrupt) cancels the run it started: the client never learned the
run's id, so nothing could poll or cancel it, and it kept running and holding the task's test-run budget."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from tests.builders import make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


async def test_a_cancelled_run_call_cancels_its_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "tests/test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(60)\n",
        "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
    })
    with running_server(repo) as server:
        server.wait_serving()
        async with mcp_client(server) as client:
            with anyio.move_on_after(4):
                await client.call_tool("run_test_targets", {"targets": ["tests/test_slow.py"], "wait_sec": 60})
                pytest.fail("the run answered before the client gave up")
            deadline = time.monotonic() + 20
            active = server.get("/status").json()["tests"]["active_runs"]
            while active and time.monotonic() < deadline:
                await anyio.sleep(0.2)  # the client's loop sends the cancel: it must run
                active = server.get("/status").json()["tests"]["active_runs"]
            assert active == [], "the run went on after the call that started it was cancelled"
            listed = await client.call_tool("describe", {})
            assert not listed.is_error
