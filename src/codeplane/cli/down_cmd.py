"""``cpl down``: stop the repository's server from another terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from codeplane.cli.output import cli_errors, console, emit, fail
from codeplane.cli.probe import stop_server
from codeplane.cli.repo_context import resolve
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.server.instance import clean_stale_files, lock_is_held, stop_deadline_sec


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
    # A server ends by its stop deadline even when a call's thread never returns (a write batch in flight aside);
    # the margin is for a loaded machine, where a 2004 would send the user to --force for nothing.
    timeout = stop_deadline_sec(ctx.config.server.shutdown_timeout_sec) + 5.0
    outcome = stop_server(ctx.layout, timeout, force=force)
    pid = outcome.pid
    if not outcome.stopped:
        # Exit 2 with the catalog error, as README lists for a command that failed (1 is a failed doctor check).
        if outcome.suspended and not force:
            message = (f"server pid {pid} is suspended (Ctrl+Z or SIGSTOP) and cannot act on SIGTERM; continue it "
                       f"(`kill -CONT {pid}`, or `fg` in its terminal) to let it stop cleanly, or retry with --force")
        else:
            hint = "it survived SIGKILL" if force else "retry with --force"
            message = f"server pid {pid} did not stop within {timeout:.0f}s; {hint}"
        fail(CodePlaneError(ErrorCode.SERVER_ALREADY_RUNNING, message,
                            details={"pid": pid, "stopped": False, **({"suspended": True} if outcome.suspended
                                                                      else {})}), as_json)
    cleaned = clean_stale_files(ctx.layout)  # a killed server could not remove its port and pid files
    emit({"ok": True, "was_running": True, "pid": pid, "stopped": True, **({"cleaned": cleaned} if cleaned else {})},
         as_json, lambda: console.print(f"Stopped CodePlane server (pid {pid})."))
