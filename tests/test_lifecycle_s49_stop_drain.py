"""A stop answers the calls in flight (QA32 §1, ``server/drain.py``).

SIGTERM ended every SSE stream within half a second, whatever ``server.shutdown_timeout_sec`` said: a test run in
flight answered "SSE stream ended without a response", and a write batch that was then applied in full told its
client nothing (a retry applied it twice). Real server, official client, both protocol eras.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from codeplane.mutation import PAUSE_ENV
from tests.builders import ServerHandle, answer_text, cpl_env, envelope, make_repo, mcp_client, start_server

pytestmark = pytest.mark.anyio


def _slow_test(marker: Path, seconds: float) -> str:
    return (f"import pathlib, time\n\n\ndef test_slow():\n    pathlib.Path({str(marker)!r}).write_text('running')\n"
            f"    time.sleep({seconds})\n")


async def _wait_for(ready: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"{what} never happened"
        await asyncio.sleep(0.02)


@asynccontextmanager
async def _session(handle: ServerHandle) -> AsyncIterator[ClientSession]:
    """A 2025-11-25 session (initialize, SSE answers): the client of the QA report."""
    async with streamable_http_client(handle.mcp_url) as (read, write, *_), ClientSession(read, write) as session:
        await session.initialize()
        # The client checks an answer against the tool's output schema, listing the tools first if it has not: a
        # listing sent after the answer races with the server's exit (the drain waits for it only briefly).
        await session.list_tools()
        yield session


def _exited(handle: ServerHandle, timeout: float) -> float:
    began = time.monotonic()
    handle.proc.wait(timeout=timeout)
    return time.monotonic() - began


async def test_a_test_run_in_flight_across_sigterm_gets_its_answer_and_a_new_call_gets_9003(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    root = make_repo(tmp_path / "r", {"tests/test_slow.py": _slow_test(marker, 4), "a.py": "A = 1\n"})
    handle = start_server(root, "--set", "server.shutdown_timeout_sec=30")
    try:
        handle.wait_serving()
        async with _session(handle) as session:
            call = asyncio.create_task(session.call_tool(
                "run_test_targets", {"targets": ["tests/test_slow.py"], "wait_sec": 60}))
            await _wait_for(marker.exists, "the test run starting")
            handle.proc.send_signal(signal.SIGTERM)
            await asyncio.sleep(0.5)  # the drain begins at the server's next tick
            # A new call is refused, typed and retryable; the call in flight is not disturbed.
            async with mcp_client(handle) as other:
                with pytest.raises(MCPError) as refused:
                    await other.call_tool("describe", {})
            result = await call
        left = _exited(handle, 30)
    finally:
        handle.stop()
    # Was: MCPError "SSE stream ended without a response", 0.5 s after the signal.
    assert not result.is_error, answer_text(result)
    assert "1 passed" in answer_text(result), answer_text(result)
    data = refused.value.error.data
    assert isinstance(data, dict) and data["code"] == 9003 and data["retryable"] is True, refused.value.error
    assert "stopping" in refused.value.error.message
    assert left < 10 and handle.proc.returncode == 0


@pytest.mark.parametrize(("timeout", "signals"), [(1, 1), (30, 2)], ids=["timeout", "second-signal"])
async def test_a_call_that_outlasts_the_stop_answers_9003_and_the_server_exits(tmp_path: Path, timeout: int,
                                                                              signals: int) -> None:
    marker = tmp_path / "started"
    root = make_repo(tmp_path / "r", {"tests/test_slow.py": _slow_test(marker, 60), "a.py": "A = 1\n"})
    handle = start_server(root, "--set", f"server.shutdown_timeout_sec={timeout}")
    try:
        handle.wait_serving()
        async with mcp_client(handle) as client:
            await client.list_tools()
            call = asyncio.create_task(client.call_tool(
                "run_test_targets", {"targets": ["tests/test_slow.py"], "wait_sec": 120}))
            await _wait_for(marker.exists, "the test run starting")
            signalled = time.monotonic()
            handle.proc.send_signal(signal.SIGTERM)
            if signals == 2:  # a second signal cuts the drain short: the call still answers, on its stream
                await asyncio.sleep(1)
                handle.proc.send_signal(signal.SIGTERM)
            result = await call
            answered = time.monotonic() - signalled
        _exited(handle, 30)
        stopped = time.monotonic() - signalled
    finally:
        handle.stop()
    error = envelope(result)["error"]
    assert result.is_error and error["code"] == 9003 and error["retryable"] is True, error
    assert error["details"] == {"applied": False, "tool": "run_test_targets"}, error
    assert 0.9 < answered < 6, answered  # the timeout (or the second signal) was waited for, and not much more
    assert stopped < 10 and handle.proc.returncode == 0, stopped


@pytest.mark.parametrize("era", ["stateless", "session"])
async def test_a_write_batch_across_sigterm_answers_applied_with_its_delta(tmp_path: Path, era: str) -> None:
    files = {f"pkg/m{i:02d}.py": f"X{i} = {i}\n" for i in range(12)}
    root = make_repo(tmp_path / "r", files)
    edits = [{"path": p, "action": "update", "old_text": " = ", "new_text": " = 1 + "} for p in sorted(files)]
    # 150 ms per file stretches the batch to ~2 s, past the 1 s stop timeout: a batch is never cut halfway.
    handle = start_server(root, "--set", "server.shutdown_timeout_sec=1", env=cpl_env({PAUSE_ENV: "150"}))
    first = root / "pkg/m00.py"
    try:
        handle.wait_serving()
        client_cm = mcp_client(handle) if era == "stateless" else _session(handle)
        async with client_cm as client:
            await client.list_tools()
            call = asyncio.create_task(client.call_tool("write_source", {"edits": edits}))
            await _wait_for(lambda: first.read_text() != files["pkg/m00.py"], "the batch replacing its first file")
            handle.proc.send_signal(signal.SIGTERM)
            result = await call
        _exited(handle, 30)
    finally:
        handle.stop()
    # Was (session era): "SSE stream ended without a response", with every file written.
    assert not result.is_error, answer_text(result)
    text = answer_text(result)
    assert all(p in text for p in files), text  # the delta names every file it changed
    assert [(root / p).read_text() for p in sorted(files)] == [f"X{i} = 1 + {i}\n" for i in range(12)]
    assert handle.proc.returncode == 0
