"""Which ledger this is, kept beside it, so a deleted ``ledger.db`` is noticed (issue 24).

Each ledger has an id (``ledger_meta.ledger_id``, set when it is created or first opened by this version).
``.codeplane/ledger.id`` repeats it with the creation time. A start that finds ``ledger.id`` but no
``ledger.db`` knows the previous ledger was deleted (``cpl clear`` removes both, so it raises nothing).
Written once per ledger, never per call.

A ``ledger.db`` that never became a ledger is no damage either (:func:`never_initialised`): a first start that failed
(a full disk) between SQLite creating the file and the schema's commit left it empty; it holds no row, so the next
start makes the ledger in it rather than quarantining it as evidence the user must acknowledge.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from pathlib import Path

from codeplane.core.atomic import write_atomic
from codeplane.core.clock import iso_utc, now_ms
from codeplane.core.stores import sqlite_problem
from codeplane.tasks.ledger_head import HEAD_FILE

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


def never_initialised(path: Path) -> bool:
    """True for a ``ledger.db`` that holds no chain and never held one: empty, or a schema without a ledger id, a
    task or an operation row (what an interrupted first open leaves), and no chain was ever recorded beside it
    (``ledger.id``, a non-empty ``ledger.head``). Reads only; ``False`` whenever in doubt (unreadable: damage)."""
    state_dir = path.parent
    if (state_dir / ID_FILE).exists() or _has_bytes(state_dir / HEAD_FILE):
        return False
    if path.is_symlink() or not path.is_file():
        return False
    if path.stat().st_size == 0 and not _has_bytes(Path(f"{path}-wal")):
        return True
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return False
    try:
        tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "ledger_meta" in tables and conn.execute(
                "SELECT 1 FROM ledger_meta WHERE key = 'ledger_id'").fetchone() is not None:
            return False
        return not any(conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None
                       for table in ("operations", "tasks") if table in tables)
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def ledger_problem(path: Path) -> str | None:
    """Why ``ledger.db`` cannot be trusted as a database, or ``None``: a missing file is no problem, nor is one that
    :func:`never_initialised` (the open makes the ledger in it). Raises the storage error when it cannot be opened
    because its directory cannot be written (``stores.sqlite_problem``)."""
    return None if never_initialised(path) else sqlite_problem(path)


def _has_bytes(path: Path) -> bool:
    try:
        return os.stat(path).st_size > 0
    except OSError:
        return False
