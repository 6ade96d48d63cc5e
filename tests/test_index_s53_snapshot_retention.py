"""Definition snapshots are bounded by the epoch history (QA49 F2): every save stored its file's definitions for
good (``index.db`` 12.8 MB after a day's work on click, 4.9 MB cold). ``snapshots.prune`` drops what no retained
epoch reads; the states from the floor on are unchanged, and the floor is the first epoch an epoch-mode diff takes.
A real index (structural tier) over a real repository, real edits."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from codeplane.analysis.epochs import check_range, version_at
from codeplane.core.config import CodePlaneConfig
from codeplane.core.errors import CodePlaneError
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural import snapshots
from codeplane.index.structural.indexer import StructuralIndexer
from tests.builders import make_repo


def _states(conn: sqlite3.Connection, epochs: range) -> dict[tuple[str, int], object]:
    return {(path, epoch): version_at(conn, path, epoch) for path in ("m.py", "gone.py") for epoch in epochs}


def test_pruning_keeps_every_retained_state_and_moves_the_floor(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"m.py": "def f():\n    return 0\n", "gone.py": "def g():\n    pass\n"})
    index = IndexService(repo, RepoLayout(repo), CodePlaneConfig().index.model_copy(update={"watch": False}))
    index.register_indexer(StructuralIndexer())
    index.start()
    try:
        assert index.wait_ready(60), index.error
        for n in range(1, 7):  # an epoch each: f's body, then a new function each time
            (repo / "m.py").write_text("def f():\n    return 0\n" + "".join(f"def h{k}():\n    pass\n"
                                                                          for k in range(n)))
            index.refresh_paths(["m.py"])
            if n == 3:
                (repo / "gone.py").unlink()
                index.refresh_paths(["gone.py"])
        last = index.epoch
    finally:
        index.stop()
    conn = sqlite3.connect(repo / ".codeplane" / "index.db")
    try:
        floor = last - 3
        kept = _states(conn, range(floor, last + 1))
        assert kept[("m.py", last)] is not None and kept[("m.py", floor)] != kept[("m.py", last)]
        before = conn.execute("SELECT count(*) FROM st_def_snapshot").fetchone()[0]
        snapshots.prune(conn, floor)
        conn.commit()
        assert _states(conn, range(floor, last + 1)) == kept  # every retained epoch reads as before
        assert conn.execute("SELECT count(*) FROM st_def_snapshot").fetchone()[0] < before
        check_range(conn, floor, last, last)
        with pytest.raises(CodePlaneError) as refused:
            check_range(conn, floor - 1, last, last)
        assert refused.value.code == 1003 and refused.value.details["first"] == floor
    finally:
        conn.close()
