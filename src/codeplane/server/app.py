"""The MCP stack: MCP at ``/mcp`` plus the REST routes, and the context that keeps the subsystems running.

Booted behind :class:`codeplane.server.staged.StagedApp`, which puts the Host/Origin guard in front of it.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.types import ASGIApp

from codeplane.core.codegen_cache import save as save_generated_code
from codeplane.core.logging import get_logger
from codeplane.server.boot_index import EarlyIndex
from codeplane.server.dispatch import record_refused
from codeplane.server.drain import Drain
from codeplane.server.first_calls import build_result_models, warm_first_calls
from codeplane.server.mcp_endpoint import McpFastPath, ToolCatalogue, build_mcp_server
from codeplane.server.observability.routes import observability_routes
from codeplane.server.rest import rest_routes
from codeplane.server.sdk_import import warm_mcp_sdk
from codeplane.server.services import Services
from codeplane.server.tooling import ToolRegistry, ToolResult
from codeplane.server.tools import all_tools, switched_off

log = get_logger(__name__)


@dataclass(frozen=True)
class McpStack:
    """The full app (no guard, no lifespan) and what must run while it serves."""

    services: Services
    asgi: ASGIApp
    _session_run: Callable[[], AbstractAsyncContextManager[None]]
    catalogue: ToolCatalogue
    registry: ToolRegistry
    #: The index the boot started before building the stack (``boot_index``); the ``index`` lifecycle stops it.
    early: EarlyIndex | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Start the lifecycles in order and the MCP session manager; stop them in reverse."""
        started = []
        try:
            for lifecycle in self.services.lifecycles:
                await lifecycle.start()
                started.append(lifecycle)
            async with self._session_run():
                # What the boot left for later, off its critical path: what a client's first messages need, and
                # beside it the first calls' work (server/first_calls.py), then the deferred services. Not before:
                # started while the lifecycles wait for the index's reconcile, it held /ready back (the GIL).
                protocol = threading.Thread(target=self._warm_protocol, name="cpl-warm-up-protocol", daemon=True)
                protocol.start()
                threading.Thread(target=self._warm_up, args=(protocol,), name="cpl-warm-up", daemon=True).start()
                yield
        finally:
            for lifecycle in reversed(started):
                try:
                    await lifecycle.stop()
                except Exception:
                    log.exception("lifecycle stop failed", name=lifecycle.name)

    def stop_waiting(self) -> None:
        """The server is stopping: a lifecycle start still waiting (the index's first reconcile) ends now."""
        self.services.stopping.set()

    def discard(self) -> None:
        """Stop what the boot started although :meth:`running` never ran (the server stopped while it booted)."""
        if self.early is not None:
            self.early.abandon()

    def _warm_protocol(self) -> None:
        """The SDK's validators and tools/list's schemas (a client's first messages) and the served tools' answer
        models: nothing here needs the index or a started service."""
        try:
            warm_mcp_sdk()
            self.catalogue.tools()
            build_result_models(self.registry)
        except Exception:  # the call that needs it builds it again and answers the error itself
            log.exception("warming up the protocol failed")

    def _warm_up(self, protocol: threading.Thread) -> None:
        try:
            # What the first calls would pay for (server/first_calls.py: the map, the ledger's WAL), then the
            # services and models few first calls use: until those are done, the warm-up competes with the calls.
            # During a first build (minutes) the index is not ready: the rest comes first, the calls' work after it.
            first_calls_now = warm_first_calls(self.services, self.registry, wait=False)
            protocol.join()
            self.services.warm_deferred()
            build_deferred_models()
            if not first_calls_now:
                warm_first_calls(self.services, self.registry, wait=True)
        except Exception:  # the call that needs it builds it again and answers the error itself
            if self.services.stopping.is_set():  # a stop right after the start closed what it was warming
                log.info("warming up after the boot ended: the server is stopping")
            else:
                log.exception("warming up after the boot failed")
        # The code the stdlib generated for this boot (core/codegen_cache.py), kept for the next one now, not at exit.
        save_generated_code()


def build_deferred_models() -> int:
    """Build the CodePlane models created with ``defer_build`` that no call has built yet; how many were built.

    Tool parameters and results, and the refactor, git, lint and mutation models, are created unbuilt so the boot
    does not pay for validators before ``/ready`` (issue 19). The catalogue builds the parameters; the warm-up thread
    builds the subsystems' models here, so a tool's first call does not (one that comes first builds its own, under
    pydantic's lock).
    """
    built = 0
    seen: set[type[BaseModel]] = set()
    pending: list[type[BaseModel]] = [BaseModel]
    while pending:
        for model in pending.pop().__subclasses__():
            if model in seen:
                continue
            seen.add(model)
            pending.append(model)
            # The SDK's models are left alone (warm_mcp_sdk builds what a client's first messages use): ours only.
            # Tools' result models are left to server/first_calls.py, which builds the served tools' only (all
            # ~100 here would compete with the first calls themselves).
            if (model.__pydantic_complete__ or not model.__module__.startswith("codeplane.")
                    or issubclass(model, ToolResult)):
                continue
            try:
                # Names resolve in the model's own module, never in this frame; one that cannot be built is left
                # for its first use, which raises the error where a caller sees it.
                if model.model_rebuild(raise_errors=False, _parent_namespace_depth=0):
                    built += 1
            except Exception:
                log.exception("building a deferred model failed", model=model.__qualname__)
    return built


def build_stack(services: Services, early: EarlyIndex | None = None, drain: Drain | None = None) -> McpStack:
    """The stack; ``drain`` is the server's stop (server/drain.py), which may cut its tool calls short."""
    registry = ToolRegistry(all_tools(services), profile=services.config.tools.profile,
                            switched_off=switched_off(services))
    catalogue = ToolCatalogue(registry)
    mcp_server = build_mcp_server(services, registry, catalogue, drain)
    # Host/Origin are checked once, by the guard in front of the staged app (server/security.py), on every
    # route /mcp included: it applies the configured policy (``server.extra_allowed_hosts``, https origins, names
    # in any case) and refuses with a catalog error. The SDK's own check, a second and narrower copy, refused
    # what the guard allows (a reverse proxy's Host, ``LOCALHOST``, ``https://localhost``) in plain text (421/403).
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    inner = mcp_server.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=security,
        session_idle_timeout=float(services.config.tasks.session_idle_timeout_sec),
        custom_starlette_routes=[*rest_routes(services), *observability_routes(services)],
    )
    # /mcp bypasses Starlette's middleware and router, and short stateless calls the SDK's SSE set-up (McpFastPath).
    asgi = McpFastPath(Starlette(routes=inner.routes), mcp_server, mcp_server.session_manager,
                       security=security, registry=registry,
                       session_ended=lambda session: services.tasks.end_session(session, "the client ended it"),
                       refused=lambda tool, explicit, default, error: record_refused(
                           services, registry, tool, explicit_session=explicit, default_session=default, error=error))
    return McpStack(services=services, asgi=asgi, _session_run=mcp_server.session_manager.run,
                    catalogue=catalogue, registry=registry, early=early)
