"""The index as ``cpl status`` shows it when no server runs: read straight from ``index.db`` (read-only)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from codeplane.core.clock import iso_utc

#: How long to wait for a writer's lock. Only a first build holds one for long (it writes straight into the file,
#: ``IndexStore.leave_wal``); every other writer is in WAL mode, where readers never wait.
_LOCKED_WAIT_SEC = 0.5


def index_overview(db_path: Path) -> dict[str, object]:
    """Epoch, file counts and the last published epoch; ``state`` is ``not_built`` without an index."""
    if not db_path.is_file():
        return {"state": "not_built", "note": "no index yet; `cpl init` or `cpl up` builds it"}
    try:
        with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=_LOCKED_WAIT_SEC) as conn:
            if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
                # A first build stopped before its schema was committed (rolled back): nothing built yet.
                return {"state": "not_built", "note": "no index yet (a first build was stopped); `cpl init` or "
                                                      "`cpl up` builds it"}
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            kinds = dict(conn.execute("SELECT kind, count(*) FROM files GROUP BY kind").fetchall())
            languages = dict(conn.execute(
                "SELECT language, count(*) FROM files WHERE language IS NOT NULL GROUP BY language "
                "ORDER BY language").fetchall())
            last = conn.execute("SELECT id, published_ms, reason, duration_ms FROM epochs "
                                "ORDER BY id DESC LIMIT 1").fetchone()
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY:
            return {"state": "building", "note": "another process (`cpl init`) is writing its first build into "
                                                 "index.db; its figures show once it is published"}
        return {"state": "unreadable", "error": str(exc)}
    except sqlite3.DatabaseError as exc:
        return {"state": "unreadable", "error": str(exc)}
    return {
        "state": "stopped",
        "epoch": int(meta.get("epoch", 0)),
        "source": json.loads(meta["origin"]) if "origin" in meta else {"kind": "local"},
        "file_count": sum(kinds.values()),
        "indexed_files": kinds.get("text", 0),
        "binary_files": kinds.get("binary", 0),
        "oversized_files": kinds.get("oversized", 0),
        "languages": languages,
        **({"head": meta["reconciled_head"]} if meta.get("reconciled_head") else {}),
        "last_epoch": None if last is None else {
            "epoch": last[0], "at": iso_utc(last[1]), "reason": last[2], "duration_ms": last[3]},
    }
