"""``cpl doctor`` checks for the index: ``index.db`` integrity, Tantivy agreeing with it, and the stores another
CodePlane version built (an upgrade: a warning, not a failure, since the next start rebuilds them by itself)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import tantivy

from codeplane.core.doctor import CheckResult, unwritable_check
from codeplane.core.layout import RepoLayout
from codeplane.core.storage import probe_write, storage_error
from codeplane.index.lexical import VERSION_FILE
from codeplane.index.lexical_check import damaged_segment_file
from codeplane.index.status_view import SchemaChange, schema_changes
from codeplane.repo.workspace import head_info

_FIX = ("`cpl doctor --fix` drops it, or start the server (`cpl up`): it repairs or rebuilds the index from "
        "disk automatically")


def check_index(root: Path) -> list[CheckResult]:
    layout = RepoLayout(root)
    if layout.index_db.exists() and not layout.index_db.is_file():
        return [CheckResult("index.db", False, "not a regular file", _FIX)]
    if not layout.index_db.is_file():
        return [CheckResult("index", True, "no index yet (built by `cpl init` or at the first `cpl up`)")]
    try:
        with sqlite3.connect(f"file:{layout.index_db}?mode=ro", uri=True) as conn:
            check = conn.execute("PRAGMA quick_check").fetchone()
            text_files = conn.execute("SELECT count(*) FROM files WHERE kind = 'text'").fetchone()[0]
            epoch = conn.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
            reconciled = conn.execute("SELECT value FROM meta WHERE key = 'reconciled_head'").fetchone()
    except sqlite3.DatabaseError as exc:
        blocked = probe_write(layout.state_dir)
        mapped = storage_error(blocked, doing="opening index.db", path=layout.index_db) if blocked else None
        if mapped is not None:  # a permissions problem, not damage: --fix must not drop it
            return [unwritable_check("index.db", mapped)]
        return [CheckResult("index.db", False, f"cannot be read: {exc}", _FIX)]
    if check is None or check[0] != "ok":
        return [CheckResult("index.db", False, f"integrity check failed: {check}", _FIX)]
    results = [CheckResult("index.db", True, f"epoch {epoch[0] if epoch else 0}, {text_files} text files"),
               *_head_check(root, reconciled[0] if reconciled else None)]
    changes = {change.store: change for change in schema_changes(layout.index_db, layout.tantivy_dir)}
    results += [_rebuilt_at_start(change) for store, change in changes.items() if store != "tantivy"]
    if "tantivy" in changes:  # its documents are of the old schema: counting them against the files says nothing
        return [*results, _rebuilt_at_start(changes["tantivy"])]
    version_file = layout.tantivy_dir / VERSION_FILE
    try:
        recorded = json.loads(version_file.read_text()).get("schema_version") if version_file.is_file() else None
        docs = int(tantivy.Index.open(str(layout.tantivy_dir)).searcher().num_docs)
    except (OSError, ValueError) as exc:
        return [*results, CheckResult("tantivy", False, f"cannot be opened: {exc}", _FIX)]
    damaged = damaged_segment_file(layout.tantivy_dir)
    if damaged is not None:
        return [*results, CheckResult("tantivy", False, damaged, _FIX)]
    if docs != text_files:
        return [*results, CheckResult("tantivy", False, f"{docs} documents for {text_files} text files", _FIX)]
    return [*results, CheckResult("tantivy", True, f"{docs} documents, schema {recorded}")]


def _rebuilt_at_start(change: SchemaChange) -> CheckResult:
    """A store of another version's schema: routine after an upgrade, so it passes (exit 0) with the line saying
    what the next start does; the ``fix`` column makes it a warning, and it never points at ``--fix``."""
    name = "tantivy" if change.store == "tantivy" else f"{change.store} facts"
    return CheckResult(name, True, change.detail(), "nothing to do: the next `cpl up` rebuilds it (as long as a "
                       "first build)")


def _head_check(root: Path, reconciled: str | None) -> list[CheckResult]:
    """Where the index was last reconciled against HEAD (spec §4.2 "commit hash matches Git HEAD"). A HEAD that moved
    while no server ran is no fault: the next start reindexes only what differs. So the check passes and says so."""
    if not reconciled:
        return []
    head = head_info(root).head
    if head == reconciled:
        return [CheckResult("index HEAD", True, f"reconciled at HEAD {reconciled[:12]}")]
    return [CheckResult("index HEAD", True, f"reconciled at {reconciled[:12]}, HEAD is now "
                        f"{head[:12] if head else '(unborn)'}: the next `cpl up` reindexes what changed")]
