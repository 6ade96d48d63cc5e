"""``testing/orphans.py``: only runner processes of this repository whose server is gone are killed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codeplane.testing.orphans import OWNER_ENV, owner_token, reap_orphans, start_time

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds processes through /proc")


def _gone(proc: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + 10
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc.poll() is not None


def test_only_processes_of_this_repository_with_a_dead_or_reused_owner_die(tmp_path: Path) -> None:
    state_dir = tmp_path / "repo" / ".codeplane"
    me = os.getpid()
    owners = {
        "alive": owner_token(state_dir),  # this process: a service still running its runs
        "dead": f"999999999:1:{state_dir}",
        "reused pid": f"{me}:{(start_time(me) or 0) + 1}:{state_dir}",  # same pid, another process's start
        "other repo": f"999999999:1:{tmp_path / 'other' / '.codeplane'}",
    }
    procs = {name: subprocess.Popen(["sleep", "60"], env={**os.environ, OWNER_ENV: token}, start_new_session=True)
             for name, token in owners.items()}
    try:
        time.sleep(0.2)  # the environment is readable once exec has happened
        reaped = reap_orphans(state_dir)
        assert sorted(reaped) == sorted([procs["dead"].pid, procs["reused pid"].pid])
        assert _gone(procs["dead"]) and _gone(procs["reused pid"])
        assert procs["alive"].poll() is None and procs["other repo"].poll() is None
        assert reap_orphans(state_dir) == []
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()
