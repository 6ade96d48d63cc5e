"""Building (or catching up) the index from the CLI, with a progress bar and a summary (``cpl init``).

When a server runs for the repository it owns the index (single writer) and keeps it current, so the
CLI does not touch it and says so.
"""

from __future__ import annotations

import time
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from codeplane.cli.output import console, styled
from codeplane.cli.probe import probe
from codeplane.cli.repo_context import RepoContext
from codeplane.index.service_models import BuildSummary
from codeplane.server.boot_index import build_index


def _summary(result: BuildSummary, seconds: float) -> dict[str, Any]:
    counts, report = result.counts, result.report
    return {
        "built": True, "epoch": report.epoch, "files": counts.files, "indexed_files": counts.text,
        "bytes": counts.bytes, "languages": counts.languages, "primary_language": counts.primary_language,
        "skipped_binary": counts.binary, "skipped_oversized": counts.oversized, "symlinks": counts.symlink,
        "added": report.added, "modified": report.modified, "deleted": report.deleted,
        "renamed": len(report.renamed), "seconds": round(seconds, 3), "warnings": list(result.warnings),
    }


def build_first_index(ctx: RepoContext, *, show_progress: bool) -> dict[str, Any]:
    """Reconcile the whole tree into the index (cold build or catch-up); a summary for output."""
    if probe(ctx.layout).running:
        return {"built": False, "reason": "a server is running for this repository and keeps the index current"}
    service = build_index(ctx.root, ctx.config)
    started = time.perf_counter()
    if not show_progress:
        result = service.build()
        return _summary(result, time.perf_counter() - started)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rate]} files/s"), TimeElapsedColumn(), TextColumn("ETA"),
               TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("Scanning files", total=None, rate="-")

        def on_progress(done: int, total: int) -> None:
            elapsed = max(time.perf_counter() - started, 1e-6)
            label = "Committing index" if done >= total else "Indexing"
            bar.update(task, completed=done, total=max(total, 1), description=label, rate=f"{done / elapsed:,.0f}")

        result = service.build(progress=on_progress)
    return _summary(result, time.perf_counter() - started)


def render_summary(summary: dict[str, Any]) -> None:
    if not summary.get("built"):
        console.print(f"Index: not rebuilt ({summary.get('reason')}).")
        return
    languages = ", ".join(f"{name} {count}" for name, count in
                          sorted(summary["languages"].items(), key=lambda kv: (-kv[1], kv[0]))[:6]) or "none"
    console.print(styled(("Index ready", "green"), f" (epoch {summary['epoch']}): {summary['files']:,} files, "
                         f"{summary['bytes'] / 1e6:,.1f} MB, {summary['indexed_files']:,} content-indexed in "
                         f"{summary['seconds']:.2f} s"))
    console.print(f"  languages: {languages}")
    console.print(f"  skipped content: {summary['skipped_binary']} binary, {summary['skipped_oversized']} oversized, "
                  f"{summary['symlinks']} symlinks")
    if summary["added"] or summary["modified"] or summary["deleted"]:
        console.print(f"  changes: +{summary['added']} ~{summary['modified']} -{summary['deleted']} "
                      f"(renamed {summary['renamed']})")
    for warning in summary["warnings"]:
        console.print(styled("  ", ("warning", "yellow"), f": {warning}"))
