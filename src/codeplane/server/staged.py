"""Staged startup: the socket answers at once, the MCP stack boots behind it.

Importing the MCP SDK and the subsystems (pygit2, tantivy, tree-sitter, ~40 tool modules) costs about a
second, which ``cpl up`` used to spend before it listened. :class:`StagedApp` is the ASGI app uvicorn
serves from the first moment: ``/health``, ``/ready`` and ``/status`` answer immediately (while booting,
``/ready`` says 503 "starting" and ``/status`` gives the identity fields with ``phase: starting``;
``/ready?wait=S`` holds its answer until the server is ready or ``S`` seconds have passed, so a client or
script waiting for a first build need not poll, which at 100 Hz took a third of a second of a cold Django
build's CPU);
every other request, ``/mcp`` included, is accepted and *held* until the stack has booted (including
its bounded wait for the startup reconcile), then handed to it. A client that connects early therefore waits
for its first answer instead of seeing "connection refused" or a half-built server.

Invariants: the boot runs once, in a worker thread (imports and store opening block); the stack's own
lifespan (lifecycles, MCP session manager) is entered and left in one task on the event loop; a boot
failure answers 503 with the error payload and asks the server to exit, it never leaves a server that
looks healthy but cannot serve tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Receive, Scope, Send

from codeplane import API_VERSION, __version__
from codeplane.core.clock import now_ms
from codeplane.core.collector import resume as resume_collector
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.core.storage import storage_error
from codeplane.index import progress as build_progress

log = get_logger(__name__)


class BootedStack(Protocol):
    """What a boot produces: the full app and the context that keeps its subsystems running."""

    @property
    def asgi(self) -> ASGIApp: ...

    def running(self) -> AbstractAsyncContextManager[None]: ...

    def stop_waiting(self) -> None:
        """The server is stopping: cut short what :meth:`running` waits for while it starts (thread-safe)."""

    def discard(self) -> None:
        """Stop whatever the boot started, when :meth:`running` will not run (blocking; called off the loop)."""


#: The longest wait ``/ready?wait=`` may ask for, in seconds.
MAX_READY_WAIT_SEC = 300.0


def ready_wait(query_string: bytes) -> float | CodePlaneError:
    """Seconds ``/ready`` may hold its answer for (``?wait=``; 0 without it), or the error a bad value gets."""
    values = parse_qs(query_string.decode("latin-1")).get("wait")
    if not values:
        return 0.0
    try:
        seconds = float(values[-1])
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= MAX_READY_WAIT_SEC:  # NaN fails both comparisons
        return CodePlaneError(ErrorCode.INVALID_ARGUMENTS,
                              f"wait must be a number of seconds from 0 to {MAX_READY_WAIT_SEC:g}",
                              details={"parameter": "wait", "value": values[-1][:100]})
    return seconds


async def _send_json(send: Send, status: int, payload: object) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class StagedApp:
    """ASGI app live before the MCP stack exists; see the module docstring."""

    def __init__(self, boot: Callable[[], BootedStack], *, repo: str,
                 on_failure: Callable[[BaseException], None]) -> None:
        self._boot = boot
        self._repo = repo
        self._on_failure = on_failure
        self._pid = os.getpid()
        self._started_at_ms = now_ms()
        self._stack: BootedStack | None = None
        #: The boot's stack from the moment it exists (``_stack`` waits until its lifecycles have started).
        self._booted_stack: BootedStack | None = None
        self._failure: CodePlaneError | None = None
        self._booted = asyncio.Event()
        self._stop = asyncio.Event()
        #: Set (on the loop) when a stop signal arrives: a ``/ready?wait=`` held while booting answers then.
        self._stopping = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: asyncio.Task[None] | None = None

    def stop_waiting(self) -> None:
        """A stop began (a signal): what waits for the boot's lifecycles ends now, ``/ready?wait=`` included, so
        a request held open does not keep the stop waiting until the first build has published."""
        stack = self._booted_stack
        if stack is not None:
            stack.stop_waiting()
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)

    @property
    def phase(self) -> str:
        if self._failure is not None:
            return "failed"
        if self._stop.is_set() or self._stopping.is_set():
            return "stopping"
        return "serving" if self._stack is not None else "starting"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] == "http" and scope["path"] == "/health":
            await _send_json(send, 200, {"status": "ok", "pid": self._pid, "phase": self.phase})
            return
        if scope["type"] == "http" and scope["path"] == "/ready" and not self._booted.is_set():
            wait = ready_wait(scope.get("query_string", b""))
            if isinstance(wait, CodePlaneError):
                await _send_json(send, 400, wait.to_payload())
                return
            began = time.monotonic()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_either(self._booted, self._stopping), wait)
            # Booted: the stack's own ``/ready`` answers, waiting whatever is left of ``wait`` if it must.
            left = f"wait={max(wait - (time.monotonic() - began), 0.0):.3f}".encode()
            scope = {**scope, "query_string": left}
        if not self._booted.is_set() and scope["type"] == "http" and scope["path"] in ("/ready", "/status"):
            await self._answer_while_booting(scope["path"], send)
            return
        await self._booted.wait()
        if self._stack is None:
            failure = self._failure or CodePlaneError(ErrorCode.INTERNAL_ERROR, "server is shutting down")
            if scope["type"] == "http":
                await _send_json(send, 503, failure.to_payload())
            return
        await self._stack.asgi(scope, receive, send)

    async def _answer_while_booting(self, path: str, send: Send) -> None:
        stopping = self.phase == "stopping"
        reason = ("stopping: the server is shutting down" if stopping
                  else "starting: loading the MCP stack and subsystems")
        if path == "/ready":
            await _send_json(send, 503, {"ready": False, "reason": reason})
            return
        payload: dict[str, object] = {
            "api_version": API_VERSION, "version": __version__, "repo": self._repo, "pid": self._pid,
            "uptime_ms": now_ms() - self._started_at_ms, "ready": False, "ready_reason": reason, "phase": self.phase}
        progress = build_progress.status(self._repo)
        if progress is not None and not stopping:  # the boot waits for the first index: say how far it is
            loaded = self._booted_stack is not None  # only the first build is left to wait for
            payload["ready_reason"] = f"starting: {'the stack is loaded, ' if loaded else ''}building the index"
            payload["index"] = {"state": "building", "ready": False, "progress": progress}
        await _send_json(send, 200, payload)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._loop = asyncio.get_running_loop()
                self._runner = asyncio.create_task(self._run())
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self._stop.set()
                if self._booted_stack is not None:  # still starting its lifecycles, perhaps: stop waiting
                    self._booted_stack.stop_waiting()
                if self._runner is not None:
                    await self._runner
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _run(self) -> None:
        try:
            stack = await asyncio.to_thread(self._boot)
            self._booted_stack = stack
            # ``cpl up`` paused the collector for the imports (cli/main.py); what they built lives as long as the
            # server, so it is frozen out of the collector's sight before the collector runs again (once a first
            # build running now is written: it pauses the collector too, ``core/collector.py``).
            gc.freeze()
            resume_collector()
            if self._stop.is_set():
                await asyncio.to_thread(stack.discard)
                return
            async with stack.running():
                self._stack = stack
                # What the boot built (the SDK, pydantic models, ~135k objects) lives as long as the server:
                # out of the collector's sight, a full collection no longer spends ~60 ms scanning it.
                gc.freeze()
                self._booted.set()
                await self._stop.wait()
        except Exception as exc:
            log.exception("server boot failed")
            # A read-only, immutable or full ``.codeplane/`` is the user's to fix: 5010-5012 say how (it was 9001).
            self._failure = exc if isinstance(exc, CodePlaneError) else storage_error(
                exc, doing="starting the server") or CodePlaneError(
                ErrorCode.INTERNAL_ERROR, f"server boot failed: {type(exc).__name__}: {exc}")
            self._on_failure(self._failure)
        finally:
            self._stack = None if self._failure is not None else self._stack
            self._booted.set()


async def _either(first: asyncio.Event, second: asyncio.Event) -> None:
    """Until one of two events is set."""
    waits = {asyncio.ensure_future(first.wait()), asyncio.ensure_future(second.wait())}
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()

