"""A structural schema upgrade refills the facts of every indexed file, a binary or oversized one too (s56, QA60).

The refill after a schema bump re-derived text files only, while a build gives every indexed file its fact row
(no text for a binary: ``map_repo`` lists it from there). After any upgrade ``map_repo`` showed 130 of click's 135
files (its images gone) until each changed, and an artifact exported from such an index differed from a fresh one.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from codeplane.index.structural.schema import SCHEMA_VERSION
from tests.builders import make_repo
from tests.index_helpers import selecting


def _facts(repo: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:
        return sorted(conn.execute("SELECT path, language FROM st_file"))


def test_an_upgraded_index_keeps_the_facts_of_binary_and_oversized_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "def f():\n    return 1\n", "logo.png": bytes(range(256)) * 8,
                                         "big.py": "x = 1\n" * 300_000, "docs/b.md": "# b\n"})
    with selecting(repo):
        fresh = _facts(repo)
    assert {"logo.png", "big.py", "a.py", "docs/b.md"} <= {path for path, _ in fresh}
    with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:  # as an index of the previous schema records it
        keys = [k for (k,) in conn.execute("SELECT key FROM meta WHERE key LIKE 'indexer.%.schema'")]
        assert keys
        updated = conn.execute("UPDATE meta SET value = ? WHERE key LIKE 'indexer.%.schema' AND value = ?",
                               (str(SCHEMA_VERSION - 1), str(SCHEMA_VERSION))).rowcount
        assert updated == 1, keys
    with selecting(repo):
        assert _facts(repo) == fresh
