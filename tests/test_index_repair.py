"""Epoch crash-safety and start-up repairs: Tantivy and SQLite never stay apart, facts follow epochs."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from codeplane.index.facts_api import FileChange
from tests.builders import make_repo, write_files
from tests.index_helpers import all_hits, hit_lines, open_index, running_index

_CRASH_AFTER_TANTIVY_COMMIT = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from codeplane.core.config import IndexConfig
    from codeplane.core.layout import RepoLayout
    from codeplane.index.epochs import Extras
    from codeplane.index.freshness import PendingChanges
    from codeplane.index.pipeline import IndexPipeline
    from codeplane.index.reconcile import diff

    root = Path(sys.argv[1])
    pipeline = IndexPipeline(root, RepoLayout(root), IndexConfig(), PendingChanges())
    pipeline.open()
    changes = diff(root, pipeline.store.records_for(["a.py"]),
                   {"a.py": __import__("codeplane.repo.universe", fromlist=["x"]).walk_paths(
                       root, ["a.py"], pipeline.rules)["a.py"]},
                   max_bytes=1 << 20, trust_stat=False)
    publisher = pipeline._publisher
    extras = Extras()
    # The publisher's own steps, in its order, then death before the SQLite commit.
    publisher._inflight(changes, extras)
    conn = pipeline.store.conn
    conn.execute("BEGIN IMMEDIATE")
    publisher._write(conn, pipeline.epoch + 1, changes, extras, None)
    pipeline.lexical.commit()
    os._exit(137)
""")


def test_crash_between_tantivy_and_sqlite_commits_is_repaired_at_next_start(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "alpha_word = 1\n", "b.py": "alpha_word\n"})
    open_index(repo).stop()
    path = repo / "a.py"
    stat = os.stat(path)
    path.write_text("omega_word = 1\n")  # same size
    proc = subprocess.run([sys.executable, "-c", _CRASH_AFTER_TANTIVY_COMMIT, str(repo)], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 137, proc.stderr
    # The disk goes back to what SQLite still records, with the same stat: only the in-flight marker can
    # tell that Tantivy moved ahead.
    path.write_text("alpha_word = 1\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with running_index(repo) as index:
        assert hit_lines(index, "alpha_word") == {("a.py", 1), ("b.py", 1)}
        assert hit_lines(index, "omega_word") == set()
        with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:
            inflight = conn.execute("SELECT value FROM meta WHERE key='tantivy_inflight'").fetchone()[0]
        assert json.loads(inflight) == []


def test_corrupt_tantivy_index_is_rebuilt_with_a_warning(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "survivor_name = 1\n"})
    open_index(repo).stop()
    (repo / ".codeplane" / "tantivy" / "meta.json").write_text("{ not json")
    with running_index(repo) as index:
        warnings = index.status()["warnings"]
        assert isinstance(warnings, list) and any("Tantivy index was rebuilt" in w for w in warnings)
        assert hit_lines(index, "survivor_name") == {("a.py", 1)}


def test_tantivy_bytes_changed_inside_a_segment_are_found_and_rebuilt(tmp_path: Path) -> None:
    """2,000 bytes overwritten inside a ``.term`` file (size unchanged): Tantivy opened it, an identifier search
    answered "no hits", other queries panicked, and ``doctor`` said all was well. The footer's CRC-32 says it."""
    from codeplane.index.doctor import check_index

    files = {f"m{n}.py": f"survivor_name_{n} = {n}\nshared_name = {n}\n" for n in range(300)}
    repo = make_repo(tmp_path / "repo", files)
    open_index(repo).stop()
    term = max((repo / ".codeplane" / "tantivy").glob("*.term"), key=lambda p: p.stat().st_size)
    data = bytearray(term.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 64] = bytes(255 - b for b in data[middle:middle + 64])
    term.write_bytes(bytes(data))
    doctor = {r.name: r for r in check_index(repo)}
    assert not doctor["tantivy"].ok and "checksum mismatch" in doctor["tantivy"].detail, doctor["tantivy"]
    with running_index(repo) as index:
        warnings = index.status()["warnings"]
        assert isinstance(warnings, list) and any("checksum mismatch" in w for w in warnings), warnings
        assert len(all_hits(index, "shared_name")) == 300
        assert hit_lines(index, "survivor_name_7") == {("m7.py", 1)}


def test_tantivy_schema_version_change_rebuilds(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "versioned_name = 1\n"})
    open_index(repo).stop()
    (repo / ".codeplane" / "tantivy" / "codeplane-schema.json").write_text('{"schema_version": 0}')
    with running_index(repo) as index:
        warnings = index.status()["warnings"]
        assert isinstance(warnings, list) and any("schema version" in w for w in warnings)
        assert hit_lines(index, "versioned_name") == {("a.py", 1)}


def test_lost_index_db_refills_tantivy_without_duplicates(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "single_hit = 1\n"})
    open_index(repo).stop()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{repo / '.codeplane' / 'index.db'}{suffix}").unlink(missing_ok=True)
    with running_index(repo) as index:
        assert len(all_hits(index, "single_hit")) == 1


class WordIndexer:
    """A real (tiny) fact producer: one row per file with its word count."""

    name = "words"

    def __init__(self, schema_version: int = 1) -> None:
        self.schema_version = schema_version
        self.applied: list[tuple[int, list[str]]] = []

    def create_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS words (path TEXT PRIMARY KEY, count INTEGER, epoch INTEGER)")

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS words")

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        self.applied.append((epoch, sorted(c.path for c in changes)))
        for change in changes:
            conn.execute("DELETE FROM words WHERE path = ?", (change.path,))
            if change.text is not None:
                conn.execute("INSERT INTO words VALUES (?, ?, ?)", (change.path, len(change.text.split()), epoch))


def _words(index_root: Path) -> dict[str, tuple[int, int]]:
    with sqlite3.connect(index_root / ".codeplane" / "index.db") as conn:
        return {p: (c, e) for p, c, e in conn.execute("SELECT path, count, epoch FROM words")}


def test_registered_indexer_facts_change_with_each_epoch_and_rebuild_on_schema_bump(tmp_path: Path) -> None:
    from codeplane.core.config import IndexConfig
    from codeplane.core.layout import RepoLayout
    from codeplane.index.service import IndexService

    repo = make_repo(tmp_path / "repo", {"a.py": "one two\n", "b.md": "three\n", "img.bin": b"\x00\x01"})

    def start(version: int) -> tuple[IndexService, WordIndexer]:
        service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
        indexer = WordIndexer(version)
        service.register_indexer(indexer)
        service.start()
        assert service.wait_ready(30)
        return service, indexer

    service, indexer = start(1)
    assert _words(repo) == {"a.py": (2, 1), "b.md": (1, 1)}
    write_files(repo, {"a.py": "one two four\n"})
    (repo / "b.md").unlink()
    epoch = service.refresh_paths(["a.py", "b.md"])
    assert _words(repo)["a.py"] == (3, epoch) and "b.md" not in _words(repo)
    with service.read_connection() as conn:  # other subsystems read facts through the same snapshot API
        assert conn.execute("SELECT count FROM words WHERE path='a.py'").fetchone()[0] == 3
    service.stop()

    service, indexer = start(1)  # same version: nothing is re-applied
    assert indexer.applied == []
    service.stop()

    service, indexer = start(2)  # bumped: dropped and rebuilt for every text file
    assert indexer.applied and "a.py" in indexer.applied[0][1]
    assert _words(repo)["a.py"][0] == 3
    service.stop()


def test_an_index_db_damaged_while_serving_is_rebuilt_from_disk(tmp_path: Path) -> None:
    """``index.db`` truncated under a running server: symbol reads answered 9001 ("database disk image is
    malformed") and every query 3005 "retry" for good, until a restart. The first statement that meets the
    damage has it rebuilt from disk, live; meanwhile queries say so (3004, retryable)."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    import pytest

    from codeplane.core.errors import CodePlaneError

    files = {f"pkg/m{n}.py": f"def function_{n}(value):\n    return value + {n}\n" for n in range(200)}
    repo = make_repo(tmp_path / "repo", files)
    with running_index(repo) as index:
        before = all_hits(index, "function_7")
        assert before
        epoch = index.epoch
        db = repo / ".codeplane" / "index.db"
        # Every page into the file first (a reader's snapshot can keep a checkpoint busy): a page the WAL still held
        # would be read from there, and copied back over the damage by the next checkpoint.
        deadline = time.monotonic() + 30
        with sqlite3.connect(db) as raw:
            while raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] != 0:
                assert time.monotonic() < deadline, "the WAL never emptied"
                time.sleep(0.05)
        with db.open("r+b") as handle:
            handle.truncate(8192)
            handle.seek(0)
            handle.write(b"garbage!" * 512)
        def count_files() -> int:
            with index.read_connection() as conn:
                return int(conn.execute("SELECT count(*) FROM files").fetchone()[0])

        with pytest.raises(CodePlaneError) as caught:  # a thread of its own: a new connection reads the header
            ThreadPoolExecutor(1).submit(count_files).result()
        assert caught.value.code == 3004 and caught.value.retryable, caught.value
        deadline = time.monotonic() + 60
        while True:  # rebuilt (said so) and answering again; until then every failure is retryable
            warnings = index.status()["warnings"]
            rebuilt = isinstance(warnings, list) and any("index.db was damaged" in w for w in warnings)
            try:
                after = all_hits(index, "function_7")
                if rebuilt and index.ready:
                    break
            except CodePlaneError as exc:
                assert exc.retryable, exc
            assert time.monotonic() < deadline, warnings
            time.sleep(0.2)
        assert after == before
        assert ThreadPoolExecutor(1).submit(count_files).result() == len(files)
        # Epochs only go forward (answers and cursors carry them): the rebuild's came back as 1 (3 -> 2 seen).
        assert index.epoch > epoch, (index.epoch, epoch)
