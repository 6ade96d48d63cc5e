"""A stop signal while a client holds ``/ready?wait=`` during the first build: uvicorn waits for the requests in
flight before the server's own shutdown, and ``/ready`` answered only once the index was ready, so the build went
on to publish instead of being rolled back, and the stop took as long as the build (found through ``cpl up
--json``'s own ``index_ready`` thread, s51). The signal now ends every wait for the boot at once."""

from __future__ import annotations

import signal
import sqlite3
import threading
import time
from pathlib import Path

import httpx

from tests.builders import make_repo, start_server


def test_a_held_ready_request_does_not_keep_a_stop_waiting_for_the_first_build(tmp_path: Path) -> None:
    body = "".join(f"def function_{n}(value):\n    return value + {n}\n\n\n" for n in range(40))
    files = {f"pkg{d:02}/module_{n:03}.py": body for d in range(30) for n in range(100)}
    repo = make_repo(tmp_path / "repo", files, commit=False)
    server = start_server(repo)
    answers: list[tuple[int, str]] = []
    try:
        deadline = time.monotonic() + 30
        while "building the index" not in str(server.get("/status").json().get("ready_reason")):
            assert time.monotonic() < deadline, "the server never reached its first build"
            time.sleep(0.02)
        def hold() -> None:
            answer = httpx.get(f"{server.base_url}/ready?wait=120", timeout=180)
            answers.append((answer.status_code, str(answer.json().get("reason"))))

        holder = threading.Thread(target=hold, daemon=True)
        holder.start()
        time.sleep(0.3)
        assert not server.get("/ready").is_success, "the first build of 3,000 files ended before the signal"
        began = time.monotonic()
        server.stop(signal.SIGINT, timeout=60)
        stopped_in = time.monotonic() - began
        holder.join(30)
    finally:
        server.stop(signal.SIGKILL)
    assert server.proc.returncode == 0
    # Told "not ready" at once, not held until the build was done, and why: it was stopping, not starting (s52).
    assert [(code, reason.split(":")[0]) for code, reason in answers] == [(503, "stopping")], answers
    assert stopped_in < 15, f"the stop waited {stopped_in:.1f} s"
    with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:  # rolled back, not finished and published
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 0
