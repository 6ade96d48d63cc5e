"""How to point MCP clients at the server: printed by ``cpl init`` and written by ``--write-client-config``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeplane.core.atomic import write_atomic
from codeplane.core.errors import CodePlaneError, ErrorCode

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


def _merged(path: Path, snippet: dict[str, Any]) -> bytes | None:
    """``path``'s JSON with our server entry added, other entries and their order untouched; ``None`` if it is
    there already. 2002 naming the file, before anything is written, when it is not a JSON object (comments
    included: VS Code allows them, and writing the file back would drop them) or its section is no object."""
    key = next(iter(snippet))
    current: dict[str, Any] = {}
    if path.is_file():
        text = path.read_text(encoding="utf-8")
        try:
            loaded = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise _unusable(path, snippet, f"is not plain JSON ({exc.msg} at line {exc.lineno}; comments and "
                                           "trailing commas would be lost if it were rewritten)") from exc
        if not isinstance(loaded, dict):
            raise _unusable(path, snippet, f"holds a JSON {type(loaded).__name__}, not an object")
        current = loaded
    section = current.get(key, {})
    if not isinstance(section, dict):
        raise _unusable(path, snippet, f"has {key!r} as a JSON {type(section).__name__}, not an object")
    if section.get(SERVER_NAME) == snippet[key][SERVER_NAME]:
        return None
    current[key] = {**section, SERVER_NAME: snippet[key][SERVER_NAME]}
    return (json.dumps(current, indent=2) + "\n").encode()


def _unusable(path: Path, snippet: dict[str, Any], why: str) -> CodePlaneError:
    entry = json.dumps(snippet)
    return CodePlaneError(ErrorCode.CONFIG_INVALID_VALUE, f"{path} {why}; nothing was written: add {entry} to it "
                          "by hand, or move it away and run again", details={"path": str(path), "entry": snippet})


def write_client_configs(root: Path, url: str) -> list[str]:
    """Add the server to ``.mcp.json`` and ``.vscode/mcp.json``: both checked before either is written."""
    planned = [(rel, _merged(root / rel, snippet)) for rel, snippet in
               ((".mcp.json", mcp_json(url)), (".vscode/mcp.json", vscode_json(url)))]
    written = []
    for rel, data in planned:
        if data is not None:
            write_atomic(root / rel, data)
            written.append(rel)
    return written
