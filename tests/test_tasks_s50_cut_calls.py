"""A call the stop cuts short still gets its ledger row and its count (QA36 §3).

The drain cancels a call past ``server.shutdown_timeout_sec``: the client got 9003, but the call left no
``operations`` row, and the task was stored with ``test_run_count 0`` although the run was admitted and counted.
Real server, official client, SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from codeplane.core.layout import RepoLayout
from tests.builders import call, envelope, make_repo, mcp_client, start_server

pytestmark = pytest.mark.anyio


async def test_a_call_cut_short_by_the_stop_is_one_failed_row_and_is_counted(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    slow = (f"import pathlib, time\n\n\ndef test_slow():\n    pathlib.Path({str(marker)!r}).write_text('running')\n"
            "    time.sleep(60)\n")
    root = make_repo(tmp_path / "r", {"tests/test_slow.py": slow, "a.py": "A = 1\n"})
    handle = start_server(root, "--set", "server.shutdown_timeout_sec=1")
    s = {"session_id": "s50-stopper"}
    try:
        handle.wait_serving()
        async with mcp_client(handle) as client:
            opened = await call(client, "open_task", {**s, "limits": {"max_test_runs": 5}})
            running = asyncio.create_task(client.call_tool(
                "run_test_targets", {**s, "targets": ["tests/test_slow.py"], "wait_sec": 120}))
            deadline = time.monotonic() + 60
            while not marker.exists():
                assert time.monotonic() < deadline, "the test run never started"
                await asyncio.sleep(0.02)
            handle.proc.send_signal(signal.SIGTERM)
            result = await running
        handle.proc.wait(timeout=30)
    finally:
        handle.stop()
    assert result.is_error and envelope(result)["error"]["code"] == 9003
    task_id = opened["task"]["task_id"]
    conn = sqlite3.connect(RepoLayout(root).ledger_db)
    try:
        rows = conn.execute("SELECT op_type, success, detail FROM operations WHERE task_id = ? ORDER BY op_id",
                            (task_id,)).fetchall()
        state, counters = conn.execute("SELECT state, test_run_count FROM tasks WHERE task_id = ?",
                                       (task_id,)).fetchone()
    finally:
        conn.close()
    cut = [(success, json.loads(detail)) for op_type, success, detail in rows if op_type == "run_test_targets"]
    assert cut == [(0, {"args": "targets=1", "error": "CANCELLED"})]  # was: no row at all
    assert (state, counters) == ("CLOSED_INTERRUPTED", 1)  # was 0: the ledger's copy was interrupted
