"""Foundation targets (issue 2): `cpl up` to accepting connections, /health p99, `describe` p50 over MCP.

"Accepting connections" is the first ``/health`` answer; the MCP stack boots behind the listening socket,
so the time to the first answered MCP tool call is reported too (its p99 column is the max). /health is
measured once the stack serves. Baselines measured in the same run: spawning `git rev-parse` (what an
agent would shell out for a repo summary) for describe, and a bare TCP connect for /health.

    uv run python benchmarks/foundation.py
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import p50, pct, table, timed

CPL = [sys.executable, "-m", "codeplane.cli"]


def make_repo(root: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)


def start(root: Path) -> tuple[subprocess.Popen[str], int, float, float]:
    """Start ``cpl up``; ms to the first /health answer ("accepting connections") and to the first
    answered MCP tool call (the stack boots behind the listening socket, so this is the later one)."""
    began = time.perf_counter()
    proc = subprocess.Popen([*CPL, "up", str(root), "--port", "0", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if line.startswith("{") and json.loads(line).get("event") == "ready":
            port = int(json.loads(line)["port"])
            break
        if not line and proc.poll() is not None:
            raise RuntimeError("server died")
    # "Accepting connections" = the first /health answer.
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.001)
    accepting = (time.perf_counter() - began) * 1000.0
    asyncio.run(first_describe(port))
    return proc, port, accepting, (time.perf_counter() - began) * 1000.0


async def first_describe(port: int) -> None:
    async with Client(f"http://127.0.0.1:{port}/mcp") as client:
        assert not (await client.call_tool("describe", {})).is_error


async def describe_times(port: int, repeat: int) -> list[float]:
    async with Client(f"http://127.0.0.1:{port}/mcp") as client:
        for _ in range(10):
            await client.call_tool("describe", {})
        out = []
        for _ in range(repeat):
            began = time.perf_counter()
            res = await client.call_tool("describe", {})
            out.append((time.perf_counter() - began) * 1000.0)
            assert not res.is_error
        return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        make_repo(root)
        startups, first_tool = [], []
        for _ in range(7):
            proc, port, ms, tool_ms = start(root)
            startups.append(ms)
            first_tool.append(tool_ms)
            proc.terminate()
            proc.wait()
        proc, port, _, _ = start(root)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
                assert http.get("/health").json()["phase"] == "serving"
                for _ in range(50):
                    http.get("/health")
                health = timed(lambda: http.get("/health"), 1000)

            def tcp() -> None:
                with socket.create_connection(("127.0.0.1", port)):
                    pass

            connect = timed(tcp, 200)
            describe = asyncio.run(describe_times(port, 300))
            git = timed(lambda: subprocess.run(["git", "-C", str(root), "rev-parse", "--abbrev-ref", "HEAD"],
                                               capture_output=True, check=False), 50)
        finally:
            proc.terminate()
            proc.wait()
    table("Foundation (ms)", ["measure", "p50", "p99", "target", "baseline", "baseline p50", "ratio"], [
        ["cpl up → accepting connections", p50(startups), max(startups), "≤ 1500", "-", "-", "-"],
        ["cpl up → first MCP tool answer", p50(first_tool), max(first_tool), "-", "-", "-", "-"],
        ["/health (keep-alive)", p50(health), pct(health, 0.99), "p99 ≤ 10", "TCP connect",
         p50(connect), p50(health) / p50(connect)],
        ["describe over MCP", p50(describe), pct(describe, 0.99), "p50 ≤ 15", "git rev-parse subprocess",
         p50(git), p50(describe) / p50(git)],
    ])


if __name__ == "__main__":
    main()
