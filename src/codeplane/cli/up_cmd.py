"""``cpl up``: start the repo's server in the foreground."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, get_args

import typer

from codeplane.cli.artifact_prefetch import index_from_overrides, prefetch_artifact
from codeplane.cli.clients import claude_command
from codeplane.cli.index_progress import follow_first_index
from codeplane.cli.output import cli_errors, console, styled
from codeplane.cli.repo_context import resolve
from codeplane.cli.up_events import announce_index_ready
from codeplane.core.atomic import write_atomic
from codeplane.core.config import ToolsConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.core.logging import configure_logging
from codeplane.repo.workspace import find_repo_root, initialize
from codeplane.tasks.schema import refuse_newer_file

#: The values of ``tools.profile``, as ``--profile`` takes them.
PROFILES: tuple[str, ...] = get_args(ToolsConfig.model_fields["profile"].annotation)

if TYPE_CHECKING:
    from codeplane.server.serve import Announcement


def up(
    path: Annotated[Path | None, typer.Argument(help="Path inside the git work tree (default: cwd).")] = None,
    *,
    # Options that stand for a config key are lists so that one given twice is refused, as a key given twice is
    # (typer's single-valued options silently kept the last one).
    ports: Annotated[list[int] | None, typer.Option(
        "--port", metavar="PORT", help="Port to bind (default: the repo's stored port; 0 = ephemeral).")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", metavar="KEY=VALUE",
        help="One-off config override, e.g. --set logging.level=debug (repeatable).")] = None,
    profiles: Annotated[list[str] | None, typer.Option(
        "--profile", metavar="core|full|read_only",
        help="Tools to serve: core (default: the find-read-edit-test loop), full or read_only "
             "(same as --set tools.profile=...).")] = None,
    index_froms: Annotated[list[str] | None, typer.Option(
        "--index-from", metavar="PATH|URL",
        help="Start from a shared index artifact (path or https:// URL, replacing the local index; "
             "same as --set index.artifact=... --set index.artifact_adopt=always).")] = None,
    no_refactor: Annotated[bool, typer.Option(
        "--no-refactor", help="Serve no refactor tools (same as --set refactor.enabled=false).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines: ready (listening), then index_ready "
                                                         "(first, while an --index-from URL downloads, "
                                                         "fetching_artifact, then artifact_fetched or "
                                                         "artifact_fetch_failed).")] = False,
) -> None:
    """Start the CodePlane server for a repository (foreground; Ctrl+C or SIGTERM to stop)."""
    # Imported here so the other commands do not pay for the server's imports (MCP SDK, index, git).
    from codeplane.server.serve import serve

    with cli_errors(as_json):
        port = ports[-1] if ports else None
        profile = next((p for p in profiles or [] if p not in PROFILES), profiles[-1] if profiles else None)
        if profile is not None and profile not in PROFILES:
            raise CodePlaneError(ErrorCode.CONFIG_INVALID_VALUE, f"--profile {profile!r}: use one of "
                                 f"{', '.join(PROFILES)}", details={"key": "tools.profile", "value": profile,
                                                                    "source": "--profile"})
        root = find_repo_root(path or Path.cwd())
        report = initialize(root)
        refuse_newer_file(RepoLayout(root).ledger_db)  # before the banner: the ledger opens in the staged boot
        # ``--port`` validated as ``server.port`` is (0..65535, exit 78), not found out of range by ``bind``.
        try:
            ctx = resolve(root, [*(set_ or []), *(f"tools.profile={p}" for p in profiles or []),
                                 *(f"server.port={p}" for p in ports or []),
                                 *(["refactor.enabled=false"] if no_refactor else []),
                                 *(o for i in index_froms or [] for o in index_from_overrides(i))])
        except CodePlaneError as exc:
            raise _as_option(exc, {f"--set server.port={p}": f"--port {p}" for p in ports or []}
                             | {f"--set tools.profile={p}": f"--profile {p}" for p in profiles or []}) from None
        configure_logging(ctx.config.logging, root)
        if not prefetch_artifact(ctx, show_progress=not as_json, as_json=as_json):  # stopped while downloading
            if not as_json:
                console.print("CodePlane stopped.")
            return
        chosen = port if port is not None else (ctx.config.server.port or report.port)

        def on_ready(ann: Announcement) -> None:
            if as_json:
                sys.stdout.write(json.dumps({"event": "ready", "url": ann.url, "port": ann.port, "pid": ann.pid,
                                             "repo": ann.repo, "warnings": list(ann.warnings)}) + "\n")
                sys.stdout.flush()
                announce_index_ready(ann.url.removesuffix("/mcp"), RepoLayout(root))
                return
            if report.changed:
                console.print(f"Initialised {root} ({', '.join(report.created)})")
            console.print(styled(("CodePlane serving", "green"), f" {ann.repo}"))
            console.print(styled("  MCP URL: ", (ann.url, "bold"), f"   pid {ann.pid}"))
            console.print(f"  Claude Code: {claude_command(ann.url)}")
            console.print("  Ctrl+C to stop.")
            follow_first_index(root, console)  # a cold start builds the index now: show how far it is

        try:
            serve(root, ctx.config, report.repo_id, port=chosen, on_ready=on_ready,
                  port_fallback=port is None and ctx.config.server.port is None)
        except CodePlaneError as exc:
            if exc.error.name != "SERVER_ALREADY_RUNNING":
                # Best effort: where the failure is an unwritable .codeplane/, this write fails too, and its
                # error must not replace the one that names the real cause.
                with contextlib.suppress(OSError):
                    write_atomic(ctx.layout.last_error_file, f"{exc}\n".encode())
            raise
    if not as_json:
        console.print("CodePlane stopped.")


def _as_option(exc: CodePlaneError, typed: dict[str, str]) -> CodePlaneError:
    """A config error about ``--port``/``--profile`` named as the option typed (it said "from --set
    server.port=70000", never typed): ``typed`` maps the ``--set`` form to the option's."""
    for said, option in typed.items():
        for key in ("source", "first_source"):
            if exc.details.get(key) == said:
                exc.details[key] = option
        exc.message = exc.message.replace(said, option)
    return exc
