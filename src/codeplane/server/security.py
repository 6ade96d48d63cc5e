"""DNS-rebinding defence and repo identification for every HTTP route (D4, spec §4.2).

A request whose ``Host`` is not a loopback name (or one of ``server.extra_allowed_hosts``), or whose ``Origin`` is
not one of those (http or https, any port), gets 403 before any handler runs, names compared without regard to
case. This is the only such check, ``/mcp`` included (the SDK's own is off: server/app.py), so every refusal is a
catalog error; on ``/mcp`` it comes as a JSON-RPC error carrying it, which an MCP client reads. Every response,
403s included, carries ``X-CodePlane-Repo``.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from codeplane.core.errors import CodePlaneError, ErrorCode

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
REPO_HEADER = "x-codeplane-repo"
#: JSON-RPC's "Invalid Request", what the ``/mcp`` body-size refusal answers too (server/mcp_endpoint.py).
_INVALID_REQUEST = -32600


def _hostname(value: str) -> str:
    """Host header → bare host name (strip port and IPv6 brackets)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class GuardMiddleware:
    def __init__(self, app: ASGIApp, *, repo_root: str, extra_hosts: Iterable[str] = (),
                 token: str | None = None, mcp_path: str = "/mcp") -> None:
        self.app = app
        self.mcp_path = mcp_path
        self.repo_header = repo_root.encode("utf-8")
        # An entry written with a port (``proxy.internal:8443``) names the host, as a Host header with one does.
        self.allowed_hosts = LOOPBACK_HOSTS | {_hostname(h) for h in extra_hosts}
        self.token = token

    def _refusal(self, headers: dict[bytes, bytes]) -> CodePlaneError | None:
        host = headers.get(b"host", b"").decode("latin-1")
        if not host or _hostname(host) not in self.allowed_hosts:
            return CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "forbidden Host header",
                                  details={"host": host, "reason": "host_not_allowed"})
        origin = headers.get(b"origin")
        if origin is not None:
            parsed = urlsplit(origin.decode("latin-1"))
            if parsed.scheme not in ("http", "https") or (parsed.hostname or "") not in self.allowed_hosts:
                return CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "forbidden Origin header",
                                      details={"origin": origin.decode("latin-1"),
                                               "reason": "origin_not_allowed"})
        if self.token is not None:
            auth = headers.get(b"authorization", b"").decode("latin-1")
            scheme, _, credentials = auth.strip().partition(" ")
            if scheme.lower() != "bearer":  # an auth scheme's name is case-insensitive (RFC 7235)
                return CodePlaneError(ErrorCode.AUTH_TOKEN_MISSING)
            if not hmac.compare_digest(credentials.strip(), self.token):
                return CodePlaneError(ErrorCode.AUTH_TOKEN_INVALID)
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        refusal = self._refusal(headers)
        if refusal is not None:
            status = 401 if refusal.error in (ErrorCode.AUTH_TOKEN_MISSING, ErrorCode.AUTH_TOKEN_INVALID) else 403
            payload = refusal.to_payload()
            if scope["path"] == self.mcp_path:
                payload = {"jsonrpc": "2.0", "id": None, "error": {
                    "code": _INVALID_REQUEST, "message": refusal.message, "data": payload}}
            body = json.dumps(payload).encode()
            await send({"type": "http.response.start", "status": status, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (REPO_HEADER.encode(), self.repo_header)]})
            await send({"type": "http.response.body", "body": body})
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", []), (REPO_HEADER.encode(), self.repo_header)]
            await send(message)

        await self.app(scope, receive, send_with_header)
