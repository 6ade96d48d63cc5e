"""The ASGI app: MCP at ``/mcp`` and the REST routes, behind the Host/Origin guard."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware

from codeplane.core.logging import get_logger
from codeplane.server.mcp_endpoint import build_mcp_server
from codeplane.server.metrics import CallMetrics
from codeplane.server.rest import rest_routes
from codeplane.server.security import GuardMiddleware
from codeplane.server.services import Services
from codeplane.server.tooling import ToolRegistry
from codeplane.server.tools import all_tools

log = get_logger(__name__)


def build_app(services: Services, *, token: str | None = None) -> Starlette:
    metrics = CallMetrics()
    services.observers.append(metrics)
    registry = ToolRegistry(all_tools(services))
    mcp_server = build_mcp_server(services, registry)
    # Our GuardMiddleware already enforces Host/Origin on every route; the SDK's own check is left on
    # for /mcp as a second line with the same loopback policy.
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
    inner = mcp_server.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=security,
        session_idle_timeout=float(services.config.tasks.session_idle_timeout_sec),
        custom_starlette_routes=list(rest_routes(services, metrics)),
    )

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        started = []
        try:
            for lifecycle in services.lifecycles:
                await lifecycle.start()
                started.append(lifecycle)
            async with mcp_server.session_manager.run():
                yield
        finally:
            for lifecycle in reversed(started):
                try:
                    await lifecycle.stop()
                except Exception:
                    log.exception("lifecycle stop failed", name=lifecycle.name)

    return Starlette(
        routes=inner.routes,
        middleware=[Middleware(GuardMiddleware, repo_root=str(services.root),
                               extra_hosts=services.config.server.extra_allowed_hosts, token=token)],
        lifespan=lifespan,
    )
