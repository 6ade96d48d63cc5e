"""``/metrics`` (Prometheus exposition by ``prometheus_client``) and ``/dashboard`` with its JSON API.

The dashboard is three static files shipped inside the package (``static/``: no CDN, no build step,
works offline) that poll ``/dashboard/api/live`` and ``/dashboard/api/operations``. Like every route, they
sit behind the Host/Origin guard (``server/security.py``).
"""

from __future__ import annotations

import asyncio
from importlib.resources import files
from typing import TYPE_CHECKING, get_args

from prometheus_client import CONTENT_TYPE_LATEST
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from codeplane.server.observability.live import live_snapshot
from codeplane.server.observability.traces import MAX_QUERY_LIMIT, OperationFilter, Outcome

if TYPE_CHECKING:
    from codeplane.server.services import Services

_STATIC = {"dashboard.html": "text/html; charset=utf-8", "dashboard.js": "text/javascript; charset=utf-8",
           "dashboard.css": "text/css; charset=utf-8"}
_OUTCOMES = set(get_args(Outcome))


def _static(name: str) -> Response:
    body = (files("codeplane.server.observability") / "static" / name).read_bytes()
    return Response(body, media_type=_STATIC[name], headers={"Cache-Control": "no-cache"})


def _bad(message: str) -> Response:
    return JSONResponse({"error": message}, status_code=400)


def _int(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    return int(raw)


def observability_routes(services: Services) -> list[Route]:
    obs = services.observability

    async def metrics(_: Request) -> Response:
        # Scrape-time collectors read SQLite-free state, but keep the loop free of even that.
        body = await asyncio.to_thread(obs.metrics.exposition)
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    async def dashboard(_: Request) -> Response:
        return _static("dashboard.html")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _STATIC:
            return JSONResponse({"error": f"no static file {name!r}"}, status_code=404)
        return _static(name)

    async def live(request: Request) -> Response:
        try:
            window = _int(request, "window_s") or 300
        except ValueError:
            return _bad("window_s must be an integer")
        if not 30 <= window <= 3600:
            return _bad("window_s must be within 30..3600")
        return JSONResponse(await asyncio.to_thread(live_snapshot, services, window_s=window))

    async def operations(request: Request) -> Response:
        params = request.query_params
        outcome = params.get("outcome") or None
        if outcome is not None and outcome not in _OUTCOMES:
            return _bad(f"outcome must be one of {sorted(_OUTCOMES)}")
        try:
            since, until, limit = _int(request, "since_ms"), _int(request, "until_ms"), _int(request, "limit")
        except ValueError:
            return _bad("since_ms, until_ms and limit must be integers")
        if limit is not None and not 1 <= limit <= MAX_QUERY_LIMIT:
            return _bad(f"limit must be within 1..{MAX_QUERY_LIMIT}")
        where = OperationFilter(task_id=params.get("task") or None, tool=params.get("tool") or None,
                                outcome=outcome, since_ms=since, until_ms=until)  # type: ignore[arg-type]
        ops, total = obs.ring.query(where, limit or 100)
        tools, tasks = obs.ring.tools_and_tasks()
        return JSONResponse({"operations": [op.summary() for op in ops], "total": total, "kept": len(obs.ring),
                             "tools": tools, "tasks": tasks})

    async def trace(request: Request) -> Response:
        op = obs.ring.get(request.path_params["trace_id"])
        if op is None:
            return JSONResponse({"error": "no such trace (unknown, or dropped from the ring)"}, status_code=404)
        return JSONResponse(op.with_spans())

    return [
        Route("/metrics", metrics, methods=["GET"]),
        Route("/dashboard", dashboard, methods=["GET"]),
        Route("/dashboard/static/{name}", static, methods=["GET"]),
        Route("/dashboard/api/live", live, methods=["GET"]),
        Route("/dashboard/api/operations", operations, methods=["GET"]),
        Route("/dashboard/api/traces/{trace_id}", trace, methods=["GET"]),
    ]
