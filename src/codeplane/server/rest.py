"""Operator REST routes (spec §23.8): ``/health``, ``/status``, ``/ready``, ``/metrics``, ``/dashboard``."""

from __future__ import annotations

import html
import json

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from codeplane import API_VERSION, __version__
from codeplane.core.clock import now_ms
from codeplane.server.metrics import CallMetrics
from codeplane.server.services import Services


def status_payload(services: Services) -> dict[str, object]:
    return {
        "api_version": API_VERSION,
        "version": __version__,
        "repo": str(services.root),
        "repo_id": services.repo_id,
        "pid": services.pid,
        "uptime_ms": now_ms() - services.started_at_ms,
        "ready": services.readiness.ready,
        "ready_reason": services.readiness.reason,
        "last_error": services.last_error,
        "phase": "serving",
        **services.status(),
    }


def rest_routes(services: Services, metrics: CallMetrics) -> list[Route]:
    async def health(_: Request) -> Response:
        return JSONResponse({"status": "ok", "pid": services.pid})

    async def status(_: Request) -> Response:
        return JSONResponse(status_payload(services))

    async def ready(_: Request) -> Response:
        body = {"ready": services.readiness.ready, "reason": services.readiness.reason}
        return JSONResponse(body, status_code=200 if services.readiness.ready else 503)

    async def metrics_route(_: Request) -> Response:
        return PlainTextResponse(metrics.prometheus(), media_type="text/plain; version=0.0.4")

    async def dashboard(_: Request) -> Response:
        status_json = html.escape(json.dumps(status_payload(services), indent=2, default=str))
        rows = "".join(
            f"<tr><td>{html.escape(name)}</td><td>{int(s['calls'])}</td><td>{int(s['errors'])}</td>"
            f"<td>{s['total_ms'] / max(s['calls'], 1):.2f}</td></tr>"
            for name, s in metrics.snapshot().items()
        )
        page = (
            "<!doctype html><html><head><meta charset='utf-8'><title>CodePlane</title></head><body>"
            f"<h1>CodePlane — {html.escape(str(services.root))}</h1>"
            "<h2>Tool calls</h2><table border='1'><tr><th>tool</th><th>calls</th><th>errors</th>"
            f"<th>mean ms</th></tr>{rows}</table><h2>Status</h2><pre>{status_json}</pre></body></html>"
        )
        return HTMLResponse(page)

    return [
        Route("/health", health, methods=["GET"]),
        Route("/status", status, methods=["GET"]),
        Route("/ready", ready, methods=["GET"]),
        Route("/metrics", metrics_route, methods=["GET"]),
        Route("/dashboard", dashboard, methods=["GET"]),
    ]
