"""A full disk while the ledger opens leaves nothing a later start takes for a damaged audit log (QA62 #1).

A first ``cpl up`` on a full disk failed with 5010, as it should, but left a 0-byte ``ledger.db`` (or one whose
schema was half-made): once space was freed, ``cpl doctor`` failed on it and the next start quarantined it as
damage, reported until ``--ack-quarantine``; a half-made one was reported as tampered with. A quarantine that hit
the full disk after moving the file left it there with no record ("record missing"). An open is now all or nothing
up to its first commit, and a ``ledger.db`` that never held a chain is no damage.

The full disk is a file-size limit (``ulimit -f``: EFBIG, the same 5010) in a child process that opens the real
ledger on real SQLite.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from codeplane.tasks.inspection import check_ledger, ledger_overview
from codeplane.tasks.ledger import Ledger
from codeplane.tasks.ledger_identity import ID_FILE
from codeplane.tasks.quarantine import quarantined
from codeplane.tasks.schema import _DDL
from tests.builders import make_repo

_OPEN_UNDER_LIMIT = textwrap.dedent("""
    import json, resource, sys
    from pathlib import Path
    from codeplane.core.errors import CodePlaneError
    from codeplane.tasks.ledger import Ledger
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    ledger = Ledger(Path(sys.argv[1]))
    try:
        ledger.open()
    except CodePlaneError as exc:
        print(json.dumps(exc.to_payload()))
    else:
        ledger.close()
        print(json.dumps(None))
""")


def _open_under_limit(db: Path, limit: int) -> Any:
    """Open the ledger at ``db`` in a child whose files cannot grow past ``limit`` bytes; its error's payload."""
    proc = subprocess.run([sys.executable, "-c", _OPEN_UNDER_LIMIT, str(db), str(limit)], capture_output=True,
                          text=True, check=True, timeout=60)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _files(state: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in state.iterdir()}


def _failed_checks(root: Path) -> list[str]:
    return [f"{c.name}: {c.detail}" for c in check_ledger(root) if not c.ok]


def _open(db: Path) -> Ledger:
    ledger = Ledger(db)
    ledger.open()
    ledger.close()
    return ledger


def test_a_first_start_on_a_full_disk_leaves_no_ledger_behind(tmp_path: Path) -> None:
    # 1 KB: SQLite cannot write the first page; 20 KB: the schema is under way; 50 KB: the schema is in, the first
    # commit is not. Each left a file: 0 bytes (quarantined later), no `operations` (doctor could not read it).
    for limit in (1_000, 20_000, 50_000):
        root = tmp_path / f"r{limit}"
        state = root / ".codeplane"
        state.mkdir(parents=True)
        error = _open_under_limit(state / "ledger.db", limit)
        assert error is not None and error["code"] == 5010 and error["retryable"], (limit, error)
        assert _files(state) == {}, (limit, _files(state))
        assert _failed_checks(root) == [], limit
        ledger = _open(state / "ledger.db")
        assert ledger.quarantined is None and ledger.tampering == [], (limit, ledger.quarantined, ledger.tampering)
        assert quarantined(state) == [] and _failed_checks(root) == [], limit


def test_a_deleted_ledger_found_on_a_full_disk_is_recorded_once_space_is_freed(tmp_path: Path) -> None:
    root = tmp_path / "r"
    state = root / ".codeplane"
    _open(state / "ledger.db")
    for name in ("ledger.db", "ledger.db-wal", "ledger.db-shm"):
        (state / name).unlink(missing_ok=True)  # deleted by hand; ledger.id remembers it
    error = _open_under_limit(state / "ledger.db", 1_000)
    assert error is not None and error["code"] == 5010, error
    # The record of the deletion this open wrote went with it: the chain never said so.
    assert not (state / "ledger.db").exists() and quarantined(state) == [], _files(state)
    ledger = _open(state / "ledger.db")
    assert ledger.quarantined is not None and ledger.quarantined.missing, ledger.quarantined
    records = quarantined(state)
    assert [r.missing for _, r in records] == [True], records  # once, and not an "empty file" quarantine


def _damaged(state: Path) -> bytes:
    state.mkdir(parents=True)
    garbage = b"this was a ledger until a disk went bad\n" * 200
    (state / "ledger.db").write_bytes(garbage)
    return garbage


def test_a_quarantine_whose_record_cannot_be_written_moves_nothing(tmp_path: Path) -> None:
    root = tmp_path / "r"
    state = root / ".codeplane"
    garbage = _damaged(state)
    error = _open_under_limit(state / "ledger.db", 100)  # the record (~300 bytes) cannot be written
    assert error is not None and error["code"] == 5010, error
    assert _files(state) == {"ledger.db": len(garbage)} and (state / "ledger.db").read_bytes() == garbage
    ledger = _open(state / "ledger.db")
    assert ledger.quarantined is not None and "not a database" in ledger.quarantined.reason, ledger.quarantined
    [(_, record)] = quarantined(state)
    assert record.size == len(garbage) and "record missing" not in record.reason, record


def test_an_open_failing_after_it_moved_a_damaged_ledger_aside_puts_it_back(tmp_path: Path) -> None:
    root = tmp_path / "r"
    state = root / ".codeplane"
    garbage = _damaged(state)
    error = _open_under_limit(state / "ledger.db", 1_000)  # the record fits, the new ledger's first page does not
    assert error is not None and error["code"] == 5010, error
    assert _files(state) == {"ledger.db": len(garbage)} and (state / "ledger.db").read_bytes() == garbage
    ledger = _open(state / "ledger.db")
    assert ledger.quarantined is not None and ledger.quarantined.size == len(garbage), ledger.quarantined
    # One quarantine, of the damaged file: not a second one of the empty ledger.db the failed open left.
    assert [r.size for _, r in quarantined(state)] == [len(garbage)], quarantined(state)


def test_a_ledger_db_that_never_held_a_chain_is_no_damage(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    state = root / ".codeplane"
    state.mkdir()
    db = state / "ledger.db"
    sqlite3.connect(db).close()  # what an older version's failed first start left: SQLite's empty file
    assert db.stat().st_size == 0
    assert _failed_checks(root) == [] and ledger_overview(db) is None
    ledger = _open(db)
    assert ledger.quarantined is None and quarantined(state) == [] and _failed_checks(root) == []

    # Its schema half-made (tables committed, the triggers not yet): no sign of an edit, there was no chain.
    half = tmp_path / "half" / ".codeplane"
    half.mkdir(parents=True)
    conn = sqlite3.connect(half / "ledger.db")
    conn.executescript(_DDL.split("CREATE TRIGGER", 1)[0])
    conn.close()
    ledger = _open(half / "ledger.db")
    assert ledger.tampering == [] and ledger.quarantined is None, ledger.tampering

    # A chain was recorded beside it (ledger.id): an emptied ledger.db is damage, evidence that is kept.
    emptied = tmp_path / "emptied" / ".codeplane"
    _open(emptied / "ledger.db")
    assert (emptied / ID_FILE).exists()
    (emptied / "ledger.db").write_bytes(b"")
    for side in ("ledger.db-wal", "ledger.db-shm"):
        (emptied / side).unlink(missing_ok=True)
    ledger = _open(emptied / "ledger.db")
    assert ledger.quarantined is not None and ledger.quarantined.reason == "empty file (0 bytes)", ledger.quarantined
