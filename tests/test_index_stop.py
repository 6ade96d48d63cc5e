"""Stopping the index while an epoch is being written rolls that epoch back instead of waiting for it (§7.6).

A first build of a big tree is one transaction lasting minutes; ``cpl up``'s Ctrl+C used to wait for all of it.
"""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from codeplane.cli.live_view import follow
from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.epochs import CHUNK, EpochInterrupted
from codeplane.index.facts_api import FileChange
from codeplane.index.overview import index_overview
from codeplane.index.service import IndexService
from codeplane.index.structural.service import StructuralService
from tests.builders import cpl, make_repo, start_server
from tests.index_helpers import all_hits, running_index

#: A statement that runs for minutes unless something aborts it.
_ENDLESS = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 4000000000) "
            "SELECT count(*) FROM c")


class SlowFinish:
    """An indexer whose end-of-epoch step is one very long SQL statement on the writer's connection."""

    name = "slow_finish"
    schema_version = 1

    def __init__(self) -> None:
        self.entered = threading.Event()

    def create_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS slow_finished (epoch INTEGER)")

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS slow_finished")

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        pass

    def begin_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        pass

    def finish_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        self.entered.set()
        conn.execute(_ENDLESS).fetchone()
        conn.execute("INSERT INTO slow_finished VALUES (?)", (epoch,))


def test_a_stop_during_a_first_build_rolls_it_back_and_the_next_start_builds_it(tmp_path: Path) -> None:
    files = {f"pkg/m{n:02}.py": f"def shared_name_{n}():\n    return {n}\n" for n in range(30)}
    repo = make_repo(tmp_path / "repo", files)
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    slow = SlowFinish()
    service.register_indexer(slow)
    service.start()
    assert slow.entered.wait(60), "the first build never reached its end-of-epoch step"
    began = time.monotonic()
    service.stop()
    # Without the interrupt the stop waits for the statement (minutes), then for the writer lock.
    assert time.monotonic() - began < 20
    with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 0  # nothing of the epoch published
        assert conn.execute("SELECT count(*) FROM slow_finished").fetchone()[0] == 0
    with running_index(repo) as index:  # the next start builds the whole tree, lexical and structural
        assert index.status()["file_count"] == len(files)
        assert {h.path for h in all_hits(index, "shared_name_7")} == {"pkg/m07.py"}


def test_an_interrupted_publisher_refuses_the_next_epoch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    pipeline = service._pipeline
    pipeline.open()
    try:
        pipeline.interrupt()
        with pytest.raises(EpochInterrupted):
            pipeline.reconcile("test")
        assert pipeline.store.epoch() == 0 and pipeline.store.all_records() == {}
    finally:
        pipeline.close()


def test_a_signal_while_the_server_waits_for_its_first_build_stops_it_without_waiting(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``cpl up`` waits (up to ``startup_wait_sec``) for the first build before it serves MCP; a Ctrl+C meanwhile
    used to wait for the build to finish (a minute at most on a big tree) before the stop even began. Meanwhile
    ``cpl status`` shows how far the build is, and ``--follow`` says so too (it said "not running": the live
    picture waits for the boot)."""
    body = "".join(f"def function_{n}(value):\n    return value + {n}\n\n\n" for n in range(40))
    files = {f"pkg{d:02}/module_{n:03}.py": body for d in range(30) for n in range(100)}
    repo = make_repo(tmp_path / "repo", files, commit=False)
    server = start_server(repo)
    try:
        deadline = time.monotonic() + 30
        while server.get("/status").json()["ready_reason"] != "starting: the stack is loaded, building the index":
            assert time.monotonic() < deadline, "the server never waited for its first build with its stack loaded"
            time.sleep(0.02)
        status = cpl("status", str(repo), cwd=repo)
        follow(RepoLayout(repo), as_json=True, iterations=1, sleep=lambda _s: None)
        followed = json.loads(capsys.readouterr().out.splitlines()[-1])
        assert not server.get("/ready").is_success, "the first build of 3,000 files ended before the signal"
        assert re.search(r"index: .*(scanning|indexing|finishing) [\d,]+/3,00\d files \([\d.]+%\)", status.stdout), \
            status.stdout
        assert followed["booting"] is True and followed["status"]["index"]["progress"]["files_total"] >= 3000, followed
        began = time.monotonic()
        server.stop(signal.SIGINT, timeout=60)
        stopped_in = time.monotonic() - began
    finally:
        server.stop(signal.SIGKILL)
    assert server.proc.returncode == 0
    assert stopped_in < 15, f"the stop waited {stopped_in:.1f} s"
    with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:  # rolled back, not finished and published
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 0


class SpillThenHang(SlowFinish):
    """Ends the epoch by writing more than SQLite's page cache holds (so pages reach ``index.db`` itself before the
    COMMIT), then hangs in a statement until the process is killed."""

    def finish_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        conn.executemany("INSERT INTO slow_finished VALUES (?)", ((f"row {n:0100}",) for n in range(80_000)))  # 9 MB
        self.entered.set()
        conn.execute(_ENDLESS).fetchone()


_KILLED_BUILD = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from tests.test_index_stop import SpillThenHang
repo = Path(sys.argv[1])
service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
service.register_indexer(SpillThenHang())
service.build()
"""


def test_a_kill_during_a_first_build_written_into_the_file_leaves_the_empty_store(tmp_path: Path) -> None:
    """A first build writes its pages into ``index.db`` itself (``IndexStore.leave_wal``), guarded by a rollback
    journal: killed mid-build, the next open rolls the file back to the empty store and builds it whole."""
    files = {f"m{n:03}.py": f"def kill_word_{n}():\n    return {n}\n" for n in range(CHUNK + 5)}
    repo = make_repo(tmp_path / "repo", files)
    db = repo / ".codeplane" / "index.db"
    journal = Path(f"{db}-journal")
    child = subprocess.Popen([sys.executable, "-c", _KILLED_BUILD, str(repo), str(Path(__file__).parents[1])])
    try:
        deadline = time.monotonic() + 120
        while not (journal.exists() and db.exists() and db.stat().st_size > 4 * 1024 * 1024):
            assert child.poll() is None and time.monotonic() < deadline, "the build never spilled into index.db"
            time.sleep(0.05)
    finally:
        child.kill()
        child.wait()
    assert journal.exists()  # a hot journal: the next open must roll the file back
    with running_index(repo) as index:
        assert index.status()["file_count"] == len(files)
        assert {h.path for h in all_hits(index, "kill_word_7")} == {"m007.py"}
    assert not journal.exists()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == len(files)


def test_status_does_not_wait_for_a_first_build_written_into_the_file(tmp_path: Path) -> None:
    """While a first build holds ``index.db`` (written straight into it, ``IndexStore.leave_wal``), a reader of its
    own would wait for the lock: the structural status section says "building" at once instead; a stop still
    rolls the build back."""
    repo = make_repo(tmp_path / "repo", {f"m{n:03}.py": f"x_{n} = {n}\n" for n in range(CHUNK + 5)})
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    hang = SpillThenHang()
    service.register_indexer(hang)
    structural = StructuralService(service, repo, repo / ".codeplane" / "index.db")
    service.start()
    try:
        assert hang.entered.wait(60), "the first build never reached its end-of-epoch step"
        assert service.first_build_writing
        began = time.monotonic()
        assert structural.status() == {"state": "not_built", "building": True}
        assert time.monotonic() - began < 0.5
    finally:
        service.stop()
    assert not service.first_build_writing
    assert structural.status()["state"] == "not_built"  # rolled back: the empty store, readable again


def test_an_overview_beside_a_first_build_in_another_process_says_building(tmp_path: Path) -> None:
    """``cpl status`` with no server reads ``index.db`` itself: while ``cpl init`` in another terminal writes its
    first build straight into the file (holding its lock), it answers "building" at once instead of waiting."""
    repo = make_repo(tmp_path / "repo", {f"m{n:03}.py": f"x_{n} = {n}\n" for n in range(CHUNK + 5)})
    db = repo / ".codeplane" / "index.db"
    child = subprocess.Popen([sys.executable, "-c", _KILLED_BUILD, str(repo), str(Path(__file__).parents[1])])
    try:
        deadline = time.monotonic() + 120
        while not (Path(f"{db}-journal").exists() and db.stat().st_size > 4 * 1024 * 1024):
            assert child.poll() is None and time.monotonic() < deadline, "the build never spilled into index.db"
            time.sleep(0.05)
        began = time.monotonic()
        overview = index_overview(db)
        assert time.monotonic() - began < 2
        assert overview["state"] == "building", overview
    finally:
        child.kill()
        child.wait()
    assert index_overview(db)["state"] != "building"  # the lock went with the process


def _descendants(pid: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    except OSError:
        return ""


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            if " Z " not in Path(f"/proc/{pid}/stat").read_text(errors="replace"):
                alive.add(pid)
        except OSError:
            continue
    return alive


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_server_killed_mid_build_leaves_no_extraction_workers_behind(tmp_path: Path) -> None:
    # kill -9 (or the OOM killer) during a first build left the pool's workers and their forkserver running
    # for good: the workers wait on a queue whose writing end they hold themselves.
    body = "".join(f"def function_{n}(value):\n    return value + {n}\n\n" for n in range(60))
    root = make_repo(tmp_path / "repo", {f"pkg/mod{n:04}.py": body for n in range(1500)})
    server = start_server(root)
    deadline = time.monotonic() + 120
    workers: set[int] = set()
    while not workers:
        assert time.monotonic() < deadline, "the first build never started its extraction workers"
        assert server.proc.poll() is None
        tree = _descendants(server.proc.pid)
        workers = {pid for pid in _alive(tree) if "forkserver" in _cmdline(pid) and not _descendants(pid)}
        time.sleep(0.05)
    helpers = _descendants(server.proc.pid)
    server.stop(signal.SIGKILL)
    deadline = time.monotonic() + 20
    while _alive(helpers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(helpers), [_cmdline(pid)[:80] for pid in _alive(helpers)]
