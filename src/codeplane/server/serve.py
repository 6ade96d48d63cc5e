"""Running the server in the foreground: bind, serve, announce, shut down cleanly (spec §4.2).

Order on start: instance lock → bind the socket ourselves (so a busy port is detected before uvicorn
starts and ``--port 0`` yields the real port) → uvicorn serves the staged app → once it accepts
connections, write ``port``/``server.pid`` and print the URL, while the MCP stack boots behind it
(:mod:`codeplane.server.staged`). This module must stay cheap to import: the MCP SDK and the subsystems
are imported by the boot, in a worker thread, after the socket listens.

On SIGINT/SIGTERM the drain runs first (:mod:`codeplane.server.drain`): new calls are refused with 9003, calls in
flight are answered, for up to ``server.shutdown_timeout_sec`` (a write batch always finishes). Only then does
uvicorn's shutdown begin (it closes the streams and runs the lifespan shutdown, which stops the booted stack), and
we remove the files and release the lock. A second signal cuts the drain short, a third stops at once.

A call cut short may leave its worker thread running (a handler that never returns): once uvicorn has shut down,
such a thread gets a moment, then the process ends anyway (:mod:`codeplane.server.hard_stop`); the files and the
lock stay until the process has really ended, so ``cpl down --force`` always finds it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import errno
import math
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn

from codeplane.core.atomic import write_atomic
from codeplane.core.config import CodePlaneConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.core.logging import get_logger
from codeplane.core.storage import storage_error
from codeplane.server.drain import Drain, DrainGate
from codeplane.server.hard_stop import NET_SEC, HardStop, lingering_threads
from codeplane.server.instance import InstanceLock, stop_deadline_sec
from codeplane.server.security import GuardMiddleware
from codeplane.server.staged import BootedStack, StagedApp

log = get_logger(__name__)


@dataclass(frozen=True)
class Announcement:
    url: str
    port: int
    pid: int
    repo: str
    warnings: tuple[str, ...]


def bind_socket(host: str, port: int, *, fallback: bool = True) -> tuple[socket.socket, str | None]:
    """Bind ``port`` (0 = ephemeral). A busy port falls back to a free one with a warning when ``fallback`` (the
    port ``cpl init`` picked); one the user asked for (``--port``, ``server.port``) is 2006: client configs name
    it, and a server elsewhere would be one they cannot reach."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit TCP_NODELAY on Linux; without it Nagle + delayed ACK add ~40 ms to
    # every small response whose headers and body are written separately.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    warning = None
    try:
        sock.bind((host, port))
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE or port == 0 or not fallback:
            sock.close()
            raise CodePlaneError(ErrorCode.PORT_UNAVAILABLE, f"cannot bind {host}:{port}: {exc}",
                                 details={"host": host, "port": port}) from exc
        sock.bind((host, 0))
        warning = f"port {port} is busy; using {sock.getsockname()[1]} instead (update client configs)"
    sock.listen(128)
    sock.setblocking(False)
    return sock, warning


class _CoalescingTransport:
    """A connection's transport that sends a response's header block together with what follows it.

    uvicorn writes the status line and headers, then the body, as two ``write`` calls: two TCP segments on
    loopback, and a client woken twice per response (on a loaded machine each wake-up is a context switch
    that delays the answer). The header block is held until the next write (the body, in the same event-loop
    step for an ordinary response) or the loop's next turn (a stream whose first event comes later), so an
    ordinary answer leaves in one segment. Bytes and their order are unchanged; everything else is the
    real transport's.
    """

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._held: bytes | None = None
        self._loop = asyncio.get_running_loop()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._held is not None:
            data, self._held = self._held + bytes(data), None
        elif data[:7] == b"HTTP/1." and data[-4:] == b"\r\n\r\n":
            self._held = bytes(data)
            self._loop.call_soon(self._flush)
            return
        self._transport.write(data)

    def _flush(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _http_protocol() -> type[asyncio.Protocol]:
    """uvicorn's ``http="auto"`` choice (httptools when importable, else h11) on a :class:`_CoalescingTransport`."""
    base: type[Any]
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base = HttpToolsProtocol
    except ImportError:
        from uvicorn.protocols.http.h11_impl import H11Protocol

        base = H11Protocol

    class CoalescingProtocol(base):  # type: ignore[misc]
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(_CoalescingTransport(transport))  # type: ignore[arg-type]

    return CoalescingProtocol


#: How often a running server checks that its ``.codeplane/`` still says it runs (``InstanceLock.restore_if_removed``).
_STATE_CHECK_SEC = 2.0


class _Server(uvicorn.Server):
    """uvicorn's server with the drain (server/drain.py) between a stop signal and its own shutdown.

    uvicorn re-raises a captured SIGTERM/SIGINT after shutdown, which would kill the process before our cleanup
    (port/pid removal, lock release) runs; we finish the graceful path and exit normally.
    """

    def __init__(self, config: uvicorn.Config, drain: Drain, *, serving: Callable[[], bool],
                 timeout: float, hard_stop: HardStop, on_stop: Callable[[], None] = lambda: None) -> None:
        super().__init__(config)
        self._drain = drain
        self._hard_stop = hard_stop
        self._serving = serving
        #: Told at every stop signal: what waits for the boot (``/ready?wait=`` too) ends before uvicorn waits for
        #: the connections in flight, or one held open would let a first build publish instead of being rolled back.
        self._on_stop = on_stop
        self._timeout = timeout
        self._draining: asyncio.Task[None] | None = None
        self._drain_began = 0.0
        self._signals = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    async def main_loop(self) -> None:
        # uvicorn's own loop sleeps 0.1 s between ticks, and a stop took two of them (the drain begins at one, the
        # exit at the next): a stop signal and the drain's end wake it at once instead.
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)
            self._wake.clear()
            should_exit = await self.on_tick(counter)

    def _wake_up(self) -> None:
        """Run the next tick now; from the signal handler too (``call_soon_threadsafe`` writes the loop's wake-up
        pipe, which a loop waiting in its selector needs)."""
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(wake.set)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # The first signal only starts the drain (on the loop, at the next tick): uvicorn's ``should_exit`` is also
        # what makes the SSE library end every stream, answers in flight included. A second one cuts the calls in
        # flight short (they still answer 9003 on their streams); a third, or any before the stack serves (there is
        # no call to wait for), stops now, its write batches answered 9003 too (what they applied is unknown).
        # The hard stop's deadlines (server/hard_stop.py): a net far past the stop's own deadline, and after a third
        # signal, what the user insisted on, a second (``--force`` would SIGKILL it).
        self._signals += 1
        self._on_stop()
        if self._signals > 2:
            self._hard_stop.arm(1.0, spare_writes=False)
        else:
            self._hard_stop.arm(stop_deadline_sec(self._timeout) + NET_SEC)
        if self._signals > 2 or not self.started or not self._serving():
            # Stopping now: every call in flight, a write batch too, answers 9003 before uvicorn closes its stream.
            self._drain.give_up_now()
            super().handle_exit(sig, frame)
        elif self._signals == 2:
            self._drain.expire()
        else:
            self._drain.stopping = True
        self._captured_signals.clear()
        self._wake_up()

    async def on_tick(self, counter: int) -> bool:
        if await super().on_tick(counter):
            if self._draining is not None:  # a second signal (or a failed boot) stopped the server meanwhile
                self._draining.cancel()
            return True
        if not self._drain.stopping:
            return False
        if self._draining is None:
            self._drain_began = time.monotonic()
            self._draining = asyncio.create_task(self._drain.drain(self._timeout))
            self._draining.add_done_callback(lambda _: self._wake_up())
        if not self._draining.done():
            return False
        # uvicorn's own wait (for the connections to close) gets what the drain left of the timeout.
        left = self._timeout - (time.monotonic() - self._drain_began)
        self.config.timeout_graceful_shutdown = max(1, math.ceil(left))
        self.should_exit = True
        return True


def _ensure_token(token_file: Path) -> str:
    if token_file.is_file():
        return token_file.read_text().strip()
    token = secrets.token_hex(32)
    write_atomic(token_file, f"{token}\n".encode(), mode=0o600)
    return token


def _boot(root: Path, config: CodePlaneConfig, repo_id: str, drain: Drain) -> Callable[[], BootedStack]:
    def boot() -> BootedStack:
        # A configured shared index artifact is fetched and unpacked on its own thread meanwhile (the index
        # service's start verifies and adopts it: index/artifact_adopt.py).
        from codeplane.index.artifact_adopt import begin_early

        begin_early(root, config.index)
        # Crash recovery, the index's start and its startup reconcile begin now, on their own thread, and overlap
        # the imports below (server/boot_index.py); the index lifecycle waits for them as before.
        from codeplane.server.boot_index import EarlyIndex

        early = EarlyIndex(root, config)
        try:
            # The expensive imports, off the critical path: this runs in a worker thread after the socket listens.
            # The SDK first, its models' validators left for their first use (server/sdk_import.py).
            from codeplane.server.sdk_import import import_mcp_sdk

            import_mcp_sdk()
            from codeplane.server.app import build_stack
            from codeplane.server.services import build_services

            return build_stack(build_services(root, config, repo_id, early=early), early, drain)
        except BaseException:
            early.abandon()
            raise

    return boot


def serve(root: Path, config: CodePlaneConfig, repo_id: str, *, port: int,
          on_ready: Callable[[Announcement], None], port_fallback: bool = True) -> None:
    """Serve until a signal arrives. Raises 2004 if another server holds the repo, 2006 on bind failure,
    and the boot's error if the MCP stack could not be built (after shutting down cleanly)."""
    layout = RepoLayout(root)
    pid = os.getpid()
    lock = InstanceLock(layout)
    lock.acquire()
    warnings = [f"removed stale {name} from a server that is no longer running" for name in lock.cleaned_stale]
    boot_failure: list[BaseException] = []
    drain = Drain()
    hard_stop = HardStop(layout, writes_in_flight=drain.writes_in_flight, answer_in_flight=drain.give_up)
    try:
        host = config.server.host
        if host not in ("127.0.0.1", "localhost", "::1"):
            warnings.append(f"binding {host}, which is not loopback: anyone who can reach it can use CodePlane")
        sock, bind_warning = bind_socket(host, port, fallback=port_fallback)
        if bind_warning:
            warnings.append(bind_warning)
        actual_port = sock.getsockname()[1]
        token = _ensure_token(layout.token_file) if config.server.require_token else None
        server: _Server | None = None

        def on_boot_failure(exc: BaseException) -> None:
            boot_failure.append(exc)
            if server is not None:
                server.should_exit = True

        staged = StagedApp(_boot(root, config, repo_id, drain), repo=str(root), on_failure=on_boot_failure)
        app = GuardMiddleware(DrainGate(staged, drain), repo_root=str(root),
                              extra_hosts=config.server.extra_allowed_hosts, token=token)
        # loop "auto" and _http_protocol(): uvloop and httptools (dependencies) when importable, else asyncio and h11;
        # they take ~0.3 ms off every MCP call's 3 ms (benchmarks/mcp_overhead.py). serve() runs the loop itself (we
        # bind the socket first), so the loop factory is applied here rather than by uvicorn's run().
        uv_config = uvicorn.Config(
            app, log_config=None, access_log=False, lifespan="on", loop="auto", http=_http_protocol(),
            timeout_graceful_shutdown=int(max(1, round(config.server.shutdown_timeout_sec))),
        )
        server = _Server(uv_config, drain, serving=lambda: staged.phase == "serving",
                         timeout=config.server.shutdown_timeout_sec, hard_stop=hard_stop, on_stop=staged.stop_waiting)

        async def announce_when_started() -> None:
            assert server is not None
            while not server.started:
                if server.should_exit:
                    return
                await asyncio.sleep(0.002)
            try:
                lock.publish(actual_port)
            except OSError as exc:
                # Unannounced, the server would serve where nobody finds it (no port file, no banner, `cpl status`
                # naming port None): the start fails instead, with what to fix.
                on_boot_failure(storage_error(exc, doing="announcing the server (its port and pid files)",
                                              path=layout.state_dir) or exc)
                return
            url_host = f"[{host}]" if ":" in host else host
            for warning in warnings:
                log.warning(warning)
            log.info("server started", port=actual_port, pid=pid, repo=str(root))
            on_ready(Announcement(url=f"http://{url_host}:{actual_port}/mcp", port=actual_port,
                                  pid=pid, repo=str(root), warnings=tuple(warnings)))
            while not server.should_exit:
                await asyncio.sleep(_STATE_CHECK_SEC)
                if await asyncio.to_thread(lock.restore_if_removed, actual_port):
                    log.warning(".codeplane was removed under the running server: its .gitignore and lock are back "
                                "(`cpl clear --force` removes it cleanly)")

        async def main() -> None:
            assert server is not None
            watcher = asyncio.create_task(announce_when_started())
            try:
                await server.serve(sockets=[sock])
            finally:
                watcher.cancel()

        with asyncio.Runner(loop_factory=uv_config.get_loop_factory()) as runner:
            runner.run(main())
        log.info("server stopped", pid=pid)
    finally:
        left = lingering_threads()
        if left:
            # The interpreter joins these before it exits, and one may never return (a call the drain cut short):
            # the files and the lock go once they have (atexit runs after that join), or the process ends.
            log.debug("threads still running after the shutdown", threads=sorted(t.name for t in left))
            hard_stop.watch(left)
            atexit.register(lock.release)
        else:
            lock.release()
    if boot_failure:
        raise boot_failure[0]
