"""`.codeplane/` damage policies (issue 24, ARCHITECTURE.md): real files, real SQLite and Tantivy, real `cpl`.

Derived stores: damage never fails a boot; the store is rebuilt, `/status` says so, answers stay exact and
`cpl doctor` is clean afterwards. Evidence (the ledger): moved aside with its SHA-256, a new chain whose
first row records it, and `cpl doctor` failing until the user acknowledges it. The matrix itself is
`tests/damage_matrix.py` (rerunnable as a script).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from tests.builders import cpl, cpl_env, running_server
from tests.damage_matrix import CASES, Case, prepare, run_case

_BY_NAME = {c.name: c for c in CASES}
_DERIVED = ["index.db garbled page", "index.db is a directory", "tantivy/ is a file", "test_runs.db garbage",
            "test_runs.db truncated", "test_costs.db is a directory", "locks/ is a file"]
_EVIDENCE = ["ledger.db garbled page", "ledger.db emptied (0 bytes)"]


@pytest.mark.parametrize("name", _DERIVED)
def test_damaged_derived_store_is_rebuilt_and_never_fails_a_boot(tmp_path: Path, template: Path, name: str) -> None:
    case: Case = _BY_NAME[name]
    out = run_case(case, tmp_path, template)
    assert out.doctor_before == 1 and out.failed_checks_before, out
    assert out.up_ok, out.up_error
    assert out.search_exact and out.write_ok
    if case.target != "locks":  # replaced when a write first needs it, nothing to report at start
        assert any(case.target.split("/")[0].split(".")[0] in w or "Tantivy" in w for w in out.warnings), out.warnings
    assert out.doctor_after == 0, out.failed_checks_after


@pytest.mark.parametrize("name", _EVIDENCE)
def test_damaged_ledger_is_quarantined_with_its_sha256_and_reported_until_acknowledged(
        tmp_path: Path, template: Path, name: str) -> None:
    out = run_case(_BY_NAME[name], tmp_path, template)
    assert out.doctor_before == 1 and "ledger.db integrity" in out.failed_checks_before
    assert out.up_ok and out.search_exact and out.write_ok
    assert len(out.evidence) == 1 and out.evidence_sha_ok
    assert out.first_row is not None and out.first_row.startswith("ledger.quarantine")
    assert any("quarantined" in w for w in out.warnings)
    assert out.doctor_after == 1 and out.failed_checks_after == ["quarantined ledger"]
    assert out.doctor_after_ack == 0


def test_a_deleted_ledger_is_noticed_recorded_and_reported_until_acknowledged(tmp_path: Path, template: Path) -> None:
    out = run_case(_BY_NAME["ledger.db deleted"], tmp_path, template)
    assert out.doctor_before == 1 and "ledger.db present" in out.failed_checks_before
    assert out.up_ok and out.search_exact and out.write_ok
    assert len(out.evidence) == 1 and out.evidence[0].startswith("ledger.missing-")
    assert out.first_row == "ledger.missing"
    assert any("missing" in w for w in out.warnings)
    assert out.doctor_after == 1 and out.failed_checks_after == ["missing ledger"]
    assert out.doctor_after_ack == 0


def test_clear_then_up_is_a_fresh_ledger_not_a_missing_one(used_repo: Path, tmp_path: Path) -> None:
    env = cpl_env(home=tmp_path / "xdg")
    assert cpl("clear", "--json", cwd=used_repo, env=env).returncode == 0
    with running_server(used_repo, env=env) as server:
        server.wait_serving()
        assert server.get("/status").json()["storage"]["warnings"] == []
    assert cpl("doctor", "--json", cwd=used_repo, env=env).returncode == 0


@pytest.mark.parametrize("name", ["config.yaml YAML syntax error", "config.yaml unknown top-level key"])
def test_broken_config_refuses_to_start_with_a_user_error(tmp_path: Path, template: Path, name: str) -> None:
    out = run_case(_BY_NAME[name], tmp_path, template)
    assert out.up_exit == 78 and not out.traceback
    assert ".codeplane/config.yaml:" in out.up_error
    assert out.status_ok and out.clear_ok
    assert out.doctor_after == 1 and "config parses and validates" in out.failed_checks_after


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One used repository per worker; each test damages its own copy."""
    return prepare(tmp_path_factory.mktemp("damage-template"))


@pytest.fixture
def used_repo(tmp_path: Path, template: Path) -> Path:
    return prepare(tmp_path, template)


def test_doctor_fix_applies_the_policies_offline(used_repo: Path, tmp_path: Path) -> None:
    env = cpl_env(home=tmp_path / "xdg")
    state = used_repo / ".codeplane"
    (state / "test_runs.db").write_bytes(b"garbage" * 100)
    (state / "test_costs.db").write_bytes(b"")
    data = bytearray((state / "ledger.db").read_bytes())
    data[4096:8192] = b"\x00" * 4096
    (state / "ledger.db").write_bytes(bytes(data))
    (state / "server.pid").write_text("999999\n")
    fixed = cpl("doctor", "--fix", "--json", cwd=used_repo, env=env)
    body = json.loads(fixed.stdout)
    repairs = {r["target"]: r for r in body["repairs"]}
    assert repairs["test_runs.db"]["action"] == "dropped" and repairs["test_costs.db"]["action"] == "dropped"
    assert repairs["ledger.db"]["action"] == "quarantined" and "sha256" in repairs["ledger.db"]["detail"]
    assert repairs["server.pid"]["action"] == "removed"
    kept = sorted(state.glob("ledger.corrupt-*.db"))
    assert len(kept) == 1 and kept[0].read_bytes() == bytes(data)
    # Everything derived is healthy again; the quarantined ledger is reported until acknowledged.
    assert fixed.returncode == 1 and [c["name"] for c in body["checks"] if not c["ok"]] == ["quarantined ledger"]
    human = cpl("doctor", "--fix", cwd=used_repo, env=env)
    assert human.returncode == 1 and human.stdout.startswith("Repairs: nothing to repair.")
    acked = cpl("doctor", "--ack-quarantine", "--json", cwd=used_repo, env=env)
    assert acked.returncode == 0 and json.loads(acked.stdout)["acknowledged"] == [kept[0].name]
    assert kept[0].read_bytes() == bytes(data)  # acknowledging never touches the evidence
    first = sqlite3.connect(state / "ledger.db").execute(
        "SELECT op_type, detail FROM operations ORDER BY op_id LIMIT 1").fetchone()
    assert first[0] == "ledger.quarantine" and json.loads(first[1])["quarantine"]["file"] == kept[0].name


def test_doctor_fix_refuses_while_a_server_runs(used_repo: Path, tmp_path: Path) -> None:
    env = cpl_env(home=tmp_path / "xdg")
    with running_server(used_repo, env=env):
        proc = cpl("doctor", "--fix", "--json", cwd=used_repo, env=env)
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["code"] == 2004


def test_a_changed_quarantined_ledger_fails_doctor_even_when_acknowledged(used_repo: Path, tmp_path: Path) -> None:
    env = cpl_env(home=tmp_path / "xdg")
    state = used_repo / ".codeplane"
    (state / "ledger.db").write_bytes(b"garbage" * 100)
    cpl("doctor", "--fix", "--ack-quarantine", cwd=used_repo, env=env)
    assert cpl("doctor", cwd=used_repo, env=env).returncode == 0
    kept = next(state.glob("ledger.corrupt-*.db"))
    kept.write_bytes(b"tampered")
    doctor = json.loads(cpl("doctor", "--json", cwd=used_repo, env=env).stdout)
    bad = [c for c in doctor["checks"] if not c["ok"]]
    assert bad[0]["name"] == "quarantined ledger" and "changed" in bad[0]["detail"]


# -- a full disk ------------------------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 12 MiB tmpfs (the repository and its .codeplane/ live on it); skipped where mounting is not allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(mount)], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path) -> Path:
    filler = disk / "filler.bin"
    with filler.open("wb") as handle:
        try:
            while True:
                handle.write(b"\0" * (256 * 1024))
                handle.flush()
        except OSError:
            pass
    return filler


@pytest.mark.anyio
async def test_full_disk_write_is_a_retryable_storage_error_and_lands_once_space_is_freed(
        small_disk: Path, tmp_path: Path) -> None:
    from tests.builders import call, call_error, make_repo, mcp_client

    repo = make_repo(small_disk / "repo", {f"src/f{i}.py": f"x = {i}\n" for i in range(20)})
    env = cpl_env(home=tmp_path / "xdg")
    assert cpl("init", "--json", cwd=repo, env=env).returncode == 0
    edits = {"edits": [{"path": f"src/f{i}.py", "action": "update", "start_line": 1, "end_line": 1,
                        "new_content": f"x = {i} + {'9' * 40_000}\n"} for i in range(20)]}
    before = {p: p.read_bytes() for p in (repo / "src").iterdir()}
    with running_server(repo, env=env) as server:
        async with mcp_client(server) as client:
            filler = _fill(small_disk)
            error = await call_error(client, "write_source", edits)
            assert error["code"] == 5010 and error["error"] == "STORAGE_FULL" and error["retryable"] is True
            assert "free space" in error["message"] and error["details"]["errno"] == "ENOSPC"
            assert {p: p.read_bytes() for p in (repo / "src").iterdir()} == before
            status = server.get("/status")
            assert status.status_code == 200
            filler.unlink()
            result = await call(client, "write_source", edits)
    assert result
    assert all(b"9" * 40_000 in (repo / "src" / f"f{i}.py").read_bytes() for i in range(20))


def test_full_disk_index_update_is_a_storage_error_and_the_index_catches_up(small_disk: Path) -> None:
    from tests.builders import make_repo
    from tests.index_helpers import all_hits, running_index

    repo = make_repo(small_disk / "repo", {"a.py": "alpha = 1\n" + "# padding line\n" * 2000})
    with running_index(repo) as index:
        # A same-size rewrite in place needs no new blocks, so it lands on a full disk; the index's
        # SQLite and Tantivy writes do need them.
        filler = _fill(small_disk)
        text = (repo / "a.py").read_text()
        with (repo / "a.py").open("r+") as handle:
            handle.write("omega" + text[5:10])
        with pytest.raises(CodePlaneError) as info:
            for _ in range(20):  # WAL pages already allocated may absorb the first epochs
                index.refresh_paths(["a.py"])
                (repo / "a.py").write_text((repo / "a.py").read_text().replace("# padding", "# paddinG", 1))
        assert info.value.code == 5010 and info.value.retryable
        assert "updating the index failed" in info.value.message
        assert index.status()["state"] != "stopped"
        filler.unlink()
        deadline = time.monotonic() + 30
        while not all_hits(index, "omega") and time.monotonic() < deadline:
            time.sleep(0.2)  # the paths stayed pending: the indexer thread retries once it can write
        assert [h.path for h in all_hits(index, "omega")] == ["a.py"]


@pytest.fixture
def read_only_dir(small_disk: Path) -> Iterator[Path]:
    """A directory on a file system remounted read-only (what a full or failing disk often turns into)."""
    state = small_disk / "state"
    state.mkdir()
    proc = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot remount read-only here: {proc.stderr.strip()}")
    yield state
    subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=False)


def test_derived_stores_on_a_read_only_file_system_run_in_memory(read_only_dir: Path) -> None:
    from codeplane.testing.costs import CostHistory
    from codeplane.testing.run_store import RunStore

    costs = CostHistory(read_only_dir / "test_costs.db")
    runs = RunStore(read_only_dir / "test_runs.db", keep=5)
    assert costs.recovery is not None and costs.recovery.action == "in_memory"
    assert runs.recovery is not None and runs.recovery.action == "in_memory"
    costs.record({("pytest", "tests/test_a.py"): 1.5})
    assert costs.medians([("pytest", "tests/test_a.py")]) == {("pytest", "tests/test_a.py"): 1.5}
    assert not list(read_only_dir.iterdir())


def test_the_ledger_on_a_read_only_file_system_is_a_storage_error_naming_it(read_only_dir: Path) -> None:
    from codeplane.tasks.ledger import Ledger

    with pytest.raises(CodePlaneError) as info:
        Ledger(read_only_dir / "ledger.db").open()
    assert info.value.code == 5011 and info.value.details["path"].endswith("ledger.db")
    assert "read-only" in info.value.message


def test_a_test_run_stopped_by_a_full_disk_names_the_catalog_entry() -> None:
    import errno

    from codeplane.testing.execution import crash_message

    message = crash_message(OSError(errno.ENOSPC, "No space left on device", "/repo/.codeplane/testing/x"))
    assert message.startswith("STORAGE_FULL (5010): the test run failed: No space left on device")
    assert "free space" in message
    assert crash_message(ValueError("boom")) == "internal error: ValueError: boom"


def test_doctor_fix_on_a_read_only_file_system_drops_and_quarantines_nothing(small_disk: Path) -> None:
    """SQLite says "unable to open database file" for a store whose directory it cannot write: doctor called that
    an integrity failure of every store and `--fix` would have dropped them and quarantined the ledger. It is no
    damage: named as a storage error, left as it is."""
    from codeplane.cli.repair import repair
    from codeplane.tasks.inspection import check_ledger
    from codeplane.tasks.ledger import Ledger
    from codeplane.testing.run_store import RunStore
    from tests.builders import make_repo

    repo = make_repo(small_disk / "repo", {"a.py": "x = 1\n"})
    state = repo / ".codeplane"
    state.mkdir()
    ledger = Ledger(state / "ledger.db")
    ledger.open()
    ledger.close()
    RunStore(state / "test_runs.db", keep=5).close()
    before = sorted(p.name for p in state.iterdir())
    proc = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot remount read-only here: {proc.stderr.strip()}")
    try:
        done = repair(repo)
        left = {r.target: r for r in done if not r.fixed}
        assert {"ledger.db", "test_runs.db"} <= set(left), done
        assert all("5011" in left[name].detail for name in ("ledger.db", "test_runs.db")), done
        assert not [r for r in done if r.fixed and r.action in ("dropped", "quarantined")], done
        check = check_ledger(repo)[0]
        assert not check.ok and check.detail.startswith("5011") and "--fix" in check.fix, check
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=False)
    assert sorted(p.name for p in state.iterdir()) == before
