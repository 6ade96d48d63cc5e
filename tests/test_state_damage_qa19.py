"""CodePlane's own state files survive a directory standing in their place (ARCHITECTURE's damage table: derived
or rewritten state). A directory named ``port``, ``server.pid`` or ``chosen_port`` made ``cpl up``/``cpl init``
answer 9001 "please report it", and ``ledger.db`` as a directory failed every start although a damaged ledger
is moved aside and reported."""

from __future__ import annotations

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
