"""CodePlane's own state files survive a directory standing in their place (ARCHITECTURE's damage table: derived
or rewritten state). A directory named ``port``, ``server.pid`` or ``chosen_port`` made ``cpl up``/``cpl init``
answer 9001 "please report it", and ``ledger.db`` as a directory failed every start although a damaged ledger
is moved aside and reported."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.builders import call, cpl, cpl_json, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("name", ["port", "server.pid", "ledger.db"])
async def test_the_server_starts_over_a_directory_in_place_of_a_state_file(tmp_path: Path, name: str) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    assert cpl("init", cwd=repo).returncode == 0
    (repo / ".codeplane" / name / "sub").mkdir(parents=True)
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            described = await call(client, "describe", {})
        assert described["repo_root"] == str(repo)
        status = cpl_json("status", cwd=repo)
        assert status["running"] is True and status["port"] == handle.port, status
    assert not (repo / ".codeplane" / name).is_dir()
    if name == "ledger.db":  # moved aside as a damaged ledger is, and reported
        assert [p.name for p in (repo / ".codeplane").glob("ledger.corrupt-*.db")]
        doctor = cpl_json("doctor", cwd=repo)
        [check] = [c for c in doctor["checks"] if c["name"] == "quarantined ledger"]
        assert not check["ok"], check


def test_init_rewrites_a_chosen_port_that_is_a_directory(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    (repo / ".codeplane" / "chosen_port" / "sub").mkdir(parents=True)
    done = cpl("init", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert int((repo / ".codeplane" / "chosen_port").read_text()) > 0


def _immutable(path: Path, on: bool) -> bool:
    """``chattr ±i path``; False where that is not possible (not root, a file system without the flag)."""
    done = subprocess.run(["chattr", "+i" if on else "-i", str(path)], check=False, capture_output=True)
    return done.returncode == 0


def test_a_state_directory_nothing_can_be_created_in_fails_the_start_with_a_storage_error(tmp_path: Path) -> None:
    # The server served where nobody could find it: no port file, no banner, `cpl status` naming port None.
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    with running_server(repo):
        # Stopped as a user stops it: every store exists and was closed clean, so only the files a start creates
        # (its port and pid files) need the directory.
        assert cpl("down", cwd=repo).returncode == 0
    state = repo / ".codeplane"
    if shutil.which("chattr") is None or not _immutable(state, True):
        pytest.skip("chattr +i is not possible here (needs root and a file system with the immutable flag)")
    try:
        started = cpl("up", "--port", "0", "--json", cwd=repo, timeout=60)
    finally:
        _immutable(state, False)
    assert started.returncode != 0, started.stdout
    error = json.loads(started.stdout.splitlines()[-1])["error"]
    assert error["code"] in (5011, 5012) and error["details"]["area"] == "codeplane_state", error
    assert not (state / "port").exists()
