"""When a step reads the rows of many files at once: a cold index or a big checkout touches most files, and one
pass over a whole table then costs a fraction of looking its rows up file by file through an index, in chunks."""

from __future__ import annotations

import sqlite3
from collections.abc import Sized

#: Below this many files, chunked lookups are cheap whatever the size of the tree.
_MIN_FILES = 500


def covers_most(conn: sqlite3.Connection, file_ids: Sized) -> bool:
    """Whether ``file_ids`` are at least a quarter of all files (then a whole-table pass is the cheaper read)."""
    if len(file_ids) < _MIN_FILES:
        return False
    total = int(conn.execute("SELECT count(*) FROM st_file").fetchone()[0])
    return len(file_ids) * 4 >= total
