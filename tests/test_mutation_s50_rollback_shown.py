"""A write batch a crash cut short is rolled back at the next start, and that start now says so where an agent
and an operator look (QA39): ``/status``'s storage warnings and mutation section, and ``describe``; only the
log said it, while the agent whose write died mid-call could not know that none of its files changed."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.builders import answer_text, mcp_client, running_server
from tests.test_mutation_crash import generation_on_disk, killed_mid_batch, make_batch_repo

pytestmark = pytest.mark.anyio


async def test_a_batch_rolled_back_at_start_is_shown(tmp_path: Path) -> None:
    repo = make_batch_repo(tmp_path / "repo")
    batch = killed_mid_batch(repo).name
    with running_server(repo) as server:
        base = f"http://127.0.0.1:{server.port}"
        assert httpx.get(f"{base}/ready?wait=60", timeout=90).status_code == 200
        status = httpx.get(f"{base}/status", timeout=30).json()
        async with mcp_client(server) as client:
            described = answer_text(await client.call_tool("describe", {}))
    assert generation_on_disk(repo) == 0
    assert status["mutation"]["rolled_back_at_start"] == [batch], status["mutation"]
    line = f"1 write batch a crash left unfinished was rolled back at this start ({batch}): none of its files changed"
    assert line in status["storage"]["warnings"], status["storage"]
    assert f"warning: {line}" in described, described
