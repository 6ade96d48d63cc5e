"""``cpl up --json`` tells a supervisor when the index is up, not only when the socket listens: its ``ready`` line
came before the first index was built, so a script starting an agent on it got answers from a half-built index
(or had to poll ``/ready`` itself). A second line, ``index_ready``, comes once ``/ready`` turns 200."""

from __future__ import annotations

import json
import queue
import threading
from pathlib import Path
from typing import IO

from tests.builders import make_repo, start_server


def _lines(stream: IO[str]) -> queue.Queue[str]:
    """The stream's lines as they come (a thread reads them: what the ready line's read buffered is included)."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in iter(stream.readline, ""):
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


def test_the_json_lines_say_listening_then_index_ready(tmp_path: Path) -> None:
    files = {f"pkg/m{n:03}.py": f"def f{n}(x):\n    return x + {n}\n" for n in range(300)}
    repo = make_repo(tmp_path / "repo", files)
    handle = start_server(repo)
    try:
        assert handle.ready["event"] == "ready"
        assert handle.proc.stdout is not None
        lines = _lines(handle.proc.stdout)
        line = lines.get(timeout=120)
        event = json.loads(line)
        assert set(event) == {"event", "seconds"} and event["event"] == "index_ready", line
        assert event["seconds"] >= 0
        assert handle.get("/ready").status_code == 200  # said once the index answers
        try:
            extra = lines.get(timeout=1.0)
        except queue.Empty:
            extra = ""
        assert extra == "", extra  # one index_ready, nothing more
    finally:
        handle.stop()
