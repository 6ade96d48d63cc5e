"""``cpl index export``: write the repository's index as a shared artifact (``index/artifact_export.py``).

Meant for CI on the default branch: build (or catch up) the index, export it, upload the file and its
``.sha256`` sidecar; clients start from it with ``index.artifact`` or ``cpl up --index-from``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from codeplane.cli.output import cli_errors, console, emit, styled
from codeplane.cli.probe import probe
from codeplane.cli.repo_context import resolve
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.core.storage import probe_write, storage_error
from codeplane.repo.workspace import find_repo_root, initialize

index_app = typer.Typer(name="index", help="Index artifacts: export the index for other checkouts.",
                        no_args_is_help=True)


@index_app.command("export")
def export(
    # Required (the README always said so): a default in the current directory put the artifact into the work tree,
    # so the next export refused it as an untracked file.
    out: Annotated[Path, typer.Option("--out", help="Artifact file to write (a .tar.zst; FILE.sha256 beside it), "
                                                    "best outside the work tree.")],
    path: Annotated[Path | None, typer.Argument(help="Path inside the git work tree (default: cwd).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Export the index of HEAD's files as one deterministic artifact (builds or catches up the index first)."""
    from codeplane.index.artifact_export import export_artifact
    from codeplane.server.boot_index import build_index

    with cli_errors(as_json):
        root = find_repo_root(path or Path.cwd())
        _check_out(out.resolve(), root)
        initialize(root)
        ctx = resolve(root)
        service = build_index(ctx.root, ctx.config)
        if not probe(ctx.layout).running:  # a running server keeps the index current itself
            service.build()
        report = export_artifact(ctx.root, ctx.layout, service.indexers, out.resolve(),
                                 max_bytes=ctx.config.index.max_file_bytes)
    payload = {"ok": True, "out": str(report.out), "sha256": report.sha256, "size": report.size,
               "commit": report.commit, "files": report.files, "parts": len(report.parts)}

    def render() -> None:
        console.print(styled(("Exported", "green"), f" the index of {report.commit[:12]} ({report.files:,} files) "
                             f"to {report.out}: {report.size / 1e6:,.1f} MB"))
        console.print(f"  sha256 {report.sha256} (also in {report.out.name}.sha256)")

    emit(payload, as_json, render)


def _check_out(out: Path, root: Path) -> None:
    """1003 for a directory (the rename into place failed after the whole export), a directory that cannot be made
    or hold a file (the export failed as 9001 once written), and a path inside ``.codeplane/``
    (``--out .codeplane/index.db`` replaced the live index with the archive)."""
    if out.is_dir():
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"--out {out} is a directory; name the file to write",
                             details={"field": "out", "path": str(out)})
    refused: OSError | None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        refused = probe_write(out.parent)
    except OSError as exc:
        refused = exc
    if refused is not None:  # found before the whole export, not when it is renamed into place (9001)
        reason = refused.strerror or str(refused)
        raise storage_error(refused, doing="writing the artifact", path=out.parent) or CodePlaneError(
            ErrorCode.INVALID_ARGUMENTS, f"--out {out}: {out.parent} cannot hold a new file ({reason})",
            details={"field": "out", "path": str(out)})
    state = RepoLayout(root).state_dir.resolve()
    if out == state or state in out.parents:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"--out {out} is inside {state}, CodePlane's own state; "
                             "write the artifact elsewhere", details={"field": "out", "path": str(out)})
