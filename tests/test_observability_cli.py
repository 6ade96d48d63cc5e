"""``cpl status --follow`` (the live picture in a terminal) and ``cpl doctor --logs`` (the bug-report bundle)
against the real server."""

from __future__ import annotations

import json
import signal
import subprocess
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders import CPL, ServerHandle, call, call_error, cpl_env, cpl_json, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {"src/app.py": "def handle_request():\n    return 1\n"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerHandle]:
    with running_server(make_repo(tmp_path / "repo", FILES)) as handle:
        yield handle


async def _calls(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        await call(client, "search", {"query": "handle_request"})
        await call(client, "search", {"query": "handle_request"})
        await call_error(client, "read_source", {"targets": [{"path": "missing.py"}]})


class _Output:
    """A process's stdout read on a thread as it comes, so a test waits for what it needs to have been printed
    (the CLI's imports take a while on a busy machine) instead of a fixed five or six seconds."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.lines.append(line)

    def wait_for(self, marker: str, count: int = 1, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while (sum(marker in line for line in self.lines) < count and self._thread.is_alive()
               and time.monotonic() < deadline):
            time.sleep(0.05)

    def text(self) -> str:
        self._thread.join(30)
        return "".join(self.lines)


def _follow(root: Path, *args: str, seconds: float) -> str:
    """Run ``cpl status --follow`` for ``seconds`` after its first poll was drawn, then Ctrl+C it."""
    # SIGINT as a terminal delivers it: a suite started in the background (``&`` in a script) runs with SIGINT
    # ignored, which every child would inherit, and Python then installs no KeyboardInterrupt.
    errors = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 (read after the process ended)
    proc = subprocess.Popen([*CPL, "status", "--follow", *args], cwd=root, env=cpl_env(), stdout=subprocess.PIPE,
                            stderr=errors, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
    output = _Output(proc)
    # The first line (JSON) or the first picture's last section drawn means the CLI is up and has polled.
    output.wait_for("{" if "--json" in args else "recent operations")
    time.sleep(seconds)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    errors.seek(0)
    assert proc.returncode == 0, errors.read()
    return output.text()


async def test_status_follow_json_streams_the_live_picture(server: ServerHandle) -> None:
    await _calls(server)
    lines = [json.loads(line) for line in _follow(server.root, "--json", seconds=2.5).splitlines() if line]
    assert len(lines) >= 2  # one per second
    last = lines[-1]
    assert last["calls"]["tools"]["search"]["calls"] == 2
    assert last["index"]["watcher"] == "running" and last["server"]["ready"] is True
    assert [op["tool"] for op in last["recent_operations"]][:3] == ["read_source", "search", "search"]
    assert last["recent_operations"][0]["outcome"] == "error"


async def test_status_follow_draws_tools_tasks_and_operations(server: ServerHandle) -> None:
    await _calls(server)
    out = _follow(server.root, seconds=1.5)
    for expected in ("healthy", "calls, last 5 min", "search", "read_source", "open tasks", "recent operations",
                     "error 5004"):
        assert expected in out, (expected, out)


async def test_status_follow_piped_prints_each_picture_as_it_comes(server: ServerHandle) -> None:
    """Without a terminal the live view printed nothing until Ctrl+C, and nothing at all when ended by SIGTERM
    (a log collector, ``timeout``)."""
    await _calls(server)
    proc = subprocess.Popen([*CPL, "status", "--follow"], cwd=server.root, env=cpl_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    output = _Output(proc)
    output.wait_for("recent operations", count=2)
    shown = sum("recent operations" in line for line in output.lines)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    out = output.text()
    assert out.count("recent operations") >= 2, out  # one picture a second, each printed whole
    assert shown >= 2, out  # printed as they came, before the signal


def test_status_follow_without_a_server_says_so(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", FILES)
    line = json.loads(_follow(root, "--json", seconds=0.5).splitlines()[0])
    assert line["running"] is False and "no server" in line["error"]


async def test_doctor_logs_bundles_checks_status_traces_and_logs(server: ServerHandle) -> None:
    await _calls(server)
    report = cpl_json("doctor", "--logs", cwd=server.root)
    bundle = Path(report["bundle"])
    assert bundle.parent == server.root / ".codeplane" / "reports" and bundle.stat().st_mode & 0o077 == 0
    with tarfile.open(bundle) as archive:
        names = set(archive.getnames())
        assert {"versions.json", "checks.json", "server.json", "status.json", "live.json", "traces.json",
                "logs/codeplane.jsonl"} <= names

        def load(name: str) -> object:
            member = archive.extractfile(name)
            assert member is not None
            return json.loads(member.read())

        traces = load("traces.json")
        assert isinstance(traces, dict)
        ops = traces["operations"]
        assert [op["tool"] for op in ops][:3] == ["read_source", "search", "search"]
        assert ops[1]["spans"][0]["name"] == "tools/call search"
        assert "index.search" in {s["name"] for s in ops[1]["spans"]}
        checks = load("checks.json")
        assert isinstance(checks, list) and checks


def test_doctor_logs_without_a_server_still_writes_a_bundle(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", FILES)
    subprocess.run([*CPL, "init", str(root)], env=cpl_env(), capture_output=True, check=False, timeout=120)
    report = cpl_json("doctor", "--logs", cwd=root)
    with tarfile.open(report["bundle"]) as archive:
        member = archive.extractfile("server.json")
        assert member is not None
        assert json.loads(member.read())["running"] is False
        assert "traces.json" not in archive.getnames()
