"""A write's synchronous refresh does work proportional to what it changed (S54: a 20-file edit of Django).

What an edit leaves as it was keeps its rows (definitions, anchor groups), the file counts follow the epoch
without a recount of the table, the WAL copy-back is left to the indexer thread, and the Tantivy commit runs
beside the structural finish even for a small epoch; each still ends where a cold build or a full count ends.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.facts_api import FileChange
from codeplane.index.freshness import PendingChanges
from codeplane.index.pipeline import IndexCounts, IndexPipeline
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from tests.builders import git, make_repo
from tests.index_helpers import all_hits, running_index
from tests.structural_tree import StructuralTree

LIB = ("def keep_a(x):\n    return x + 1\n\n\ndef edited(y):\n    return y * 2\n\n\n"
       "class Holder:\n    def put(self, item):\n        self.item = item\n\n\ndef keep_b():\n    return 3\n")


def _defs(tree: StructuralTree) -> dict[str, tuple[object, ...]]:
    """Every definition by uid: (rowid, path, qualified name, lines)."""
    return {uid: (rowid, path, qualified, sl, el) for uid, rowid, path, qualified, sl, el in tree.conn.execute(
        "SELECT d.def_uid, d.rowid, f.path, d.qualified_name, d.start_line, d.end_line FROM st_def d "
        "JOIN st_file f ON f.file_id = d.file_id")}


def _cold_defs(files: dict[str, str]) -> set[tuple[object, ...]]:
    cold = StructuralTree()
    try:
        cold.apply(files)
        return {(*v[1:], k) for k, v in _defs(cold).items()}
    finally:
        cold.conn.close()


def test_an_edit_keeps_the_definition_rows_that_came_out_the_same() -> None:
    tree = StructuralTree()
    try:
        # (a file indexed after it holds the last rows: ids given again to a file's rows would be new ones)
        files = {"pkg/__init__.py": "", "pkg/lib.py": LIB, "pkg/zz.py": "def last():\n    return 0\n"}
        tree.apply(files)
        before = _defs(tree)
        edited = LIB.replace("return y * 2", "return y * 3").replace("def keep_b", "def renamed_b")
        tree.apply({"pkg/lib.py": edited})
        after = _defs(tree)
        kept = {uid for uid in before if uid in after}
        assert kept and all(after[uid] == before[uid] for uid in kept)  # same row, same id, same module name
        assert {v[2] for v in after.values()} >= {"pkg.lib.renamed_b", "pkg.lib.Holder.put", "pkg.lib.edited"}
        assert {(*v[1:], k) for k, v in after.items()} == _cold_defs({**files, "pkg/lib.py": edited})
    finally:
        tree.conn.close()


def test_definitions_kept_through_a_line_inserted_above_and_a_new_module_name_end_like_a_cold_build() -> None:
    tree = StructuralTree()
    try:
        files = {"pkg/lib.py": LIB, "pkg/other.py": "def helper():\n    return 1\n"}
        tree.apply(files)
        assert {v[2] for v in _defs(tree).values()} >= {"lib.keep_a", "other.helper"}  # no package yet
        tree.apply({"pkg/lib.py": "# moved down\n" + LIB})
        tree.apply({"pkg/__init__.py": ""})  # every module below is renamed, its rows kept
        files.update({"pkg/lib.py": "# moved down\n" + LIB, "pkg/__init__.py": ""})
        assert {(*v[1:], k) for k, v in _defs(tree).items()} == _cold_defs(files)
        assert "pkg.other.helper" in {v[2] for v in _defs(tree).values()}
    finally:
        tree.conn.close()


def test_anchor_groups_an_edit_leaves_as_they_were_keep_their_rows() -> None:
    tree = StructuralTree()
    try:
        crowd = {f"app/crowd_{n:02}.py": "def f(obj):\n" + "".join(f"    obj.put({i})\n" for i in range(3))
                 for n in range(12)}
        crowd["app/crowd_00.py"] += "    obj.zap()\n"  # a group the edits never touch, holding the last id
        tree.apply(crowd)
        groups = set(tree.conn.execute("SELECT group_id, member_token, total_count, exemplar_ids FROM st_anchor_group"))
        assert groups
        tree.apply({"app/crowd_05.py": crowd["app/crowd_05.py"] + "\n\nUNRELATED = 1\n"})
        assert set(tree.conn.execute(
            "SELECT group_id, member_token, total_count, exemplar_ids FROM st_anchor_group")) == groups
        tree.apply({"app/crowd_05.py": "def f(obj):\n    obj.take(1)\n"})  # put loses 3 refs, take is new
        now = {t: c for t, c in tree.conn.execute("SELECT member_token, total_count FROM st_anchor_group")}
        assert now == {"put": 33, "take": 1, "zap": 1}
        assert {g for g, t, *_ in groups if t == "put"} == {g for (g,) in tree.conn.execute(
            "SELECT group_id FROM st_anchor_group WHERE member_token = 'put'")}  # updated in place
    finally:
        tree.conn.close()


def _counted(pipeline: IndexPipeline) -> IndexCounts:
    """What a full count of the file table gives (``IndexPipeline._refresh_counts``)."""
    conn = pipeline.store.conn
    kinds = dict(conn.execute("SELECT kind, count(*) FROM files GROUP BY kind").fetchall())
    languages = dict(conn.execute("SELECT language, count(*) FROM files WHERE language IS NOT NULL "
                                  "GROUP BY language ORDER BY language").fetchall())
    return IndexCounts(sum(kinds.values()), kinds.get("text", 0), kinds.get("binary", 0), kinds.get("oversized", 0),
                       kinds.get("symlink", 0), conn.execute("SELECT coalesce(sum(size), 0) FROM files").fetchone()[0],
                       languages)


def test_the_file_counts_follow_every_kind_of_epoch_as_a_full_count_would(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.md": "# b\n", "c.go": "package c\n"})
    pipeline = IndexPipeline(repo, RepoLayout(repo), IndexConfig(watch=False, max_file_bytes=4096), PendingChanges())
    pipeline.open()
    try:
        pipeline.reconcile("init")
        assert pipeline.counts == _counted(pipeline)
        steps: list[tuple[list[str], dict[str, bytes | None]]] = [
            (["a.py"], {"a.py": b"x = 1\ny = 2\n"}),  # modified, bigger
            (["d.py", "e.bin"], {"d.py": b"z = 3\n", "e.bin": b"\x00\x01\x02" * 10}),  # added, text and binary
            (["b.md"], {"b.md": None}),  # deleted: its language goes from the counts
            (["c.go", "f.go"], {"c.go": None, "f.go": b"package c\n"}),  # renamed
            (["big.txt"], {"big.txt": b"y" * 5000}),  # oversized
            (["a.py"], {"a.py": b"x = 1\r\ny = 2\r\n"}),
        ]
        for paths, writes in steps:
            for path, data in writes.items():
                if data is None:
                    (repo / path).unlink()
                else:
                    (repo / path).write_bytes(data)
            pipeline.refresh(paths, "refresh")
            assert pipeline.counts == _counted(pipeline), paths
        assert "markdown" not in pipeline.counts.languages and pipeline.counts.oversized == 1
    finally:
        pipeline.close()


def test_a_write_refresh_commits_without_copying_its_wal_back(tmp_path: Path) -> None:
    """A write tool's refresh (reason ``refresh``) leaves the WAL copy-back to ``checkpoint`` (the indexer thread
    runs it once idle), even past the automatic checkpoint's 1,000 pages; what it wrote is readable meanwhile."""
    def body(tag: str) -> str:
        return "".join(f"def f_{i}_{tag}(a, b):\n    return g_{i}(a) + b.h_{i}\n\n\n" for i in range(300))

    files = [f"m{n:02}.py" for n in range(64)]
    repo = make_repo(tmp_path / "repo", {path: body("a") for path in files})
    pipeline = IndexPipeline(repo, RepoLayout(repo), IndexConfig(watch=False), PendingChanges())
    pipeline.indexers.append(StructuralIndexer(workers=1))
    pipeline.open()
    try:
        pipeline.reconcile("init")
        pipeline.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        for path in files:
            (repo / path).write_text(body("b"))
        db, wal = repo / ".codeplane" / "index.db", repo / ".codeplane" / "index.db-wal"
        before = db.stat().st_mtime_ns, db.stat().st_size
        pipeline.refresh(files, "refresh")
        assert wal.stat().st_size > 1000 * 4096
        assert (db.stat().st_mtime_ns, db.stat().st_size) == before
        with pipeline.store.read() as reader:
            assert reader.execute("SELECT count(*) FROM st_def WHERE name = 'f_7_b'").fetchone()[0] == len(files)
        assert pipeline.store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
        pipeline.checkpoint()
        assert (db.stat().st_mtime_ns, db.stat().st_size) != before and wal.stat().st_size == 0
    finally:
        pipeline.close()


class FailingFinish:
    """An indexer whose end-of-epoch step fails once when armed (after the Tantivy commit may have run)."""

    name = "s54_failing_finish"
    schema_version = 1

    def __init__(self) -> None:
        self.armed = False

    def create_schema(self, conn: sqlite3.Connection) -> None:
        pass

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        pass

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        pass

    def begin_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        pass

    def finish_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        if self.armed:
            self.armed = False
            raise RuntimeError("finish failed")


def test_a_small_epoch_whose_finish_fails_beside_the_tantivy_commit_is_rolled_back_and_repaired(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "before_token = 1\n", "b.py": "other = 2\n"})
    failing = FailingFinish()
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    service.register_indexer(failing)
    service.start()
    try:
        assert service.wait_ready(60)
        (repo / "a.py").write_text("after_token = 1\n")
        failing.armed = True
        with pytest.raises(RuntimeError, match="finish failed"):
            service.refresh_paths(["a.py"])
        with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:  # SQLite kept the epoch before
            assert conn.execute("SELECT count(*) FROM epochs").fetchone()[0] == 1
        service.refresh_paths(["a.py"])  # the next publish re-derives what Tantivy may hold ahead
        assert {h.path for h in all_hits(service, "after_token")} == {"a.py"}
        assert all_hits(service, "before_token") == []
    finally:
        service.stop()
    git(repo, "status")  # the repository itself is untouched by the failure
    with running_index(repo) as index:
        assert {h.path for h in all_hits(index, "after_token")} == {"a.py"}
        assert index.status()["file_count"] == 2
