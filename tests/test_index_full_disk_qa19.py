"""A full disk while the index records a write is named as a full disk (5010), not hidden behind a second error.

SQLite rolls a transaction back itself on ``SQLITE_FULL``; the publisher's own ``ROLLBACK`` then raised "cannot
rollback - no transaction is active", which is all the write's warning said. The full disk is SQLite's page limit
here (``PRAGMA max_page_count``: the same ``SQLITE_FULL`` a full file system gives), on the real index."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.config import MutationConfig
from codeplane.core.errors import CodePlaneError
from codeplane.mutation import CreateFile, MutationEngine
from tests.builders import indexed_repo


def test_a_full_index_database_is_reported_as_a_full_disk(tmp_path: Path) -> None:
    with indexed_repo(tmp_path / "r", {"a.py": "x = 1\n"}) as (root, index):
        conn = index._pipeline.store.conn  # the writer's connection: the page limit is per connection
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        big = "".join(f"def function_{n}(argument_{n}):\n    return argument_{n} + {n}\n\n" for n in range(3000))
        (root / "big.py").write_text(big)
        with pytest.raises(CodePlaneError) as full:
            index.refresh_paths(["big.py"])
        assert full.value.code == 5010 and "cannot rollback" not in full.value.message, full.value
        engine = MutationEngine(root, MutationConfig(), after_write=index.refresh_paths)
        delta = engine.apply([CreateFile(path="more.py", content=big.replace("function_", "other_"))])
        [warning] = [w for w in delta.warnings if "index refresh failed" in w]
        assert "5010 STORAGE_FULL" in warning and "cannot rollback" not in warning, warning
        conn.execute("PRAGMA max_page_count = 1073741823")
        index.refresh_paths(["big.py", "more.py"])  # room again: the index catches up
        listed = {e.path for e in index.list_files("", limit=50).entries}
        assert {"big.py", "more.py"} <= listed, listed


def test_ending_a_transaction_sqlite_already_ended_raises_nothing(tmp_path: Path) -> None:
    # What SQLite does on a full disk or an I/O error mid-transaction: it rolls back itself. The publisher's own
    # ROLLBACK then raised "cannot rollback - no transaction is active" in place of the full disk.
    import sqlite3

    from codeplane.index.store import rollback

    conn = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("BEGIN")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.execute("ROLLBACK")  # SQLite's automatic rollback
    rollback(conn)
    conn.execute("BEGIN")
    conn.execute("INSERT INTO t VALUES (2)")
    rollback(conn)
    assert not conn.in_transaction and conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0
