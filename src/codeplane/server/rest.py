"""Operator REST routes (spec §23.8): ``/health``, ``/status``, ``/ready``; ``/metrics`` and ``/dashboard``
are in ``observability/routes.py``."""

from __future__ import annotations

import asyncio
import time

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from codeplane import API_VERSION, __version__
from codeplane.core.clock import now_ms
from codeplane.core.errors import CodePlaneError
from codeplane.server.services import Services
from codeplane.server.staged import ready_wait

#: How often a held ``/ready?wait=`` looks at the readiness again (an attribute read, no request).
_READY_RECHECK_SEC = 0.02


def status_payload(services: Services) -> dict[str, object]:
    ready, reason = services.readiness.now()
    return {
        "api_version": API_VERSION,
        "version": __version__,
        "repo": str(services.root),
        "repo_id": services.repo_id,
        "pid": services.pid,
        "uptime_ms": now_ms() - services.started_at_ms,
        "ready": ready,
        "ready_reason": reason,
        "last_error": services.last_error or getattr(getattr(services, "mutation", None), "broken", None)
        or getattr(getattr(services, "index", None), "error", None),
        "phase": "serving",
        **services.status(),
    }


def rest_routes(services: Services) -> list[Route]:
    async def health(_: Request) -> Response:
        return JSONResponse({"status": "ok", "pid": services.pid})

    async def status(_: Request) -> Response:
        # Off the event loop: a section read anew after an apply scans tables, and MCP calls must not wait.
        return JSONResponse(await run_in_threadpool(status_payload, services))

    async def ready(request: Request) -> Response:
        wait = ready_wait(request.scope.get("query_string", b""))
        if isinstance(wait, CodePlaneError):
            return JSONResponse(wait.to_payload(), status_code=400)
        deadline = time.monotonic() + wait
        ready, reason = services.readiness.now()
        while not ready and not services.stopping.is_set() and (left := deadline - time.monotonic()) > 0:
            await asyncio.sleep(min(_READY_RECHECK_SEC, left))
            ready, reason = services.readiness.now()
        return JSONResponse({"ready": ready, "reason": reason}, status_code=200 if ready else 503)

    return [
        Route("/health", health, methods=["GET"]),
        Route("/status", status, methods=["GET"]),
        Route("/ready", ready, methods=["GET"]),
    ]
