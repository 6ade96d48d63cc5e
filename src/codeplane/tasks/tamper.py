"""Signs, looked for when the ledger opens, that ``ledger.db`` was edited behind CodePlane's back.

The append-only triggers and the hash chain are the ledger's evidence. Someone who drops the triggers and edits
a row with ``sqlite3`` leaves both broken; opening the ledger recreates the triggers (``schema.apply_schema``),
which would erase the first sign and let the server append to a broken chain without a word. So before the
schema is applied the missing triggers are named, and the newest rows' chain is checked (a bounded tail: the
whole chain is ``cpl doctor``'s); what is found is logged, shown in ``/status`` and recorded as a row of the
chain itself, so it outlives the next open.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from codeplane.tasks.chain import HASHED_COLUMNS, row_hash
from codeplane.tasks.schema import TRIGGERS

TAMPER_OP = "ledger.tamper_seen"
#: Rows checked at open: enough to see an edit of recent history, few enough to cost nothing (~1 ms).
TAIL_ROWS = 500


def missing_triggers(conn: sqlite3.Connection) -> list[str]:
    """The append-only triggers an existing ledger lacks (none for a new file: its schema is about to be made)."""
    names = {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
    if "operations" not in names:
        return []
    return [t for t in TRIGGERS if t not in names]


def broken_tail(conn: sqlite3.Connection) -> str | None:
    """Where the newest :data:`TAIL_ROWS` rows break the chain (a row whose hash is not its content's, or a link
    to a hash that is not the previous row's), or ``None``."""
    columns = ", ".join((*HASHED_COLUMNS, "prev_hash", "row_hash"))
    rows = conn.execute(f"SELECT {columns} FROM operations ORDER BY op_id DESC LIMIT ?", (TAIL_ROWS,)).fetchall()
    width = len(HASHED_COLUMNS)
    op_id = HASHED_COLUMNS.index("op_id")
    previous: tuple[Any, ...] | None = None
    for row in reversed(rows):
        values, prev_hash, stored = tuple(row[:width]), row[width], row[width + 1]
        if row_hash(str(prev_hash), values) != stored:
            return f"row op_id={values[op_id]} does not match its hash (the row was modified)"
        if previous is not None and (prev_hash != previous[width + 1] or values[op_id] != int(previous[op_id]) + 1):
            return f"row op_id={values[op_id]} does not follow op_id={previous[op_id]} (rows were edited or deleted)"
        previous = tuple(row)
    return None
