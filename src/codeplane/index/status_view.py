"""What the ``index`` section of ``/status`` and ``describe`` says of the pipeline and the watcher."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from codeplane.core.clock import iso_utc
from codeplane.index import progress as build_progress

if TYPE_CHECKING:
    from codeplane.index.pipeline import IndexPipeline
    from codeplane.repo.watcher import RepoWatcher


def counts_section(pipeline: IndexPipeline) -> dict[str, object]:
    """The epoch and what the index holds: files by kind, bytes, languages."""
    counts = pipeline.counts
    return {
        "epoch": pipeline.epoch,
        "file_count": counts.files,
        "indexed_files": counts.text,
        "binary_files": counts.binary,
        "oversized_files": counts.oversized,
        **({"unnamed_files": len(pipeline.unnamed), "unnamed_examples": list(pipeline.unnamed[:5])}
           if pipeline.unnamed else {}),
        "symlinks": counts.symlink,
        "bytes": counts.bytes,
        "languages": counts.languages,
        "primary_language": counts.primary_language,
    }


def reconcile_section(pipeline: IndexPipeline, root: Path) -> dict[str, object]:
    """The running build's progress and when the index last met the disk (a full reconcile, or any update)."""
    last = pipeline.last_reconcile
    update = pipeline.last_update
    return {
        "progress": build_progress.status(root),
        "last_reconcile": None if last is None else {
            "at": iso_utc(last.at_ms), "duration_ms": last.duration_ms, "reason": last.reason,
            "added": last.added, "modified": last.modified, "deleted": last.deleted,
            "renamed": len(last.renamed), "touched": last.touched, "epoch": last.epoch},
        "last_update": None if update is None else {
            "at": iso_utc(update.at_ms), "reason": update.reason, "full": update.full, "epoch": update.epoch},
    }


def watcher_section(watcher: RepoWatcher | None) -> dict[str, object]:
    """The watcher's state, and its last error and restarts when it has had any."""
    if watcher is None:
        return {"watcher": "disabled"}
    return {"watcher": watcher.state, **({"watcher_error": watcher.error} if watcher.error else {}),
            **({"watcher_restarts": watcher.restarts} if watcher.restarts else {})}
