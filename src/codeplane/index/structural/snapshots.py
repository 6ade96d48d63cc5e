"""DefSnapshotRecord (§7.3.11): the definitions of every file an epoch changed, as they were at that epoch.

``semantic_diff`` in epoch mode compares two epochs: a file's state at epoch N is its latest snapshot at or
before N (``st_snapshot_file`` says whether it existed and how many defs it had, so empty and deleted files
are told apart from unchanged ones).
"""

from __future__ import annotations

import sqlite3

from codeplane.index.structural.store import BatchEffect


def record(conn: sqlite3.Connection, effect: BatchEffect) -> None:
    epoch = effect.epoch
    for path, file_id in sorted(effect.upserted.items()):
        conn.execute("DELETE FROM st_def_snapshot WHERE epoch_id = ? AND file_path = ?", (epoch, path))
        cursor = conn.execute(
            "INSERT INTO st_def_snapshot(epoch_id, file_path, kind, name, lexical_path, signature_hash, display_name, "
            "start_line, end_line, def_uid) SELECT ?, ?, kind, name, lexical_path, signature_hash, display_name, "
            "start_line, end_line, def_uid FROM st_def WHERE file_id = ? ORDER BY start_line, start_col, def_uid",
            (epoch, path, file_id))
        conn.execute("INSERT OR REPLACE INTO st_snapshot_file(epoch_id, file_path, deleted, def_count) "
                     "VALUES (?, ?, 0, ?)", (epoch, path, max(cursor.rowcount, 0)))
    for path in sorted(effect.deleted):
        conn.execute("DELETE FROM st_def_snapshot WHERE epoch_id = ? AND file_path = ?", (epoch, path))
        conn.execute("INSERT OR REPLACE INTO st_snapshot_file(epoch_id, file_path, deleted, def_count) "
                     "VALUES (?, ?, 1, 0)", (epoch, path))
