"""A server whose call never returns in time still stops, and stays findable until it has (QA47 §1).

The drain cuts a call past ``server.shutdown_timeout_sec``, but its worker thread ran on, and the interpreter waits
for it before exiting. ``cpl down`` answered 2004 "retry with --force"; by then the server had removed its pid and
port files and dropped its lock, so ``cpl down --force`` answered "No CodePlane server is running" while the
process lived on, orphaned, a core busy. Now the process ends by its stop deadline (``server/hard_stop.py``) and
keeps its files and lock until it is gone.

The call that outlasts the stop is a real one: a regular expression that backtracks for a tenth of a second on each
of 2,000 lines (under the 1 s budget per line, so it is not refused) keeps a worker thread busy for minutes.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from pathlib import Path

import pytest

from codeplane.core.layout import RepoLayout
from codeplane.server.hard_stop import HARD_EXIT_CODE
from codeplane.server.instance import lock_is_held, read_running, stop_deadline_sec
from tests.builders import ServerHandle, cpl, make_repo, mcp_client, start_server

pytestmark = pytest.mark.anyio

_TIMEOUT = 1.0
#: (a|aa)+$ against 25 a's and a b: ~0.1 s of backtracking per line, at every start position, and no match.
_SLOW_LINES = ("a" * 25 + "b\n") * 2000


def _server(tmp_path: Path) -> ServerHandle:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n", "data/slow.txt": _SLOW_LINES})
    server = start_server(repo, "--set", f"server.shutdown_timeout_sec={_TIMEOUT}")
    server.wait_serving()
    return server


async def _start_stuck_call(server: ServerHandle) -> asyncio.Task[None]:
    async def search() -> None:
        async with mcp_client(server) as client:
            await client.call_tool("search", {"query": "(a|aa)+$", "syntax": "regex"})

    call = asyncio.create_task(search())
    await asyncio.sleep(2.0)
    assert not call.done(), "the slow search answered before the stop: no call outlasts it"
    return call


async def _forget(call: asyncio.Task[None]) -> None:
    call.cancel()
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(call, 10)


async def test_cpl_down_stops_a_server_whose_call_never_returns_and_it_stays_findable_until_gone(
        tmp_path: Path) -> None:
    """``cpl down`` ends the process by its deadline; and what ``cpl down --force`` finds a server by (the lock,
    then the pid) holds at every moment the process lives, so the SIGKILL it recommends always reaches it. (One
    server for both: each stop waits out a deadline.)"""
    server = _server(tmp_path)
    layout = RepoLayout(server.root)
    try:
        call = await _start_stuck_call(server)
        signalled = time.monotonic()
        down = asyncio.create_task(asyncio.to_thread(cpl, "down", str(server.root), cwd=server.root))
        lost_at = None
        while server.proc.poll() is None and time.monotonic() - signalled < 60:
            if not (lock_is_held(layout) and read_running(layout).pid == server.proc.pid):
                await asyncio.sleep(0.2)  # the files go a moment before the process does
                if server.proc.poll() is None:
                    lost_at = time.monotonic() - signalled
                    break
            await asyncio.sleep(0.02)
        stopped = await down
        await _forget(call)
        assert lost_at is None, (f"{lost_at:.1f} s after the signal the server still ran but `cpl down --force` "
                                 "could no longer find it")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert f"Stopped CodePlane server (pid {server.proc.pid})" in stopped.stdout
        assert server.proc.wait(5) == HARD_EXIT_CODE
        # Its deadline, and room for a loaded machine: without the hard stop it runs for minutes.
        assert time.monotonic() - signalled < stop_deadline_sec(_TIMEOUT) + 10, "it did not end by its deadline"
        assert not layout.pid_file.exists() and not layout.port_file.exists()
        assert not lock_is_held(layout)
    finally:
        server.stop(signal.SIGKILL)
