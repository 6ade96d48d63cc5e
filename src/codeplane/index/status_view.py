"""What the ``index`` section of ``/status`` and ``describe`` says of the pipeline and the watcher, and which stores
another CodePlane version built (``schema_changes``: the same line from ``cpl doctor``, offline ``cpl status`` and
the start that rebuilds them)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from codeplane.core.clock import iso_utc
from codeplane.index import progress as build_progress
from codeplane.index.lexical import LEXICAL_SCHEMA_VERSION, VERSION_FILE
from codeplane.index.structural.schema import SCHEMA_VERSION as STRUCTURAL_SCHEMA_VERSION

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


#: What each rebuilt store is called in the line that announces it.
_STORE_NAMES = {"tantivy": "Tantivy index", "structural": "structural facts"}


@dataclass(frozen=True)
class SchemaChange:
    """A store built by another CodePlane version (an upgrade, or a downgrade): the next start rebuilds it from disk
    (Tantivy) or drops and refills its tables (an indexer: every text file is extracted again, minutes on a big
    tree). ``recorded`` is the version on disk, ``"none"`` when the store does not record one."""

    store: str
    recorded: str
    current: int

    def line(self) -> str:
        return f"{_STORE_NAMES.get(self.store, f'{self.store} facts')} {self.detail()}"

    def detail(self) -> str:
        """The line without the store's name (``cpl doctor`` names it in its own column)."""
        older = self.recorded.isdigit() and int(self.recorded) < self.current
        newer = self.recorded.isdigit() and int(self.recorded) > self.current
        built = "an older CodePlane" if older else "a newer CodePlane" if newer else "another CodePlane version"
        return f"built by {built}: rebuilt at the next start (schema {self.recorded} -> {self.current})"

    def refilling(self) -> str:
        """An indexer's line at the start that refills it (log, terminal, ``/status``), as the Tantivy rebuild has."""
        name = _STORE_NAMES.get(self.store, f"{self.store} facts")
        return (f"{name} are rebuilt from disk: schema {self.recorded} -> {self.current} (every text file is extracted "
                "again)")


def schema_changes(index_db: Path, tantivy_dir: Path) -> list[SchemaChange]:
    """The stores under ``.codeplane/`` whose recorded schema is not this version's, read without writing (``cpl
    doctor``, ``cpl status`` with no server). A store not built yet is no change; an unreadable one is the
    integrity checks' business, not this. Tantivy first, then the indexers, by name."""
    changes: list[SchemaChange] = []
    version_file = tantivy_dir / VERSION_FILE
    if version_file.is_file() or (tantivy_dir / "meta.json").is_file():  # Tantivy's own metadata: an index is there
        try:
            recorded = json.loads(version_file.read_text()).get("schema_version") if version_file.is_file() else None
        except (OSError, ValueError, AttributeError):
            recorded = "unreadable"
        if recorded != LEXICAL_SCHEMA_VERSION:
            changes.append(SchemaChange("tantivy", "none" if recorded is None else str(recorded),
                                        LEXICAL_SCHEMA_VERSION))
    if not index_db.is_file():
        return changes
    try:
        with sqlite3.connect(f"file:{index_db}?mode=ro", uri=True, timeout=0.5) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'indexer.structural.schema'").fetchone()
            files = conn.execute("SELECT count(*) FROM files WHERE kind = 'text'").fetchone()[0] if row is None else 0
    except sqlite3.Error:
        return changes
    # No version and no text files: nothing extracted yet (a first build), so nothing to rebuild either.
    if (row is None and files) or (row is not None and str(row[0]) != str(STRUCTURAL_SCHEMA_VERSION)):
        changes.append(SchemaChange("structural", "none" if row is None else str(row[0]), STRUCTURAL_SCHEMA_VERSION))
    return changes
