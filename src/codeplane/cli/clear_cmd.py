"""``cpl clear``: remove ``.codeplane/`` (rolling back a write batch a crash left unfinished first); refuses while
the server runs unless ``--force``."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer

from codeplane.cli.output import cli_errors, console, emit
from codeplane.cli.probe import stop_server
from codeplane.cli.repo_context import resolve
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.mutation.journal import recover
from codeplane.server.instance import lock_is_held, read_running


def clear(
    path: Annotated[Path | None, typer.Argument(help="Path inside the git work tree (default: cwd).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Stop a running server first.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Remove CodePlane's state (.codeplane/) from a repository. .cplignore is kept."""
    with cli_errors(as_json):
        ctx = resolve(path, tolerant=True)  # a broken config must not trap the user
        ctx.layout.require_state_dir_place()  # a file there is not CodePlane's to delete
        if lock_is_held(ctx.layout):
            running = read_running(ctx.layout)
            if not force:
                raise CodePlaneError(
                    ErrorCode.SERVER_ALREADY_RUNNING,
                    f"a server is running (pid {running.pid}, port {running.port}); "
                    "run `cpl down` first or pass --force",
                    details={"pid": running.pid, "port": running.port},
                )
            outcome = stop_server(ctx.layout, ctx.config.server.shutdown_timeout_sec + 2.0, force=True)
            if not outcome.stopped:
                raise CodePlaneError(ErrorCode.SERVER_ALREADY_RUNNING, f"could not stop server pid {outcome.pid}",
                                     details={"pid": outcome.pid})
        existed = ctx.layout.state_dir.exists()
        # A write batch a crash left half-applied is rolled back first, as the next ``cpl up`` would have done:
        # removing its journal kept the half-applied work tree (and its temporary files) for good.
        rolled = recover(ctx.root, ctx.layout.journal_dir) if existed else []
        if existed:
            shutil.rmtree(ctx.layout.state_dir)

    def render() -> None:
        for batch in rolled:
            console.print(f"Rolled back the unfinished write batch {batch} (a crash left it half-applied)")
        console.print(f"Removed {ctx.layout.state_dir}" if existed else "Nothing to remove.")

    emit({"ok": True, "removed": existed, "path": str(ctx.layout.state_dir), "rolled_back": rolled}, as_json,
         render)
