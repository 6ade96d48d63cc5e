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

Invariant: no answer is dropped while the drain runs; every request in flight at the signal gets its own answer
or a 9003 on its own stream (only a third signal stops without waiting). Everything here runs on the event loop.
"""

from __future__ import annotations

import asyncio
import json
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


def shutting_down_error(*, tool: str | None = None, cut_short: bool = False) -> CodePlaneError:
    """The 9003 a stopping server answers: a call refused, or (``cut_short``) one that did not finish in time."""
    if cut_short:
        message = "the server stopped before this call finished; nothing was applied; call again once it is back"
    else:
        message = "the server is stopping and takes no new calls; call again once it is back (cpl up)"
    details: dict[str, Any] = {"applied": False}
    if tool is not None:
        details["tool"] = tool
    return CodePlaneError(ErrorCode.SHUTTING_DOWN, message, details=details)


class Drain:
    """The stop's state: whether it began, the calls in flight, and the deadline's cut (see the module docstring)."""

    def __init__(self) -> None:
        self.stopping = False
        self._posts = 0
        self._finishing = 0
        self._cuttable: set[anyio.CancelScope] = set()
        self._expired = False
        self._answered = 0.0

    async def run(self, work: Callable[[], Awaitable[T]], *, finishes: bool) -> T | None:
        """Run one tool call; ``None`` when the drain cut it short. A call that ``finishes`` is never cut."""
        if finishes:
            self._finishing += 1
            try:
                return await work()
            finally:
                self._finishing -= 1
        # A cancel scope, not a task group: this runs on every call, and a scope costs next to nothing.
        with anyio.CancelScope() as scope:
            if self._expired:
                scope.cancel()
            self._cuttable.add(scope)
            try:
                return await work()
            finally:
                self._cuttable.discard(scope)
        return None  # only reached when the scope absorbed the drain's cancel

    def writes_in_flight(self) -> bool:
        """Whether a call that is never cut (a write batch) still runs. Read from other threads too."""
        return self._finishing > 0

    def expire(self) -> None:
        """The deadline passed (or a second signal came): cut every call that may be cut."""
        self._expired = True
        for scope in list(self._cuttable):
            scope.cancel()

    async def drain(self, timeout: float) -> None:
        """Wait for the calls in flight: all of them up to ``timeout`` seconds (or until :meth:`expire`), then only
        those that finish."""
        deadline = time.monotonic() + timeout
        while (time.monotonic() < deadline and not self._expired
               and (self._posts or time.monotonic() - self._answered < _QUIET_SEC)):
            await asyncio.sleep(_POLL_SEC)
        if not self._posts:
            return
        self.expire()
        # A write batch finishes whatever the deadline; the answers cut short get a bounded moment to go out.
        grace = time.monotonic() + _ANSWER_GRACE_SEC
        while self._posts and (self._finishing or time.monotonic() < grace):
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
