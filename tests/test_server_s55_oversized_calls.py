"""A tool call over the request limit (4 MiB, HTTP 413, typed 1003 before the dispatch) was in no ledger row and
counted toward no budget (QA56 #2): an agent retrying an oversized write never used up ``max_mutations`` and never
showed in the ledger. It is now accounted for as a call with invalid arguments when the headers and the body's
first bytes name its tool and session."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError

from tests.builders import call, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_HUGE = "y" * 4_300_000


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _oversized(client: Client, args: dict[str, Any]) -> str:
    with pytest.raises(MCPError) as refused:
        await client.call_tool("write_source", {**args, "edits": [{"path": "big.txt", "content": _HUGE}]})
    return str(refused.value)


async def test_an_oversized_call_is_a_ledger_row_and_counts_toward_its_budget(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            task = (await call(client, "open_task", {"session_id": "big", "limits": {"max_mutations": 2}}))["task"]
            answers = [await _oversized(client, {"session_id": "big"}) for _ in range(3)]
            state = (await call(client, "get_task", {"session_id": "big"}))["task"]
            # No leading session_id: its session is known only from the body's end (the client's _meta), never read.
            await _oversized(client, {})
        async with Client(server.mcp_url, mode="legacy") as legacy:  # its session is the Mcp-Session-Id header
            legacy_task = (await call(legacy, "get_task"))["task"]["task_id"]
            await _oversized(legacy, {})
    assert all("over 4,194,304 bytes" in a for a in answers), answers
    # Two attempts used the budget, the third was refused by it and closed the task (was: mutations 0/2, OPEN).
    assert (state["state"], state["limit_triggered"], state["counters"]["mutation_count"]) == (
        "CLOSED_FAILED", "mutations", 2)
    with sqlite3.connect(repo / ".codeplane" / "ledger.db") as conn:
        rows = list(conn.execute("SELECT task_id, session_id, error_code FROM operations "
                                 "WHERE op_type = 'write_source' ORDER BY op_id"))
    assert [(t, e) for t, s, e in rows if s == "big"] == [(task["task_id"], 1003)] * 2 + [(task["task_id"], 6001)]
    assert [(t, e) for t, s, e in rows if s != "big"] == [(legacy_task, 1003)]  # none charged to a made-up session
