"""A call whose handler thread never returns is still answered when the server stops (S54 §1).

The drain cut such a call at ``server.shutdown_timeout_sec``, but cutting only cancelled the await on its worker
thread, and an await on ``anyio.to_thread`` ignores a cancel until the thread returns: the call stayed in flight,
the drain's grace ran out, uvicorn closed the connection and the hard stop (``server/hard_stop.py``) ended the
process. The client saw its connection drop instead of the typed, retryable 9003 every other cut call answers.

The stuck call is a real one (as in ``test_server_s53_stuck_stop``): a regular expression that backtracks for a
tenth of a second on each of 2,000 lines keeps a worker thread busy for minutes.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from pathlib import Path

import anyio
import pytest

from codeplane.mutation import PAUSE_ENV
from codeplane.server.drain import Drain
from codeplane.server.hard_stop import HARD_EXIT_CODE
from codeplane.server.instance import stop_deadline_sec
from tests.builders import answer_text, cpl_env, envelope, make_repo, mcp_client, start_server

pytestmark = pytest.mark.anyio

_TIMEOUT = 1.0
_SLOW_LINES = ("a" * 25 + "b\n") * 2000


async def test_a_call_whose_thread_never_returns_answers_9003_before_the_process_ends(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n", "data/slow.txt": _SLOW_LINES})
    server = start_server(repo, "--set", f"server.shutdown_timeout_sec={_TIMEOUT}")
    try:
        server.wait_serving()
        async with mcp_client(server) as client:
            await client.list_tools()
            call = asyncio.create_task(client.call_tool("search", {"query": "(a|aa)+$", "syntax": "regex"}))
            await asyncio.sleep(2.0)
            assert not call.done(), "the slow search answered before the stop: no call outlasts it"
            signalled = time.monotonic()
            server.proc.send_signal(signal.SIGTERM)
            # Was: the connection dropped when the process ended (an SSE/transport error, no answer).
            result = await asyncio.wait_for(call, stop_deadline_sec(_TIMEOUT) + 20)
            answered = time.monotonic() - signalled
        rc = server.proc.wait(30)
    finally:
        server.stop(signal.SIGKILL)
    error = envelope(result)["error"]
    assert result.is_error and error["code"] == 9003 and error["retryable"] is True, error
    assert error["details"] == {"applied": False, "tool": "search"}, error
    assert answered < _TIMEOUT + 5, answered  # at the drain's deadline, not when the process gives up
    assert rc == HARD_EXIT_CODE  # the thread still ran: the hard stop ended the process, after the answer


async def test_a_write_batch_the_stop_gives_up_on_answers_9003_saying_what_it_applied_is_unknown(
        tmp_path: Path) -> None:
    """A write batch is never cut by the drain; a third signal gives the stop up, and the batch's caller still gets
    a typed answer (``applied: unknown``: the next start's journal recovery rolls back what it left half-done)."""
    files = {f"pkg/m{i}.py": f"X{i} = {i}\n" for i in range(3)}
    root = make_repo(tmp_path / "r", files)
    edits = [{"path": p, "action": "update", "old_text": " = ", "new_text": " = 1 + "} for p in sorted(files)]
    # A minute per file: the batch outlasts the stop by far (a worker thread that does not return in time).
    server = start_server(root, "--set", f"server.shutdown_timeout_sec={_TIMEOUT}",
                          env=cpl_env({PAUSE_ENV: "60000"}))
    try:
        server.wait_serving()
        async with mcp_client(server) as client:
            await client.list_tools()
            call = asyncio.create_task(client.call_tool("write_source", {"edits": edits}))
            await asyncio.sleep(1.5)
            assert not call.done(), "the batch answered before the stop"
            for _ in range(3):
                server.proc.send_signal(signal.SIGTERM)
                await asyncio.sleep(0.3)
            # Was: the connection dropped when the process ended, one second after the third signal.
            result = await asyncio.wait_for(call, 30)
        rc = server.proc.wait(30)
    finally:
        server.stop(signal.SIGKILL)
    error = envelope(result)["error"]
    assert result.is_error and error["code"] == 9003 and error["retryable"] is True, error
    assert error["details"] == {"applied": "unknown", "tool": "write_source"}, error
    assert "git_status" in answer_text(result)
    # The process ends either way: by the hard stop (70) while the batch's thread still runs, or, when uvicorn has
    # already shut down and given the signals back their default action, by the last SIGTERM itself (on an idle
    # machine the server is down before the third signal arrives).
    assert rc in (HARD_EXIT_CODE, -signal.SIGTERM)


async def test_the_drain_answers_a_cut_call_at_once_although_its_thread_runs_on() -> None:
    """In process: the drain's cut ends the wait for a call whose work sits in a worker thread."""
    drain = Drain()
    release = threading.Event()

    async def stuck() -> bool:
        return await anyio.to_thread.run_sync(release.wait, 30)

    call = asyncio.create_task(drain.run(stuck, finishes=False))
    await asyncio.sleep(0.2)
    began = time.monotonic()
    drain.expire()
    try:
        assert await asyncio.wait_for(call, 5) is None  # cut: the endpoint answers 9003
        assert time.monotonic() - began < 1.0
    finally:
        release.set()


async def test_a_write_its_client_cancelled_still_holds_the_stop_until_it_ends() -> None:
    """The write's work runs in a task of its own, which the request no longer waits for once its client cancelled
    it: the stop (and the subsystems' shutdown after it) must still wait for the batch being applied."""
    drain = Drain()
    release = threading.Event()

    async def batch() -> bool:
        return await anyio.to_thread.run_sync(release.wait, 30)

    scope = anyio.CancelScope()

    async def cancellable() -> None:
        with scope:  # as the SDK runs a request: a client's cancel cancels this scope
            await drain.run(batch, finishes=True)

    call = asyncio.create_task(cancellable())
    await asyncio.sleep(0.2)
    scope.cancel()
    await asyncio.wait_for(call, 5)  # the request is over: its client went
    stopping = asyncio.create_task(drain.drain(0.1))
    await asyncio.sleep(1.0)
    assert drain.writes_in_flight() and not stopping.done(), "the stop went ahead under a write still running"
    release.set()
    await asyncio.wait_for(stopping, 5)
    assert not drain.writes_in_flight()
