"""How to point MCP clients at the server: printed by ``cpl init`` and written by ``--write-client-config``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeplane.core.atomic import write_atomic

SERVER_NAME = "codeplane"


def mcp_url(port: int, host: str = "127.0.0.1") -> str:
    return f"http://{host}:{port}/mcp"


def claude_command(url: str) -> str:
    return f"claude mcp add --transport http {SERVER_NAME} {url}"


def mcp_json(url: str) -> dict[str, Any]:
    """``.mcp.json`` (Claude Code project scope; Cursor reads the same shape from ``.cursor/mcp.json``)."""
    return {"mcpServers": {SERVER_NAME: {"type": "http", "url": url}}}


def vscode_json(url: str) -> dict[str, Any]:
    return {"servers": {SERVER_NAME: {"type": "http", "url": url}}}


def _merge_write(path: Path, snippet: dict[str, Any]) -> bool:
    """Add our server entry to an existing JSON file without touching other entries. True if changed."""
    current: dict[str, Any] = {}
    if path.is_file():
        loaded = json.loads(path.read_text(encoding="utf-8") or "{}")
        current = loaded if isinstance(loaded, dict) else {}
    key = next(iter(snippet))
    section = dict(current.get(key) or {})
    if section.get(SERVER_NAME) == snippet[key][SERVER_NAME]:
        return False
    section[SERVER_NAME] = snippet[key][SERVER_NAME]
    current[key] = section
    write_atomic(path, (json.dumps(current, indent=2, sort_keys=True) + "\n").encode())
    return True


def write_client_configs(root: Path, url: str) -> list[str]:
    written = []
    if _merge_write(root / ".mcp.json", mcp_json(url)):
        written.append(".mcp.json")
    if _merge_write(root / ".vscode" / "mcp.json", vscode_json(url)):
        written.append(".vscode/mcp.json")
    return written
