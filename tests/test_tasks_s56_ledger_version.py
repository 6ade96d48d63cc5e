"""The ledger's schema version is checked, not only written (QA60 F3): a ledger a newer CodePlane wrote (a downgrade)
is refused with an error naming both versions, by the server's start, `cpl status` and `cpl doctor`, and nothing is
written to it; an older one is migrated and then records this version. Real SQLite, the real `cpl`."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.tasks.ledger import Ledger
from codeplane.tasks.models import OperationRecord
from codeplane.tasks.schema import NEWER_LEDGER_ERROR, SCHEMA_VERSION
from tests.builders import CPL, cpl, cpl_env, cpl_json, make_repo

_NEWER = str(SCHEMA_VERSION + 1)


def _op(n: int) -> OperationRecord:
    return OperationRecord(task_id=None, timestamp_ms=1_700_000_000_000 + n, op_type="describe", success=True,
                           kind="meta")


def _ledger_with_rows(path: Path, rows: int, *, version: str) -> None:
    ledger = Ledger(path)
    ledger.open()
    for n in range(rows):
        ledger.record(_op(n))
    ledger.close()
    conn = sqlite3.connect(path)
    try:  # what a future CodePlane with another ledger format would leave
        with conn:
            conn.execute("UPDATE ledger_meta SET value = ? WHERE key = 'schema_version'", (version,))
    finally:
        conn.close()  # the last close checkpoints: the file alone holds everything
    assert not Path(f"{path}-wal").exists()


def _fingerprint(state: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(state.iterdir()) if p.is_file()}


def _version_and_rows(path: Path) -> tuple[str, int]:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        version = conn.execute("SELECT value FROM ledger_meta WHERE key = 'schema_version'").fetchone()[0]
        return str(version), int(conn.execute("SELECT count(*) FROM operations").fetchone()[0])
    finally:
        conn.close()


def test_a_newer_ledger_is_refused_naming_both_versions_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / ".codeplane" / "ledger.db"
    _ledger_with_rows(path, 3, version=_NEWER)
    before = _fingerprint(path.parent)
    ledger = Ledger(path)
    with pytest.raises(CodePlaneError) as refused:
        ledger.open()
    assert refused.value.error is NEWER_LEDGER_ERROR
    assert f"ledger schema {_NEWER}" in refused.value.message
    assert f"(ledger schema {SCHEMA_VERSION})" in refused.value.message
    assert refused.value.details == {"path": str(path), "ledger_schema": _NEWER, "supported_schema": SCHEMA_VERSION}
    assert not ledger.is_open
    assert _fingerprint(path.parent) == before  # no row, no side file, no head mark, no quarantine


def test_an_older_ledger_is_migrated_and_records_this_version(tmp_path: Path) -> None:
    path = tmp_path / ".codeplane" / "ledger.db"
    _ledger_with_rows(path, 2, version="0")
    ledger = Ledger(path)
    ledger.open()
    ledger.record(_op(9))
    assert ledger.verify().ok
    ledger.close()
    assert _version_and_rows(path) == (str(SCHEMA_VERSION), 3)


def test_server_status_and_doctor_refuse_a_newer_ledger(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    assert cpl("init", str(repo), cwd=repo).returncode == 0
    path = repo / ".codeplane" / "ledger.db"
    _ledger_with_rows(path, 2, version=_NEWER)
    before = _version_and_rows(path), hashlib.sha256(path.read_bytes()).hexdigest()
    both = f"records ledger schema {_NEWER}, which this CodePlane (ledger schema {SCHEMA_VERSION}) does not know"

    up = subprocess.run([*CPL, "up", str(repo), "--port", "0"], cwd=repo, env=cpl_env(), capture_output=True,
                        text=True, timeout=120, check=False)
    assert up.returncode == 2, up.stderr
    assert f"error {NEWER_LEDGER_ERROR.code} {NEWER_LEDGER_ERROR.name}: {path} {both}" in up.stderr
    # Refused before the start binds a port and says it serves (the staged boot opened the ledger after that).
    assert "serving" not in up.stdout + up.stderr and "Traceback" not in up.stderr, (up.stdout, up.stderr)

    tasks = cpl_json("status", str(repo), cwd=repo)["tasks"]
    assert tasks["ledger"]["refused"]["code"] == NEWER_LEDGER_ERROR.code
    assert both in tasks["ledger"]["refused"]["message"] and not tasks["open_tasks"]

    doctor = cpl("doctor", str(repo), "--json", cwd=repo)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert doctor.returncode == 1 and not checks["ledger schema"]["ok"] and both in checks["ledger schema"]["detail"]
    assert "ledger hash chain" not in checks  # a newer version's chain is not this one's to judge

    assert (_version_and_rows(path), hashlib.sha256(path.read_bytes()).hexdigest()) == before
