"""A server killed after a write batch committed, before the call answered, left the files changed and no ledger
row at all (the row is written when the call ends, after the reindex: ~10 s for 150 files; the journal is gone
at commit, so the restart could not tell either; QA44 §3a). The batch now leaves a marker the call's end removes,
and a start records a row for each marker left."""

from __future__ import annotations

import signal
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from tests.builders import call, make_repo, mcp_client, start_server

pytestmark = pytest.mark.anyio

_FILES = {f"pkg/m{n:03}.py": f"def f{n}():\n    return {n}\n" for n in range(150)}


def _rows(repo: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(repo / ".codeplane" / "ledger.db") as conn:
        return list(conn.execute("SELECT op_type, detail FROM operations ORDER BY op_id"))


async def test_a_write_killed_before_its_answer_is_recorded_at_the_restart(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", _FILES)
    server = start_server(repo)
    markers = repo / ".codeplane" / "unanswered"
    killed, done = threading.Event(), threading.Event()

    def kill_once_applied() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not done.is_set():
            if markers.is_dir() and any(markers.glob("*.json")):
                server.proc.send_signal(signal.SIGKILL)
                killed.set()
                return
            time.sleep(0.001)

    edits = [{"path": path, "action": "create", "content": "VALUE = 1\n"} for path in
             (f"pkg/new{n:03}.py" for n in range(150))]
    watcher = threading.Thread(target=kill_once_applied, daemon=True)
    watcher.start()
    try:
        try:
            async with mcp_client(server) as client:
                with pytest.raises(Exception):  # noqa: B017 (the connection dies with the server)
                    await call(client, "write_source", {"edits": edits})
        except Exception:  # noqa: BLE001 (the client's task group may raise as the server dies)
            pass
        watcher.join(5)
    finally:
        done.set()  # the watcher stops looking; a server it did not kill is stopped here, never left running
        server.stop(signal.SIGKILL)
    assert killed.is_set(), "the write answered before it could be killed"
    assert (repo / "pkg/new149.py").exists()  # applied
    assert not any(op == "write_source" for op, _ in _rows(repo))
    restarted = start_server(repo)
    try:
        restarted.wait_serving()
        recorded = [(op, detail) for op, detail in _rows(repo) if op == "write.unanswered"]
    finally:
        restarted.stop()
    assert len(recorded) == 1 and '"tool":"write_source"' in str(recorded[0][1]), recorded
    assert not any(markers.iterdir())
