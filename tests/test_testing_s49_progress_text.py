"""A run's text while it is going (QA 33 §8): "running 55%: no cases in 25.0s (targets: 25 not_run)" said the
targets would not run, and a percentage beside no case. Targets without a result are ``running`` (in a process)
or ``queued`` until the run ends; only an ended run has ``not_run`` ones. Real runs of the real service."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from codeplane.server.tools.tests_run_models import TestRunResult, render_run
from codeplane.server.tools.tests_run_render import render_test_run
from codeplane.testing import RunRecord, RunSnapshot, TestingService
from tests.builders import make_repo
from tests.testing_service import finish, service_for

pytestmark = pytest.mark.usefixtures("lean_pytest")


def _until(record: RunRecord, ready: object, timeout: float = 60) -> RunSnapshot:
    deadline = time.monotonic() + timeout
    while True:
        snapshot = record.snapshot()
        if callable(ready) and ready(snapshot):
            return snapshot
        assert time.monotonic() < deadline and not snapshot.finished, snapshot
        record.wait(record.version, 0.2)


def _outcomes(snapshot: RunSnapshot) -> dict[str, str]:
    return {r.target.target_id: r.outcome for r in snapshot.targets}


def test_targets_waiting_for_a_worker_are_queued_and_the_one_in_a_process_running(
        tmp_path: Path, services: list[TestingService]) -> None:
    flag = tmp_path / "go"
    wait = f"while [ ! -e {flag} ]; do sleep 0.05; done\nexit 0\n"
    repo = make_repo(tmp_path / "repo", {"checks/a.sh": wait, "checks/b.sh": wait, "checks/c.sh": wait})
    service = service_for(repo, workers=1, retry_failed=False,
                          custom=[{"pattern": "checks/*.sh", "runner": "shell", "cmd": ["sh", "{path}"]}])
    services.append(service)
    record = service.start_run(["checks"])
    snapshot = _until(record, lambda s: "running" in _outcomes(s).values())
    assert sorted(_outcomes(snapshot).values()) == ["queued", "queued", "running"], _outcomes(snapshot)
    text = render_test_run(TestRunResult(**render_run(snapshot)))
    head = text.splitlines()[0]
    assert re.fullmatch(rf"{record.run_id} running \d+%: no case reported yet in [\d.]+s "
                        r"\(targets: 1 running, 2 queued\)", head), head
    assert "not_run" not in text, text
    flag.write_text("")
    ended = finish(record)
    assert set(_outcomes(ended).values()) == {"passed"}, _outcomes(ended)


def test_a_percentage_before_any_target_ended_says_where_it_comes_from(
        tmp_path: Path, services: list[TestingService]) -> None:
    """One pytest process for every file: its cases finish (the percentage grows) long before the files'
    results are added when the process ends."""
    flag = tmp_path / "go"
    slow = ("import os, time\n\n\ndef test_wait():\n"
            f"    while not os.path.exists({str(flag)!r}):\n        time.sleep(0.05)\n")
    fast = "".join(f"def test_{n}():\n    pass\n\n\n" for n in range(8))
    repo = make_repo(tmp_path / "repo", {"pytest.ini": "[pytest]\n", "tests/test_a.py": fast,
                                         "tests/test_b.py": fast, "tests/test_z.py": slow})
    service = service_for(repo, workers=1, retry_failed=False)
    services.append(service)
    record = service.start_run(["tests"])
    snapshot = _until(record, lambda s: s.progress_percentage >= 1)
    assert set(_outcomes(snapshot).values()) == {"running"}, _outcomes(snapshot)
    head = render_test_run(TestRunResult(**render_run(snapshot))).splitlines()[0]
    assert re.fullmatch(rf"{record.run_id} running \d+%: no case reported yet in [\d.]+s \(targets: 3 running; "
                        r"cases are reported as each target ends\)", head), head
    flag.write_text("")
    ended = finish(record)
    assert set(_outcomes(ended).values()) == {"passed"}, _outcomes(ended)
    head = render_test_run(TestRunResult(**render_run(ended))).splitlines()[0]
    assert re.fullmatch(rf"{record.run_id}: 17 passed in [\d.]+s", head), head
