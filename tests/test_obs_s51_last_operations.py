"""The last operations ``/status`` and ``cpl status`` list survive a restart: they are the ledger's last rows
(qa39 section 3), the CLOSED_INTERRUPTED rows a restart appends included."""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.builders import ServerHandle, call, call_error, cpl_json, make_repo, mcp_client, running_server, start_server

pytestmark = pytest.mark.anyio

FILES = {"src/app.py": "def handle_request():\n    return 1\n"}
BRIEF = 5


def _ledger_tail(root: Path, count: int) -> list[tuple[int, str]]:
    """(op_id, op_type) of the ledger's last ``count`` rows, oldest first (straight from the file)."""
    conn = sqlite3.connect(f"{(root / '.codeplane' / 'ledger.db').as_uri()}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT op_id, op_type FROM operations ORDER BY op_id DESC LIMIT ?", (count,)).fetchall()
    finally:
        conn.close()
    return [(int(r[0]), str(r[1])) for r in reversed(rows)]


def _recent(server: ServerHandle) -> list[dict[str, Any]]:
    server.wait_serving()  # the boot status has no tasks section yet
    ops: list[dict[str, Any]] = server.get("/status").json()["tasks"]["recent_operations"]
    return ops


def _listed(ops: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(int(op["op_id"]), str(op["op_type"])) for op in ops]


async def test_a_restart_after_a_kill_lists_the_ledgers_last_rows_with_the_interruptions(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    first = start_server(repo)
    try:
        async with mcp_client(first) as client:
            await call(client, "search", {"query": "handle_request"})
            await call_error(client, "read_source", {"targets": [{"path": "missing.py"}]})
        before = _recent(first)
        assert [op["op_type"] for op in before][-2:] == ["search", "read_source"]
    finally:
        first.stop(signal.SIGKILL)  # the tasks stay OPEN in the ledger: the next start interrupts them

    with running_server(repo) as second:
        recent = _recent(second)
        tasks = second.get("/status").json()["tasks"]
        tail = _ledger_tail(repo, BRIEF)
        assert _listed(recent) == tail, recent
        assert recent[-1]["op_type"] == "task.interrupted" and recent[-1]["op_id"] == tasks["ledger"]["last_op_id"]
        # The calls before the crash are still there, with the same facts as the live server listed them.
        failed = next(op for op in recent if op["op_type"] == "read_source")
        assert failed == next(op for op in before if op["op_type"] == "read_source")
        assert failed["success"] is False and isinstance(failed["error_code"], int)
        # Lean rows: nothing null, no unset flag.
        assert all(v is not None and v is not False for op in recent for k, v in op.items() if k != "success")
        # `cpl status` asks the running server and shows the same rows.
        shown = cpl_json("status", cwd=repo)["tasks"]["recent_operations"]
        assert _listed(shown) == tail


async def test_the_last_operations_are_the_same_before_and_after_a_clean_restart(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo) as first:
        async with mcp_client(first) as client:
            for _ in range(4):
                await call(client, "search", {"query": "handle_request"})
    # Stopped: `cpl status` reads the ledger itself (the stop appended the interruption of the open task).
    offline = cpl_json("status", cwd=repo)["tasks"]["recent_operations"]
    assert offline[-1]["op_type"] == "task.interrupted" and len(offline) == BRIEF
    with running_server(repo) as second:
        online = _recent(second)
        assert online == offline
        # A call after the restart joins them, newest last, still bounded.
        async with mcp_client(second) as client:
            await call(client, "search", {"query": "handle_request"})
        later = _recent(second)
        assert later[:-1] == offline[1:] and later[-1]["op_type"] == "search" and len(later) == BRIEF
