"""``cpl init``: set up ``.codeplane/`` and ``.cplignore``, build the first index; idempotent; print client config."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from codeplane.cli.clients import claude_command, mcp_json, mcp_url, vscode_json, write_client_configs
from codeplane.cli.output import cli_errors, console, emit, styled
from codeplane.cli.repo_context import resolve
from codeplane.repo.workspace import find_repo_root, initialize


def init(
    path: Annotated[Path | None, typer.Argument(help="Path inside the git work tree (default: cwd).")] = None,
    write_client_config: Annotated[bool, typer.Option(
        "--write-client-config", help="Write .mcp.json and .vscode/mcp.json pointing at this repo's server.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Initialise CodePlane for a repository (creates .codeplane/ and .cplignore)."""
    from codeplane.cli.index_build import build_first_index, render_summary

    # SIGTERM stops the first build as Ctrl+C does: its transaction rolled back. Killed as it was, the build left
    # SQLite's rollback journal, and `cpl status`/`doctor` read the index as unreadable and offered to drop it.
    signal.signal(signal.SIGTERM, _interrupt)
    with cli_errors(as_json):
        root = find_repo_root(path or Path.cwd())
        report = initialize(root)
        ctx = resolve(root)
        port = ctx.config.server.port or report.port
        url = mcp_url(port, ctx.config.server.host)
        written = write_client_configs(root, url) if write_client_config else []
        index = build_first_index(ctx, show_progress=not as_json)
    payload = {
        "ok": True, "repo": str(root), "repo_id": report.repo_id, "created": report.created,
        "changed": report.changed or bool(written), "port": port, "mcp_url": url,
        "client_config": {"claude_code": claude_command(url), "mcp_json": mcp_json(url),
                          "vscode_mcp_json": vscode_json(url)},
        "written": written,
        "index": index,
    }

    def render() -> None:
        if report.changed:
            console.print(styled(("Initialised CodePlane", "green"),
                                 f" in {root} (created: {', '.join(report.created)})"))
        else:
            console.print(f"CodePlane already initialised in {root}; nothing changed.")
        render_summary(index)
        console.print(styled("MCP URL (once `cpl up` runs): ", (url, "bold")))
        console.print("\nClaude Code:\n  " + claude_command(url))
        console.print("\n.mcp.json (Claude Code, Cursor):")
        console.print(json.dumps(mcp_json(url), indent=2))
        console.print("\n.vscode/mcp.json (VS Code):")
        console.print(json.dumps(vscode_json(url), indent=2))
        if written:
            console.print(f"\nWrote {', '.join(written)}")

    emit(payload, as_json, render)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt

