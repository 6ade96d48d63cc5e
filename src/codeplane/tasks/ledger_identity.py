"""Which ledger this is, kept beside it, so a deleted ``ledger.db`` is noticed (issue 24).

Each ledger has an id (``ledger_meta.ledger_id``, set when it is created or first opened by this version).
``.codeplane/ledger.id`` repeats it with the creation time. A start that finds ``ledger.id`` but no
``ledger.db`` knows the previous ledger was deleted (``cpl clear`` removes both, so it raises nothing).
Written once per ledger, never per call.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path

from codeplane.core.atomic import write_atomic
from codeplane.core.clock import iso_utc, now_ms

ID_FILE = "ledger.id"
MISSING_OP = "ledger.missing"


def ledger_id(conn: sqlite3.Connection) -> tuple[str, str]:
    """(id, created_at) of the open ledger, assigning them on first use."""
    rows = dict(conn.execute("SELECT key, value FROM ledger_meta WHERE key IN ('ledger_id', 'created_at')"))
    if "ledger_id" not in rows:
        rows = {"ledger_id": uuid.uuid4().hex, "created_at": iso_utc(now_ms())}
        conn.executemany("INSERT OR REPLACE INTO ledger_meta (key, value) VALUES (?, ?)", sorted(rows.items()))
    return str(rows["ledger_id"]), str(rows.get("created_at", "unknown"))


def remembered(state_dir: Path) -> tuple[str, str] | None:
    """(id, created_at) from ``ledger.id``; ``None`` when there is none (or it does not read)."""
    try:
        data = json.loads((state_dir / ID_FILE).read_text(encoding="utf-8"))
        return str(data["ledger_id"]), str(data.get("created_at", "unknown"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember(state_dir: Path, ident: tuple[str, str]) -> None:
    if remembered(state_dir) != ident:
        body = {"ledger_id": ident[0], "created_at": ident[1]}
        write_atomic(state_dir / ID_FILE, (json.dumps(body, sort_keys=True) + "\n").encode())
