"""What a ``kill -9`` leaves in the ledger (QA56 #3, #4, #5).

#4: a task past its ``max_duration_sec`` when the server died was listed OPEN by offline ``cpl status`` and closed
CLOSED_INTERRUPTED "server restart" at the next start; it fails (CLOSED_FAILED, ``duration``) as it does whoever
reaches it. #3: a write applied but never answered was recorded ``write.unanswered`` with no task or session, after
its task's interruption, and an implicit task that held only that write was in no ``tasks`` row at all; a task's
stored ``mutation_count`` left such a write out. #5: the ledger's summary of a move marked its destination ``~``.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from codeplane.core import unanswered
from codeplane.core.logging import bind_correlation
from codeplane.tasks import TaskState
from tests.builders import call, cpl_json, make_repo, mcp_client, running_server, start_server
from tests.task_calls import make_tracker, run_call

_BATCH = 150  # files in the killed write: its reindex keeps the answer back well after the commit
_LATE_SEC = 3


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _query(repo: Path, sql: str) -> list[sqlite3.Row]:
    conn = sqlite3.connect(repo / ".codeplane" / "ledger.db")
    conn.row_factory = sqlite3.Row
    try:
        return list(conn.execute(sql))
    finally:
        conn.close()


@pytest.mark.anyio
async def test_a_kill_leaves_each_task_its_outcome_and_an_applied_write_its_task(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {f"pkg/m{n:03}.py": f"def f{n}():\n    return {n}\n" for n in range(_BATCH)})
    server = start_server(repo)
    markers = repo / ".codeplane" / "unanswered"
    killed, done = threading.Event(), threading.Event()

    def kill_once_applied() -> None:
        give_up = time.monotonic() + 120
        while time.monotonic() < give_up and not done.is_set():
            if markers.is_dir() and any(markers.glob("*.json")):  # committed, not answered
                server.proc.send_signal(signal.SIGKILL)
                killed.set()
                return
            time.sleep(0.001)

    edits = [{"path": f"fresh/f{n:03}.py", "action": "create", "content": f"V = {n}\n"} for n in range(_BATCH)]
    watcher = threading.Thread(target=kill_once_applied, daemon=True)
    try:
        async with mcp_client(server) as client:
            # Its deadline comes after the kill (the write commits within a second or so) and before the next start:
            # a running server that reaches it (a call, /status, the metrics) closes it itself.
            late = await call(client, "open_task", {"session_id": "late", "limits": {"max_duration_sec": _LATE_SEC}})
            late_deadline = time.monotonic() + _LATE_SEC + 0.1
            watcher.start()
            with pytest.raises(Exception):  # noqa: B017 (the connection dies with the server)
                # The session's first call: the write is all its implicit task ever did.
                await client.call_tool("write_source", {"session_id": "fresh", "edits": edits})
    except Exception:  # noqa: BLE001 (the client's task group may raise as the server dies)
        pass
    finally:
        done.set()  # a server the watcher did not kill is stopped here, never left running
        if watcher.is_alive():
            watcher.join(5)
        server.stop(signal.SIGKILL)
    assert killed.is_set(), "the write answered before it could be killed"
    assert (repo / f"fresh/f{_BATCH - 1:03}.py").exists()  # applied
    late_id = late["task"]["task_id"]
    assert [r["state"] for r in _query(repo, f"SELECT state FROM tasks WHERE task_id = '{late_id}'")] == ["OPEN"]
    # Past its deadline now, and no call reached it since it opened: what reads the ledger next decides.
    await anyio.sleep(max(0.0, late_deadline - time.monotonic()))

    # Offline: the expired task is not open (was: listed OPEN with its budget line).
    offline = cpl_json("status", cwd=repo)["tasks"]
    assert [t["session_id"] for t in offline["open_tasks"]] == ["fresh"], offline
    assert offline["open_task_count"] == 1
    [failed] = offline["failed_tasks"]
    assert (failed["task_id"], failed["state"], failed["limit_triggered"]) == (late_id, "CLOSED_FAILED", "duration")

    restarted = start_server(repo)
    try:
        restarted.wait_serving()
        tasks = {r["session_id"]: r for r in _query(repo, "SELECT * FROM tasks")}
        ops = _query(repo, "SELECT op_id, op_type, task_id, session_id FROM operations ORDER BY op_id")
    finally:
        restarted.stop()

    # #4: failed by its deadline, never interrupted (was: CLOSED_INTERRUPTED 'server restart').
    assert (tasks["late"]["state"], tasks["late"]["limit_triggered"]) == ("CLOSED_FAILED", "duration")
    assert [r["op_type"] for r in ops if r["task_id"] == late_id] == ["task.failed"]

    # #3: the implicit task is stored, counts its write, and its row comes before the restart closed it.
    fresh = tasks["fresh"]  # was: no row; the task existed only in the killed server's memory
    assert (fresh["implicit"], fresh["mutation_count"], fresh["state"]) == (1, 1, "CLOSED_INTERRUPTED")
    assert [(r["op_type"], r["session_id"]) for r in ops if r["task_id"] == fresh["task_id"]] == [
        ("write.unanswered", "fresh"), ("task.interrupted", "fresh")]
    assert not any(markers.iterdir())


def test_a_task_counts_a_write_from_its_admission(tmp_path: Path) -> None:
    """An explicit task stored before (``open_task``, a write) counts the write a kill cut short, and its marker
    names it (the server-level test above covers an implicit task)."""
    tracker = make_tracker(tmp_path)
    try:
        task_id = tracker.open_task("s", {"max_mutations": 5}).task.task_id
        seen: list[tuple[int, dict[str, Any]]] = []

        def applied(request_id: str) -> None:  # what the commit does, then the ledger as a kill would leave it
            with bind_correlation(request_id=request_id, tool="write_source"):
                unanswered.note(tmp_path, "b1", ["x.py"])
            task = tracker.ledger.get_task(task_id)
            assert task is not None and task.state is TaskState.OPEN
            seen.append((task.mutation_count, json.loads((tmp_path / "unanswered" / "b1.json").read_text())))

        run_call(tracker, "write_source", "mutation", session="s")
        run_call(tracker, "write_source", "mutation", session="s", during=applied)
    finally:
        tracker.stop()
    [(count, marker)] = seen
    assert count == 2  # was 1: the stored count lagged until the call's own row
    assert (marker["session_id"], marker["task_id"]) == ("s", task_id)


@pytest.mark.anyio
async def test_the_ledger_summary_marks_a_moved_files_destination_created(tmp_path: Path) -> None:
    # m/b.txt's deletion fills the diff excerpt: m/z.txt's move comes after its bound, its destination all the same.
    repo = make_repo(tmp_path / "repo", {"m/a.txt": "a\n", "m/b.txt": "b\n" * 3000, "m/z.txt": "z\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            await call(client, "write_source", {"edits": [{"path": "m/a.txt", "action": "move", "to": "m/c.txt"},
                                                          {"path": "m/b.txt", "action": "delete"},
                                                          {"path": "m/z.txt", "action": "move", "to": "m/zz.txt"}]})
    [row] = _query(repo, "SELECT short_diff FROM operations WHERE op_type = 'write_source'")
    assert sorted(row["short_diff"].split("\n")) == ["+ m/c.txt", "+ m/zz.txt", "- m/a.txt", "- m/b.txt",
                                                     "- m/z.txt"], row  # was: '~ m/c.txt'
