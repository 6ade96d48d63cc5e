"""Rows lost with ``ledger.db-wal`` are noticed and reported, not silently gone (S54 §3, ``tasks/ledger_head.py``).

The ledger runs in WAL mode: its newest commits live in ``ledger.db-wal`` until a checkpoint. After a kill -9 the
next open replays the WAL; but when the WAL is lost (deleted, or not copied by a backup) the ledger opened as of
its last checkpoint without a word, its chain still valid, the newest rows simply gone. Now ``ledger.head`` (one
line per commit) tells the next open how far the chain had reached: the loss is logged, recorded in the chain and
in ``ledger.missing-<UTC>-lost.json``, and reported by ``cpl status``, ``describe`` and ``cpl doctor`` with how
many entries are missing. Real SQLite, a real server killed with SIGKILL, the real ``cpl``.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
from pathlib import Path

import pytest

from codeplane.core.layout import RepoLayout
from codeplane.tasks.ledger import Ledger
from codeplane.tasks.ledger_head import read_head
from codeplane.tasks.models import OperationRecord
from tests.builders import answer_text, cpl, make_repo, mcp_client, start_server

pytestmark = pytest.mark.anyio


def _op(n: int) -> OperationRecord:
    return OperationRecord(task_id=None, timestamp_ms=1_700_000_000_000 + n, op_type="describe", success=True,
                           kind="meta")


def _last_op_id_without_wal(db: Path, scratch: Path) -> int:
    """The last op_id ``db``'s main file holds by itself (as a backup that left out the WAL would have it)."""
    scratch.mkdir()
    copy = scratch / "ledger.db"
    shutil.copyfile(db, copy)
    conn = sqlite3.connect(copy)
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'operations'").fetchone() is None:
            return 0  # a ledger never checkpointed: even its schema was only in the WAL
        last = conn.execute("SELECT MAX(op_id) FROM operations").fetchone()[0] or 0
        seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'operations'").fetchone()
        return max(int(last), int(seq[0]) if seq else 0)
    finally:
        conn.close()


def test_a_backup_without_the_wal_reopens_saying_how_many_committed_rows_it_lost(tmp_path: Path) -> None:
    state = tmp_path / "live" / ".codeplane"
    ledger = Ledger(state / "ledger.db")
    ledger.open()
    for n in range(5):
        ledger.record(_op(n))
    ledger._require().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()  # the backup's main file holds these
    for n in range(5, 8):
        ledger.record(_op(n))  # ...and these only the WAL
    committed = ledger.head
    # The backup: every file of .codeplane/ but the WAL (and its index), copied while the server ran.
    backup = tmp_path / "restored" / ".codeplane"
    shutil.copytree(state, backup, ignore=shutil.ignore_patterns("ledger.db-wal", "ledger.db-shm"))
    ledger.close()

    restored = Ledger(backup / "ledger.db")
    restored.open()
    try:
        assert restored.lost is not None, "the restored ledger opened without a word"
        lost, record = restored.lost
        assert (lost.count, lost.first_op_id, lost.last_op_id, lost.last_hash) == (3, 6, 8, committed[1])
        assert "lost its last 3 committed entries (op_id 6-8" in record.reason
        assert (backup / record.file).is_file() and record.file.startswith("ledger.missing-")
        rows = restored.recent_operations(limit=1)
        assert rows[0]["op_type"] == "ledger.missing" and rows[0]["detail"]["lost"]["count"] == 3
        assert restored.verify().ok  # the chain itself is whole: it goes on from what the file holds
    finally:
        restored.close()
    # Said once: the next open finds nothing missing.
    again = Ledger(backup / "ledger.db")
    again.open()
    try:
        assert again.lost is None
    finally:
        again.close()


def test_a_clean_history_opens_without_a_loss(tmp_path: Path) -> None:
    path = tmp_path / ".codeplane" / "ledger.db"
    for n in range(3):
        ledger = Ledger(path)
        ledger.open()
        assert ledger.lost is None
        op_id = ledger.record(_op(n))
        ledger.close()
        head = read_head(path.parent)
        assert head is not None and head.op_id == op_id


async def test_a_server_killed_and_its_wal_lost_reports_the_missing_entries_at_the_next_start(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    layout = RepoLayout(repo)
    db = layout.state_dir / "ledger.db"
    server = start_server(repo)
    try:
        server.wait_serving()
        async with mcp_client(server) as client:
            for _ in range(4):
                await client.call_tool("read_source", {"path": "a.py"})
    finally:
        server.stop(signal.SIGKILL)
    head = read_head(layout.state_dir)
    assert head is not None
    missing = head.op_id - _last_op_id_without_wal(db, tmp_path / "scratch")
    assert missing >= 4, "the calls' rows were checkpointed already: nothing would be lost"
    Path(f"{db}-wal").unlink()
    Path(f"{db}-shm").unlink(missing_ok=True)

    said = f"lost its last {missing} committed entries"
    server = start_server(repo)
    try:
        server.wait_serving()
        async with mcp_client(server) as client:
            described = answer_text(await client.call_tool("describe", {}))
        status = cpl("status", "--json", cwd=repo)
    finally:
        server.stop()
    assert said in described, described
    warnings = json.loads(status.stdout.strip().splitlines()[-1])["storage"]["warnings"]
    assert any(said in w for w in warnings), warnings
    logged = [json.loads(line) for line in layout.log_file.read_text().splitlines() if line.startswith("{")]
    lines = [e for e in logged if str(e.get("event", "")).startswith("ledger.db lost committed entries")]
    assert [(e["level"], e["missing"]) for e in lines] == [("warn", missing)], lines
    doctor = cpl("doctor", "--json", cwd=repo)
    checks = json.loads(doctor.stdout.strip().splitlines()[-1])["checks"]
    failed = [c for c in checks if not c["ok"]]
    assert doctor.returncode == 1 and [c["name"] for c in failed] == ["missing ledger"], failed
    assert said in json.dumps(failed)
