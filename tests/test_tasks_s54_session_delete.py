"""QA54 F4: an MCP session its client ends (HTTP DELETE with ``Mcp-Session-Id``, as the TypeScript SDK's
``terminateSession`` sends) closes its CodePlane task CLOSED_INTERRUPTED at once; it stayed listed OPEN to every
client for the idle timeout (30 minutes by default)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.builders import make_repo, running_server

_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _rpc(http: httpx.Client, url: str, body: dict[str, Any], session: str | None = None) -> httpx.Response:
    headers = dict(_HEADERS, **({"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
                                if session else {}))
    return http.post(url, content=json.dumps(body), headers=headers)


def _open_tasks(server: Any) -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = server.get("/status").json()["tasks"]["open_tasks"]
    return tasks


def test_a_deleted_mcp_session_closes_its_task(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    with running_server(repo) as server, httpx.Client(timeout=30) as http:
        server.wait_serving()
        url = server.base_url + "/mcp"
        init = _rpc(http, url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        session = init.headers["mcp-session-id"]
        assert _rpc(http, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session).status_code == 202
        called = _rpc(http, url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                  "params": {"name": "describe", "arguments": {}}}, session)
        assert called.status_code == 200, called.text
        mine = [t for t in _open_tasks(server) if t["session_id"] == f"mcp_{session}"]
        assert len(mine) == 1, _open_tasks(server)
        ended = http.delete(url, headers={"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"})
        assert ended.status_code == 200, ended.text
        assert [t for t in _open_tasks(server) if t["session_id"] == f"mcp_{session}"] == []
        # A DELETE of a session the server does not know changes nothing and closes nothing.
        assert http.delete(url, headers={"Mcp-Session-Id": "nope", "Mcp-Protocol-Version": "2025-06-18"}
                           ).status_code == 404
