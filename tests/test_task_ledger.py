"""The ledger itself: append-only triggers, the hash chain, tamper detection, retention, artifacts."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.clock import now_ms
from codeplane.tasks import TaskState
from codeplane.tasks.inspection import check_ledger, ledger_overview
from codeplane.tasks.ledger import Ledger, verify_connection
from codeplane.tasks.ledger_identity import MISSING_OP
from codeplane.tasks.models import OperationRecord
from codeplane.tasks.tamper import TAMPER_OP
from tests.task_calls import FakeClock, edit, make_tracker, run_call


def _fill(tmp_path: Path, clock: FakeClock | None = None, **config: object) -> Path:
    """A ledger with a few tasks and rows under ``tmp_path/.codeplane``, the last task left OPEN as a killed
    server leaves it; returns the db path."""
    state = tmp_path / ".codeplane"
    tracker = make_tracker(state, clock, **config)
    for i in range(3):
        run_call(tracker, "search", "read")
        run_call(tracker, "write_source", "mutation", mutation=edit(sha=str(i) * 64))
        tracker.open_task("s1")
    tracker.stop(interrupt_open=False)
    return state / "ledger.db"


def _raw(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    return conn


def _doctor(tmp_path: Path) -> tuple[bool, str]:
    result = check_ledger(tmp_path)[0]
    return result.ok, result.detail


def test_update_and_delete_are_rejected_by_sqlite(tmp_path: Path) -> None:
    conn = _raw(_fill(tmp_path))
    with pytest.raises(sqlite3.DatabaseError, match="append-only: UPDATE rejected"):
        conn.execute("UPDATE operations SET success = 1 WHERE op_id = 1")
    with pytest.raises(sqlite3.DatabaseError, match="append-only: DELETE rejected"):
        conn.execute("DELETE FROM operations WHERE op_id = 1")
    with pytest.raises(sqlite3.DatabaseError, match="DELETE rejected"):
        conn.execute("DELETE FROM tasks")
    closed = conn.execute("SELECT task_id FROM tasks WHERE state <> 'OPEN' LIMIT 1").fetchone()[0]
    with pytest.raises(sqlite3.DatabaseError, match="closed tasks are final"):
        conn.execute("UPDATE tasks SET state = 'OPEN' WHERE task_id = ?", (closed,))
    with pytest.raises(sqlite3.DatabaseError, match="identity"):
        conn.execute("UPDATE tasks SET limits_json = '{}' WHERE state = 'OPEN'")
    assert _doctor(tmp_path)[0]


def test_doctor_reports_first_modified_row(tmp_path: Path) -> None:
    conn = _raw(_fill(tmp_path))
    ok, detail = _doctor(tmp_path)
    assert ok and "hash chain intact" in detail
    # A tamperer with file access can drop the trigger; the chain still gives them away.
    conn.execute("DROP TRIGGER operations_reject_update")
    conn.execute("UPDATE operations SET success = 1 - success WHERE op_id = 4")
    conn.execute("UPDATE operations SET op_type = 'x' WHERE op_id = 6")
    ok, detail = _doctor(tmp_path)
    assert not ok and "op_id=4" in detail and "modified" in detail
    results = check_ledger(tmp_path)
    assert not results[1].ok and "operations_reject_update" in results[1].detail


def test_opening_a_hand_edited_ledger_records_what_it_found_before_restoring_the_triggers(tmp_path: Path) -> None:
    """Triggers dropped and a row changed with ``sqlite3``: the next start recreated the triggers without a word
    (doctor's trigger check then passed) and went on appending to the broken chain. The signs are now recorded
    in the chain itself and kept for ``/status``; an untouched ledger opens with none."""
    path = _fill(tmp_path)
    clean = Ledger(path)
    clean.open()
    assert clean.tampering == []
    clean.close()
    conn = _raw(path)
    conn.execute("DROP TRIGGER operations_reject_update")
    conn.execute("UPDATE operations SET success = 1 - success WHERE op_id = 4")
    conn.close()
    ledger = Ledger(path)
    ledger.open()
    try:
        assert any("operations_reject_update" in s for s in ledger.tampering), ledger.tampering
        assert any("op_id=4" in s and "modified" in s for s in ledger.tampering), ledger.tampering
        last = _raw(path).execute("SELECT op_type, detail FROM operations ORDER BY op_id DESC LIMIT 1").fetchone()
        assert last["op_type"] == TAMPER_OP and "operations_reject_update" in last["detail"]
    finally:
        ledger.close()


def test_doctor_detects_deleted_middle_and_tail_rows(tmp_path: Path) -> None:
    path = _fill(tmp_path)
    conn = _raw(path)
    last = conn.execute("SELECT MAX(op_id) FROM operations").fetchone()[0]
    conn.execute("UPDATE ledger_guard SET retention_active = 1")  # pretend to be the retention job
    conn.execute("DELETE FROM operations WHERE op_id = ?", (last,))
    ok, detail = _doctor(tmp_path)
    assert not ok and f"op_id={last}" in detail and "removed from the end" in detail
    conn.execute("DELETE FROM operations WHERE op_id = 3")
    ok, detail = _doctor(tmp_path)
    assert not ok and "op_id=4" in detail and "jumps from 2 to 4" in detail


def test_retention_deletes_old_tasks_and_keeps_the_chain_valid(tmp_path: Path) -> None:
    clock = FakeClock()
    state = tmp_path / ".codeplane"
    tracker = make_tracker(state, clock, ledger_retention_tasks=2, ledger_retention_days=7)
    tasks = []
    for i in range(5):
        run_call(tracker, "write_source", "mutation", mutation=edit(sha=str(i) * 64))
        tasks.append(tracker.get_task("s1").task.task_id)
        tracker.close_task("s1", "success")
        tracker.open_task("s1")
        clock.advance(60)
    tasks.append(tracker.get_task("s1").task.task_id)
    before = tracker.ledger.counts()
    report = tracker.run_retention()
    assert report.deleted_tasks == 4 and report.deleted_operations == 4 and report.checkpoint_op_id
    remaining = [t for t in tasks if tracker.ledger.get_task(t) is not None]
    assert remaining == tasks[-2:]  # newest two: the last closed one and the open one
    after = tracker.ledger.counts()
    assert after["operations"] == before["operations"] - 4 + 1
    chain = tracker.ledger.verify()
    assert chain.ok and chain.checkpoints == 1 and chain.first_op_id == 5
    # Rows keep chaining after a checkpoint, and a second run with nothing to delete records nothing.
    run_call(tracker, "search", "read")
    assert tracker.run_retention().checkpoint_op_id is None
    clock.advance(8 * 86_400)
    tracker.close_task("s1", "success")
    tracker.open_task("s1")
    assert tracker.run_retention().deleted_tasks >= 1
    assert tracker.ledger.verify().ok and tracker.ledger.verify().checkpoints >= 1
    tracker.stop()
    assert _doctor(tmp_path)[0]


def test_forged_prefix_deletion_without_checkpoint_is_detected(tmp_path: Path) -> None:
    conn = _raw(_fill(tmp_path))
    conn.execute("UPDATE ledger_guard SET retention_active = 1")
    conn.execute("DELETE FROM operations WHERE op_id <= 2")
    ok, detail = _doctor(tmp_path)
    assert not ok and "op_id=3" in detail and "no retention checkpoint" in detail


def test_missing_artifact_never_breaks_verification(tmp_path: Path) -> None:
    path = _fill(tmp_path)
    store = ArtifactStore(tmp_path / ".codeplane" / "artifacts", retention_hours=1)
    assert store.stats()["artifacts"] >= 1
    assert store.gc(now=10**15) >= 1
    assert store.stats()["artifacts"] == 0
    conn = _raw(path)
    assert conn.execute("SELECT COUNT(*) FROM operations WHERE artifact_id IS NOT NULL").fetchone()[0] == 3
    assert verify_connection(conn).ok


def test_stored_rows_hash_exactly_as_written(tmp_path: Path) -> None:
    conn = _raw(_fill(tmp_path))
    report = verify_connection(conn)
    assert report.ok and report.rows_checked == conn.execute("SELECT COUNT(*) FROM operations").fetchone()[0]
    row = conn.execute("SELECT * FROM operations WHERE op_type = 'write_source' LIMIT 1").fetchone()
    assert row["timestamp"].endswith("Z") and json.loads(row["changed_paths"]) == ["a.py"]


def test_offline_overview_lists_open_tasks_and_recent_operations(tmp_path: Path) -> None:
    path = _fill(tmp_path)
    overview = ledger_overview(path, recent=3, now=FakeClock().now)  # the clock the tasks were opened on
    assert overview is not None
    assert [t["state"] for t in overview["open_tasks"]] == [TaskState.OPEN.value]
    assert len(overview["recent_operations"]) == 3
    assert overview["recent_operations"][-1]["op_type"] == "write_source"
    assert ledger_overview(tmp_path / "nope.db") is None


def test_a_server_that_stops_closes_its_open_tasks(tmp_path: Path) -> None:
    # ``cpl status`` after ``cpl down`` listed the stopped server's task as open.
    state = tmp_path / ".codeplane"
    tracker = make_tracker(state)
    run_call(tracker, "write_source", "mutation", mutation=edit())
    task_id = tracker.get_task("s1").task.task_id
    tracker.stop()
    overview = ledger_overview(state / "ledger.db", recent=1)
    assert overview is not None and overview["open_tasks"] == []
    assert overview["recent_operations"][-1]["op_type"] == "task.interrupted"
    restarted = make_tracker(state)
    stored = restarted.ledger.get_task(task_id)
    assert stored is not None and stored.state is TaskState.CLOSED_INTERRUPTED
    assert stored.close_reason == "server stopped" and restarted.ledger.verify().ok


def test_artifact_store_is_content_addressed(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "art", retention_hours=24)
    one = store.put_bytes(b"log line\n")
    two = store.put_text("log line\n")
    assert one.artifact_id == two.artifact_id and one.sha256 == two.sha256 and one.size == 9
    assert store.read_bytes(one.artifact_id) == b"log line\n"
    assert store.verify(one)
    (tmp_path / "art" / one.artifact_id).write_bytes(b"changed")
    assert not store.verify(one)
    src = tmp_path / "big.log"
    src.write_bytes(b"x" * (3 << 20))
    ref = store.put_file(src)
    assert ref.size == 3 << 20 and store.verify(ref)
    assert store.path_of("../etc/passwd") is None and store.read_bytes("art_" + "0" * 32) is None
    assert store.gc() == 0


def test_a_full_disk_neither_breaks_the_chain_nor_loses_the_rows_written_meanwhile(tmp_path: Path) -> None:
    """A full disk (SQLite ends the transaction itself): the ROLLBACK's own error ("no transaction is active")
    left the in-memory head on rows never written, so every later row chained from nothing and ``doctor`` called
    the ledger tampered with for good; and the writes made meanwhile were missing. SQLite's ``max_page_count`` is
    a real full database."""
    from codeplane.core.clock import now_ms
    from codeplane.tasks.models import OperationRecord

    def op(name: str) -> OperationRecord:
        return OperationRecord(task_id=None, timestamp_ms=now_ms(), op_type=name, success=True, kind="mutation",
                               detail={"padding": "x" * 20_000})

    ledger = Ledger(tmp_path / ".codeplane" / "ledger.db")
    ledger.open()
    ledger.record(op("before"))
    conn = ledger._require()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    for n in range(3):
        with pytest.raises(sqlite3.OperationalError, match="full"):
            ledger.record(op(f"while full {n}"))
    conn.execute("PRAGMA max_page_count = 1073741823")
    ledger.record(op("after"))
    ledger.close()
    raw = _raw(tmp_path / ".codeplane" / "ledger.db")
    assert verify_connection(raw).ok
    names = [r["op_type"] for r in raw.execute("SELECT op_type FROM operations ORDER BY op_id")]
    assert names[-5:] == ["before", "while full 0", "while full 1", "while full 2", "after"], names
    assert _doctor(tmp_path)[0], _doctor(tmp_path)


def test_a_ledger_deleted_while_open_is_noticed_at_the_next_write(tmp_path: Path) -> None:
    """QA44 §3c: with ``ledger.db`` deleted while the server ran, it went on writing to the deleted file (``cpl
    status`` showed those rows) and the restart lost them all, recording only ``ledger.missing``. The next write
    now reopens: the deletion is recorded at once and the rows written after it are kept."""
    def op(name: str) -> OperationRecord:
        return OperationRecord(task_id=None, timestamp_ms=now_ms(), op_type=name, success=True, kind="mutation")

    path = tmp_path / ".codeplane" / "ledger.db"
    ledger = Ledger(path)
    ledger.open()
    ledger.record(op("before"))
    for leftover in path.parent.glob("ledger.db*"):
        leftover.unlink()
    ledger.record(op("after"))
    ledger.close()
    rows = [r["op_type"] for r in _raw(path).execute("SELECT op_type FROM operations ORDER BY op_id")]
    assert rows == [MISSING_OP, "after"], rows
