"""A write naming its ``session_id`` finishes when the server stops, as every write does (QA s55 #1).

The stop decides which calls it must let finish by reading their arguments; with ``session_id`` among them they never
validated, so such a write was cut: answered 9003 "nothing was applied" while its batch went on and landed, and the
retry the answer invited applied the edits twice.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from codeplane.mutation import PAUSE_ENV
from tests.builders import answer_text, cpl_env, envelope, make_repo, mcp_client, start_server

pytestmark = pytest.mark.anyio


async def test_a_write_with_a_session_id_finishes_and_answers_its_delta_when_the_server_stops(tmp_path: Path) -> None:
    files = {f"pkg/m{i}.py": f"X{i} = {i}\n" for i in range(2)}
    root = make_repo(tmp_path / "r", files)
    edits = [{"path": p, "action": "update", "old_text": " = ", "new_text": " = 1 + "} for p in sorted(files)]
    # A second per file: the batch is still being applied when the stop comes, and ends well within its grace.
    server = start_server(root, "--set", "server.shutdown_timeout_sec=1", env=cpl_env({PAUSE_ENV: "1000"}))
    try:
        server.wait_serving()
        async with mcp_client(server) as client:
            await client.list_tools()
            call = asyncio.create_task(client.call_tool("write_source", {"edits": edits, "session_id": "agent-7"}))
            await asyncio.sleep(0.8)
            assert not call.done(), "the batch answered before the stop"
            server.proc.send_signal(signal.SIGTERM)
            result = await asyncio.wait_for(call, 30)
        server.proc.wait(30)
    finally:
        server.stop(signal.SIGKILL)
    assert not result.is_error, answer_text(result)  # was: 9003 applied=false, with both files written
    written = [f["path"] for f in envelope(result)["result"]["delta"]["files"]]
    assert written == sorted(files)
    assert all((root / p).read_text().startswith(f"X{i} = 1 + ") for i, p in enumerate(sorted(files)))
