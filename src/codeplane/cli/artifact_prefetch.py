"""``cpl up``'s side of starting from a shared index artifact: ``--index-from`` and a download progress bar.

The server adopts the artifact while it boots (``index/artifact_adopt.py``); downloading it first, here,
lets the terminal show progress. The download lands in the content-addressed cache the server's
adoption reads, so it happens once. A failed download is printed and handed to the server, whose adoption
refuses with it (recorded in ``/status`` and the log like any refusal) rather than fetching again (it would
only fail the same way): the index is built from disk.
"""

from __future__ import annotations

from pathlib import Path

from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

from codeplane.cli.output import console, err_console, styled
from codeplane.cli.repo_context import RepoContext
from codeplane.core.errors import CodePlaneError
from codeplane.index.artifact_adopt import fetch_configured, fetch_failed, should_adopt
from codeplane.index.artifact_fetch import is_url


def index_from_overrides(source: str | None) -> list[str]:
    """``--index-from`` as config overrides: the artifact (a local path made absolute) and ``always``."""
    if not source:
        return []
    value = source if is_url(source) else str(Path(source).expanduser().resolve())
    return [f"index.artifact={value}", "index.artifact_adopt=always"]


def prefetch_artifact(ctx: RepoContext, *, show_progress: bool) -> None:
    """Download a URL artifact the server is about to adopt (a failure is the adoption's refusal)."""
    config = ctx.config.index
    if not config.artifact or not is_url(config.artifact) or should_adopt(ctx.layout, config) is not None:
        return
    columns = (TextColumn("Fetching index artifact"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    try:
        with Progress(*columns, console=console, transient=True, disable=not show_progress) as bar:
            task = bar.add_task("fetch", total=None)
            fetch_configured(ctx.root, ctx.layout, config,
                             progress=lambda done, total: bar.update(task, completed=done, total=total))
    except CodePlaneError as exc:
        err_console.print(styled(("index artifact not used", "yellow"), f" ({exc.code} {exc.error.name}): "
                                 f"{exc.message}; building the index from disk"))
        fetch_failed(ctx.layout, exc)
