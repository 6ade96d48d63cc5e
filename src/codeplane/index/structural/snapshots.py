"""DefSnapshotRecord (§7.3.11): the definitions of every file an epoch changed, as they were at that epoch.

``semantic_diff`` in epoch mode compares two epochs: a file's state at epoch N is its latest snapshot at or
before N (``st_snapshot_file`` says whether it existed and how many defs it had, so empty and deleted files
are told apart from unchanged ones).
"""

from __future__ import annotations

import sqlite3

from codeplane.index.structural.store import BatchEffect

_CHUNK = 500


def record(conn: sqlite3.Connection, effect: BatchEffect) -> None:
    """Snapshot the epoch's upserted files (rows in path, then position order) and mark its deleted ones. A few
    statements per chunk of 500 files, not per file: a cold index snapshots every file."""
    epoch = effect.epoch
    paths = sorted(effect.upserted)
    for start in range(0, len(paths), _CHUNK):
        part = paths[start:start + _CHUNK]
        marks = ",".join("?" * len(part))
        conn.execute(f"DELETE FROM st_def_snapshot WHERE epoch_id = ? AND file_path IN ({marks})", (epoch, *part))
        conn.execute(
            "INSERT INTO st_def_snapshot(epoch_id, file_path, kind, name, lexical_path, signature_hash, display_name, "
            "start_line, end_line, def_uid) SELECT ?, f.path, d.kind, d.name, d.lexical_path, d.signature_hash, "
            "d.display_name, d.start_line, d.end_line, d.def_uid FROM st_file f JOIN st_def d ON d.file_id = f.file_id "
            f"WHERE f.path IN ({marks}) ORDER BY f.path, d.start_line, d.start_col, d.def_uid", (epoch, *part))
        conn.execute(
            "INSERT OR REPLACE INTO st_snapshot_file(epoch_id, file_path, deleted, def_count) SELECT ?, f.path, 0, "
            f"(SELECT count(*) FROM st_def d WHERE d.file_id = f.file_id) FROM st_file f WHERE f.path IN ({marks})",
            (epoch, *part))
    for path in sorted(effect.deleted):
        conn.execute("DELETE FROM st_def_snapshot WHERE epoch_id = ? AND file_path = ?", (epoch, path))
        conn.execute("INSERT OR REPLACE INTO st_snapshot_file(epoch_id, file_path, deleted, def_count) "
                     "VALUES (?, ?, 1, 0)", (epoch, path))
