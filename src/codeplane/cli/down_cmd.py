"""``cpl down``: stop the repository's server from another terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from codeplane.cli.output import cli_errors, console, emit
from codeplane.cli.probe import stop_server
from codeplane.cli.repo_context import resolve
from codeplane.server.instance import clean_stale_files, lock_is_held


def down(
    path: Annotated[Path | None, typer.Argument(help="Path inside the git work tree (default: cwd).")] = None,
    force: Annotated[bool, typer.Option("--force", help="SIGKILL if it has not stopped in time.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Stop the repository's running server (SIGTERM, wait, report)."""
    with cli_errors(as_json):
        ctx = resolve(path, tolerant=True)  # a broken config must not trap the user
    if not lock_is_held(ctx.layout):
        cleaned = clean_stale_files(ctx.layout)
        emit({"ok": True, "was_running": False, "cleaned": cleaned}, as_json,
             lambda: console.print("No CodePlane server is running for this repository."
                                   + (f" Removed stale {', '.join(cleaned)}." if cleaned else "")))
        return
    timeout = ctx.config.server.shutdown_timeout_sec + 2.0
    stopped, pid = stop_server(ctx.layout, timeout, force=force)
    if stopped:
        clean_stale_files(ctx.layout)
    emit({"ok": stopped, "was_running": True, "pid": pid, "stopped": stopped}, as_json,
         lambda: console.print(f"Stopped CodePlane server (pid {pid})." if stopped else
                               f"[red]Server pid {pid} did not stop within {timeout:.0f}s[/]; "
                               "retry with --force."))
    if not stopped:
        raise typer.Exit(1)
