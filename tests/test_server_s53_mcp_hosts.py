"""``/mcp`` takes the Host/Origin policy every other route takes, and refuses with the same catalog error (QA47 §5).

The app kept the SDK's own DNS-rebinding check on ``/mcp`` with a hard-coded loopback list: behind the guard,
which had already applied the configured policy, it answered 421 "Invalid Host header" to a reverse proxy's name in
``server.extra_allowed_hosts`` (while ``/status`` answered 200), to ``Host: LOCALHOST`` (names are
case-insensitive) and 403 "Invalid Origin header" to ``https://localhost``, all three in plain text. Real server,
real HTTP, both protocol eras (the 2025 handshake takes the SDK's session path, a 2026-07-28 call the fast path).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.builders import ServerHandle, cpl_env, make_repo, running_server

_MODERN = "2026-07-28"


def _server(factory: pytest.TempPathFactory, *extra: str) -> Iterator[ServerHandle]:
    # One server per policy, shared by both eras' tests (they only send requests): a start costs ~2 s of CPU.
    repo = make_repo(factory.mktemp("mcp_hosts") / "repo", {"a.py": "x = 1\n"})
    with running_server(repo, *extra, env=cpl_env(home=factory.mktemp("xdg"))) as server:
        server.wait_serving()
        yield server


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    yield from _server(tmp_path_factory, "--set", "server.extra_allowed_hosts=[proxy.internal]")


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    yield from _server(tmp_path_factory)


def _initialize() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}


def _modern_list() -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": _MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}


def _post(server: ServerHandle, era: str, headers: dict[str, str]) -> httpx.Response:
    extra = {"mcp-protocol-version": _MODERN, "mcp-method": "tools/list"} if era == "modern" else {}
    body = _modern_list() if era == "modern" else _initialize()
    return httpx.post(server.mcp_url, json=body, timeout=30, headers={
        "accept": "application/json, text/event-stream", **extra, **headers})


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_mcp_accepts_the_hosts_and_origins_the_guard_accepts(proxied: ServerHandle, era: str) -> None:
    server = proxied
    allowed = [
        {"host": "proxy.internal"},
        {"host": "proxy.internal:8443"},
        {"host": f"LOCALHOST:{server.port}"},
        {"origin": "https://localhost:3000"},
        {"origin": "http://proxy.internal"},
    ]
    refused = []
    for headers in allowed:
        assert server.get("/status", headers=headers).status_code == 200, headers
        answer = _post(server, era, headers)
        if answer.status_code != 200:
            refused.append((headers, answer.status_code, answer.text))
        assert answer.headers["x-codeplane-repo"] == str(server.root.resolve())
    assert not refused


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_mcp_refuses_a_foreign_host_or_origin_with_a_catalog_error(plain: ServerHandle, era: str) -> None:
    server = plain
    for headers, reason in (({"host": "evil.example"}, "host_not_allowed"),
                            ({"origin": "https://evil.example"}, "origin_not_allowed"),
                            ({"host": "proxy.internal"}, "host_not_allowed")):
        answer = _post(server, era, headers)
        assert answer.status_code == 403, (headers, answer.text)
        assert answer.headers["content-type"] == "application/json"
        body = json.loads(answer.content)
        # A JSON-RPC error, which an MCP client reads, carrying the guard's catalog error as on other routes.
        assert body["jsonrpc"] == "2.0" and body["id"] is None, body
        payload = body["error"]["data"]
        assert payload["code"] == 1003 and payload["details"]["reason"] == reason, payload
        assert body["error"]["message"] == payload["message"]
        rest = server.get("/status", headers=headers)
        assert rest.status_code == 403 and json.loads(rest.content) == payload
