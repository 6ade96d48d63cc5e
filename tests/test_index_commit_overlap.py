"""A big epoch commits Tantivy while the indexers finish it; a failure there still leaves SQLite and Tantivy in step."""

from __future__ import annotations

import gc
import sqlite3
import time
from pathlib import Path

import pytest

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.epochs import CHUNK
from codeplane.index.facts_api import FileChange
from codeplane.index.freshness import PendingChanges
from codeplane.index.pipeline import IndexPipeline
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from tests.builders import make_repo
from tests.index_helpers import all_hits, running_index


class FailingFinish:
    """An indexer whose end-of-epoch step fails (once), after Tantivy may already have committed."""

    name = "failing_finish"
    schema_version = 1

    def __init__(self) -> None:
        self.fail = True

    def create_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS finished (epoch INTEGER)")

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS finished")

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        pass

    def begin_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        pass

    def finish_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        if self.fail:
            self.fail = False
            raise RuntimeError("finish failed")
        conn.execute("INSERT INTO finished VALUES (?)", (epoch,))


def test_a_failed_finish_after_the_overlapped_commit_is_repaired(tmp_path: Path) -> None:
    count = CHUNK + 5
    repo = make_repo(tmp_path / "repo", {f"m{n:03}.py": f"shared_word = {n}\n" for n in range(count)})
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    service.register_indexer(FailingFinish())
    with pytest.raises(RuntimeError, match="finish failed"):
        service.build()
    with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 0  # the epoch rolled back
    with running_index(repo) as index:  # Tantivy went ahead; the in-flight marker brings it back in step
        hits = all_hits(index, "shared_word")
        assert len(hits) == count and len({h.path for h in hits}) == count
        assert index.status()["file_count"] == count


def _big_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {f"m{n:03}.py": f"word_{n} = {n}\n" * 50 for n in range(CHUNK + 5)})


def _rewrite_all(repo: Path) -> None:
    """A second big epoch (a checkout rewriting every file), which goes through the WAL like every later epoch."""
    for n in range(CHUNK + 5):
        (repo / f"m{n:03}.py").write_text(f"word_{n} = {n}\nagain_{n} = {n}\n" * 50)


def test_a_first_build_is_written_straight_into_the_file(tmp_path: Path) -> None:
    """A first build writes its pages once, into ``index.db`` (a rollback journal), not into a WAL holding the
    whole database that must then be copied back; later epochs are in WAL mode again."""
    repo = _big_repo(tmp_path)
    pipeline = IndexPipeline(repo, RepoLayout(repo), IndexConfig(watch=False), PendingChanges())
    pipeline.open()
    db, wal = repo / ".codeplane" / "index.db", repo / ".codeplane" / "index.db-wal"
    try:
        pipeline.reconcile("test")
        assert db.stat().st_size > 16 * 4096  # the rows are in the file itself
        assert not wal.exists() or wal.stat().st_size == 0
        assert not Path(f"{db}-journal").exists()
        assert pipeline.store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert pipeline.store.conn.execute("SELECT count(*) FROM files").fetchone()[0] == CHUNK + 5
        _rewrite_all(repo)
        pipeline.reconcile("test")
        assert wal.stat().st_size > 0  # the second big epoch: through the WAL, copied back later
    finally:
        pipeline.close()


def test_a_first_build_beside_an_open_reader_stays_in_wal_mode(tmp_path: Path) -> None:
    """SQLite will not leave WAL mode while another connection has the file open: the first build then goes
    through the WAL, as every epoch did before, and is just as whole."""
    repo = _big_repo(tmp_path)
    pipeline = IndexPipeline(repo, RepoLayout(repo), IndexConfig(watch=False), PendingChanges())
    pipeline.open()
    wal = repo / ".codeplane" / "index.db-wal"
    try:
        with pipeline.store.read() as reader:  # a reader's connection stays open after its snapshot ends
            assert reader.execute("SELECT count(*) FROM files").fetchone()[0] == 0
        pipeline.reconcile("test")
        assert wal.stat().st_size > 0
        with pipeline.store.read() as reader:
            assert reader.execute("SELECT count(*) FROM files").fetchone()[0] == CHUNK + 5
    finally:
        pipeline.close()


def test_a_big_epoch_gives_the_wal_space_back(tmp_path: Path) -> None:
    repo = _big_repo(tmp_path)
    with running_index(repo) as index:  # the writer connection stays open (closing it would remove the WAL anyway)
        wal = repo / ".codeplane" / "index.db-wal"
        _rewrite_all(repo)
        index.reconcile()  # the second big epoch, through the WAL
        assert {h.path for h in all_hits(index, "again_7")} == {"m007.py"}
        # The indexer thread copies it back once it finds nothing else to do: poll for it, bounded.
        deadline = time.monotonic() + 10
        while wal.exists() and wal.stat().st_size > 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not wal.exists() or wal.stat().st_size == 0


def test_a_big_epoch_commits_before_copying_its_wal_back(tmp_path: Path) -> None:
    """The COMMIT of a big epoch leaves the WAL in place (no automatic checkpoint inside it); ``checkpoint``
    copies it back and empties it, and restores the automatic checkpoint for later commits."""
    repo = _big_repo(tmp_path)
    pipeline = IndexPipeline(repo, RepoLayout(repo), IndexConfig(watch=False), PendingChanges())
    pipeline.open()
    try:
        pipeline.reconcile("test")
        _rewrite_all(repo)
        pipeline.reconcile("test")
        wal = repo / ".codeplane" / "index.db-wal"
        assert wal.stat().st_size > 0
        assert pipeline.store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
        pipeline.checkpoint()
        assert wal.stat().st_size == 0
        pipeline.checkpoint()  # nothing due: a no-op
        assert wal.stat().st_size == 0
    finally:
        pipeline.close()


@pytest.mark.parametrize("reason", ["startup", "watcher"])
def test_the_startup_epoch_leaves_its_wal_copy_back_until_after_ready(tmp_path: Path, reason: str) -> None:
    """/ready waits for the startup reconcile: its COMMIT leaves even a mid-sized WAL (a clone some hundred files
    ahead of an index artifact) for ``checkpoint``, like a big epoch; any other epoch of that size checkpoints in
    its COMMIT as before."""
    def body(tag: str) -> str:
        return "".join(f"def f_{i}_{tag}(a, b):\n    return g_{i}(a) + b.h_{i}\n\n\n" for i in range(300))

    files = [f"m{n:02}.py" for n in range(CHUNK // 4)]
    repo = make_repo(tmp_path / "repo", {path: body("a") for path in files})
    pipeline = IndexPipeline(repo, RepoLayout(repo), IndexConfig(watch=False), PendingChanges())
    pipeline.indexers.append(StructuralIndexer(workers=1))
    pipeline.open()
    try:
        pipeline.reconcile("init")
        pipeline.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        for path in files:  # a checkout rewriting every file: fewer than a big epoch's, more than 1000 WAL pages
            (repo / path).write_text(body("b"))
        db, wal = repo / ".codeplane" / "index.db", repo / ".codeplane" / "index.db-wal"
        before = db.stat().st_mtime_ns, db.stat().st_size
        pipeline.reconcile(reason)
        assert wal.stat().st_size > 1000 * 4096  # past the automatic checkpoint's threshold
        assert ((db.stat().st_mtime_ns, db.stat().st_size) == before) == (reason == "startup")
        pipeline.checkpoint()
        assert (db.stat().st_mtime_ns, db.stat().st_size) != before
        assert (wal.stat().st_size == 0) == (reason == "startup")  # only a deferred copy-back truncates the WAL
        assert pipeline.store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    finally:
        pipeline.close()


def test_a_background_copy_back_lets_epochs_publish_and_ends_truncated(tmp_path: Path) -> None:
    """The server copies a big epoch's WAL back on a thread of its own, holding no writer lock: an epoch published
    meanwhile (a checkout right after a cold build) commits, and ``close`` waits for the copy, then the WAL is
    empty and both epochs' contents are in the database."""
    repo = _big_repo(tmp_path)
    pipeline = IndexPipeline(repo, RepoLayout(repo), IndexConfig(watch=False), PendingChanges())
    pipeline.open()
    wal = repo / ".codeplane" / "index.db-wal"
    try:
        pipeline.reconcile("test")
        _rewrite_all(repo)
        pipeline.reconcile("test")
        assert wal.stat().st_size > 0
        pipeline.checkpoint(background=True)
        (repo / "m001.py").write_text("after_copy_token = 1\n")
        pipeline.refresh(["m001.py"], "test")  # never waits for the copy: it holds no writer lock
        pipeline.checkpoint(background=True)  # nothing due any more: a no-op, not a second copy
    finally:
        pipeline.close()
    assert not wal.exists() or wal.stat().st_size == 0
    with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == CHUNK + 5
    with running_index(repo) as index:
        assert {h.path for h in all_hits(index, "after_copy_token")} == {"m001.py"}
        assert {h.path for h in all_hits(index, "again_7")} == {"m007.py"}


class CollectorWatch:
    """An indexer noting, per epoch, whether Python's cyclic garbage collector was on while it wrote."""

    name = "collector_watch"
    schema_version = 1

    def __init__(self) -> None:
        self.seen: list[bool] = []

    def create_schema(self, conn: sqlite3.Connection) -> None:
        pass

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        pass

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        self.seen.append(gc.isenabled())


def test_a_big_epoch_runs_with_the_collector_paused_and_a_small_one_without(tmp_path: Path) -> None:
    repo = _big_repo(tmp_path)
    watch = CollectorWatch()
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    service.register_indexer(watch)
    assert gc.isenabled()
    service.build()  # a first build: one big epoch, in batches
    assert watch.seen and not any(watch.seen)
    assert gc.isenabled()
    watch.seen.clear()
    running = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    running.register_indexer(watch)
    running.start()
    try:
        assert running.wait_ready(60)
        (repo / "m000.py").write_text("edited = 1\n")
        running.refresh_paths(["m000.py"])  # an edit: a small epoch
    finally:
        running.stop()
    assert watch.seen == [True]
    assert gc.isenabled()
