"""``cpl up --json`` prints ``index_ready`` when the server requires a token too (QA62 #4).

The line comes from a thread that asks ``/ready``; it sent no ``Authorization`` header, got 401 and gave up without
a word, so a supervisor waiting for the line, as the README advises, waited forever."""

from __future__ import annotations

import json
import queue
import threading
from pathlib import Path

import httpx

from tests.builders import make_repo, start_server


def test_index_ready_is_printed_when_the_server_requires_a_token(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {f"pkg/m{n}.py": f"def f{n}(x):\n    return x + {n}\n" for n in range(20)})
    handle = start_server(repo, "--set", "server.require_token=true")
    try:
        stdout = handle.proc.stdout
        assert stdout is not None
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:
            for line in iter(stdout.readline, ""):
                lines.put(line)

        threading.Thread(target=read, daemon=True).start()
        try:
            line = lines.get(timeout=60)
        except queue.Empty:
            line = ""
        assert line and json.loads(line)["event"] == "index_ready", line
        token = (repo / ".codeplane" / "token").read_text().strip()
        assert handle.get("/ready").status_code == 401  # the token is still required
        answer = httpx.get(f"{handle.base_url}/ready", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert answer.status_code == 200
    finally:
        handle.stop()
