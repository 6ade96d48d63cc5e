"""Stopping without dropping answers: what happens between a stop signal and the server's exit (spec §4.2).

uvicorn's own graceful shutdown could not do this. Its ``should_exit`` is also the signal on which the SSE
library the MCP SDK streams answers with (``sse_starlette``) ends every open stream, within half a second: a call
still running lost its answer ("SSE stream ended without a response") although ``server.shutdown_timeout_sec``
had not passed, and a write batch running in a worker thread was still applied. So ``serve.py`` holds uvicorn's
``should_exit`` back while :class:`Drain` runs:

1. From the signal on, a new ``tools/call`` on ``/mcp`` is refused with 9003 SHUTTING_DOWN (retryable, HTTP 503)
   by :class:`DrainGate`; other messages (``tools/list``, a client cancelling its call) are still served.
2. Calls in flight run on and are answered as usual, for up to ``server.shutdown_timeout_sec``.
3. Past that, a call that can be stopped is cut short and answers 9003 saying nothing was applied. A call that
   changes the repository (a ``mutation`` kind, or a tool whose kind depends on its arguments) is never cut: a
   batch is all-or-nothing and runs in a worker thread that cancelling would not stop, so it finishes and
   answers what it applied, however long that takes.
4. Once no ``/mcp`` POST is still writing its answer (and the client's next message, if any, is answered),
   uvicorn's own shutdown runs (streams close, lifespan stops the subsystems).

A call's work runs in a task of its own, which the call awaits through a shield: cutting a call stops the *wait*,
so it answers 9003 at once even when its handler sits in a worker thread that never returns (an await on
``anyio.to_thread`` ignores a cancel until the thread returns; the call used to stay in flight until the hard stop
ended the process and the client saw its connection drop). When the stop gives up altogether (a third signal: the
hard stop, server/hard_stop.py), :meth:`Drain.give_up_now` cuts the write batches too, which answer 9003 saying it is
unknown what they applied, before the process ends.

Invariant: no answer is dropped while the drain runs; every request in flight at the signal gets its own answer
or a 9003 on its own stream, also when the stop gives up. Everything here runs on the event loop but
:meth:`Drain.give_up`.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from codeplane.core.errors import CodePlaneError, ErrorCode

T = TypeVar("T")

#: JSON-RPC's implementation-defined server error the SDK also answers a request it had to abandon with.
_CONNECTION_CLOSED = -32000
#: How long answers cut short at the deadline get to reach their streams before uvicorn closes them.
_ANSWER_GRACE_SEC = 2.0
_POLL_SEC = 0.02
#: How long the drain waits after an answer for what the client sends next: the official client follows a call's
#: answer with a ``tools/list`` (to check the answer against the tool's output schema) when it has not listed the
#: tools yet, and a server gone by then made it fail a call that had been answered.
_QUIET_SEC = 0.5
#: A body read only to tell a call from other messages while stopping (see :func:`_read_body`).
_PEEK_MAX = 4 * 1024 * 1024
_OVERSIZED = b'{"method": "tools/call", "id": null}'


def shutting_down_error(*, tool: str | None = None, cut_short: bool = False,
                        write: bool = False) -> CodePlaneError:
    """The 9003 a stopping server answers: a call refused, one that did not finish in time (``cut_short``), or a
    write batch the stop gave up on (``write``: what it applied is not known; the next start's journal recovery
    rolls back a batch left half-done)."""
    details: dict[str, Any] = {"applied": "unknown" if write else False}
    if write:
        message = ("the server was forced to stop before this write batch finished; what it applied is unknown (the "
                   "next start rolls back a half-done batch): check git_status before calling again")
    elif cut_short:
        message = "the server stopped before this call finished; nothing was applied; call again once it is back"
    else:
        message = "the server is stopping and takes no new calls; call again once it is back (cpl up)"
    if tool is not None:
        details["tool"] = tool
    return CodePlaneError(ErrorCode.SHUTTING_DOWN, message, details=details)


#: How long a cut call's work gets to take its cancel (and record itself CANCELLED) before its 9003 goes out anyway:
#: work that awaits a worker thread does not take it until the thread returns.
_CUT_WAIT_SEC = 0.1
#: How long the hard stop waits for the answers of the calls it gave up on to be written (see :meth:`Drain.give_up`).
GIVE_UP_ANSWER_SEC = 1.0


class Drain:
    """The stop's state: whether it began, the calls in flight, and the deadline's cut (see the module docstring)."""

    def __init__(self) -> None:
        self.stopping = False
        self._posts = 0
        self._finishing = 0
        self._cuttable: set[anyio.CancelScope] = set()
        self._writes: set[anyio.CancelScope] = set()
        self._expired = False
        self._gave_up = False
        self._answered = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None

    async def run(self, work: Callable[[], Awaitable[T]], *, finishes: bool) -> T | None:
        """Run one tool call; ``None`` when the drain cut it short. A call that ``finishes`` is only cut when the
        stop gives up (:meth:`give_up`)."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        # The work's own task, awaited through a shield: a cut ends the wait even when the work cannot take a cancel.
        task = asyncio.ensure_future(work())
        if finishes:
            # Counted until the work itself ends, not the wait: a batch a client cancelled still runs to its end,
            # and the stop waits for it.
            self._finishing += 1
            task.add_done_callback(self._write_ended)
        scopes = self._writes if finishes else self._cuttable
        # A cancel scope, not a task group: this runs on every call, and a scope costs next to nothing.
        with anyio.CancelScope() as scope:
            if self._gave_up or (self._expired and not finishes):
                scope.cancel()
            scopes.add(scope)
            try:
                return await asyncio.shield(task)
            except BaseException:
                # Our cut, or a cancel from outside (the client's). A read's work is cancelled too; a write batch's
                # never is: it runs to its end and is recorded as what it did, its answer going nowhere.
                if not finishes:
                    task.cancel()
                raise
            finally:
                scopes.discard(scope)
        # Only reached when the scope absorbed the drain's cancel. Work that takes it ends (and is recorded) first.
        await asyncio.wait({task}, timeout=_CUT_WAIT_SEC)
        return None

    def _write_ended(self, _task: asyncio.Future[Any]) -> None:
        self._finishing -= 1

    def writes_in_flight(self) -> bool:
        """Whether a call that is never cut (a write batch) still runs. Read from other threads too."""
        return self._finishing > 0

    def expire(self) -> None:
        """The deadline passed (or a second signal came): cut every call that may be cut."""
        self._expired = True
        for scope in list(self._cuttable):
            scope.cancel()

    def give_up_now(self) -> None:
        """The stop gives up (a third signal; the process ends in a moment): cut every call in flight, write batches
        too. On the loop's thread."""
        self._gave_up = True
        self.expire()
        for scope in list(self._writes):
            scope.cancel()

    def give_up(self, timeout: float = GIVE_UP_ANSWER_SEC) -> None:
        """:meth:`give_up_now` from another thread (the hard stop's, just before the process ends), then wait up to
        ``timeout`` seconds for the answers to be written. Best effort: the loop may be gone, and its connections
        with it."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        done = threading.Event()

        def cut_all() -> None:
            self.give_up_now()
            done.set()

        try:
            loop.call_soon_threadsafe(cut_all)
        except RuntimeError:  # the loop closed meanwhile
            return
        deadline = time.monotonic() + timeout
        if not done.wait(timeout):
            return
        while self._posts and time.monotonic() < deadline:
            time.sleep(_POLL_SEC)

    async def drain(self, timeout: float) -> None:
        """Wait for the calls in flight: all of them up to ``timeout`` seconds (or until :meth:`expire`), then only
        those that finish."""
        deadline = time.monotonic() + timeout
        while (time.monotonic() < deadline and not self._expired
               and (self._posts or self._finishing or time.monotonic() - self._answered < _QUIET_SEC)):
            await asyncio.sleep(_POLL_SEC)
        if not self._posts and not self._finishing:
            return
        self.expire()
        # A write batch finishes whatever the deadline, also one whose client cancelled it and went (its work runs
        # on in its own task); the answers cut short get a bounded moment to go out.
        grace = time.monotonic() + _ANSWER_GRACE_SEC
        while self._finishing or (self._posts and time.monotonic() < grace):
            await asyncio.sleep(_POLL_SEC)


class DrainGate:
    """ASGI wrapper counting ``/mcp`` POSTs in flight and refusing new requests once the stop began."""

    def __init__(self, app: ASGIApp, drain: Drain, *, path: str = "/mcp") -> None:
        self._app = app
        self._drain = drain
        self._path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self._path or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        if self._drain.stopping:
            body = await _read_body(receive)
            if body is None:  # the client went away: nothing to answer
                return
            call_id = _call_id(body)
            if call_id is not False:
                await _refuse(send, call_id)
                return
            receive = replay_body(body, receive)
        self._drain._posts += 1
        try:
            await self._app(scope, receive, send)
        finally:
            self._drain._posts -= 1
            if self._drain.stopping:
                self._drain._answered = time.monotonic()


async def _read_body(receive: Receive) -> bytes | None:
    """The request's body; ``None`` when the client went away. Past :data:`_PEEK_MAX` the rest is drained unread
    and the body stands for a call with no id (refused): nothing that large is a cancel or a listing."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size <= _PEEK_MAX:
            chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks) if size <= _PEEK_MAX else _OVERSIZED


def _call_id(body: bytes) -> Any:
    """The id of the ``tools/call`` request in ``body``, or ``False`` when it holds none. Only new work is
    refused: a client validates the answer of its call in flight with a ``tools/list`` after it (the official
    client does), and may cancel that call with a notification."""
    try:
        message = json.loads(body)
    except ValueError:
        return False
    if isinstance(message, dict) and message.get("method") == "tools/call" and "id" in message:
        return message["id"]
    return False


async def _refuse(send: Send, request_id: Any) -> None:
    # Imported here: serve.py, which imports this module, must stay cheap to import (answers.py pulls in pydantic).
    from codeplane.server.answers import error_text

    payload = shutting_down_error().to_payload()
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {
        "code": _CONNECTION_CLOSED, "message": error_text(payload), "data": payload}}).encode()
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"5"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def replay_body(body: bytes, receive: Receive) -> Receive:
    """``receive`` with a request body already read handed out first (the app downstream reads it again)."""
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
