"""QA40 §7: a hanging Jest file ran ~60 s in its batch (the sum of the batch's budgets), was killed with its batch
and ran again alone for its 30 s: a 30 s timeout cost ~100 s, and the batch's 60 s were in no attempt. Jest is
now watched file by file (CodePlane's reporter): the hung file times out in its batch after its own timeout,
naming the test that hung, and the files that ended before it keep their results. Vitest (no such stream) is
still watched whole, and the run's answer now says where an overrun batch's time went."""

from __future__ import annotations

from pathlib import Path

from codeplane.testing import RunSnapshot, TestingService
from tests.builders import make_repo
from tests.runner_projects import link_node_modules, require
from tests.testing_service import finish, service_for

HANG = "test('hangs', () => new Promise(() => {}), 600000);\n"


def _records(run: RunSnapshot) -> dict[str, tuple[str, list[str]]]:
    return {r.target.target_id: (r.outcome, [a.batch_id for a in r.attempts]) for r in run.targets}


def test_a_hung_jest_file_times_out_in_its_batch_after_its_own_timeout(
        tmp_path: Path, services: list[TestingService]) -> None:
    require("jest")
    repo = make_repo(tmp_path / "repo", {
        "web/package.json": '{"name": "web", "private": true, "devDependencies": {"jest": "29"}}\n',
        "web/__tests__/hang.test.js": HANG,
        "web/__tests__/ok.test.js": "test('ok', () => { expect(1).toBe(1); });\n",
        "web/__tests__/more.test.js": "describe('d', () => { test('m', () => { expect(2).toBe(2); }); });\n",
    }, commit=False)
    link_node_modules(repo / "web")
    service = service_for(repo, workers=1, target_timeout_sec=4)
    services.append(service)
    run = finish(service.start_run(), timeout=240)
    records = _records(run)
    hang = next(r for r in run.targets if r.target.target_id == "web/__tests__/hang.test.js")
    assert records["web/__tests__/hang.test.js"] == ("timeout", ["a1-p001"]), records  # never run again alone
    assert hang.final is not None
    assert "exceeded the per-target timeout of 4s while running web/__tests__/hang.test.js::hangs" in \
        hang.final.message, hang.final.message
    assert records["web/__tests__/ok.test.js"][0] == "passed" and records["web/__tests__/more.test.js"][0] == "passed"
    assert all(len(batches) == 1 for _, batches in records.values()), records
    assert "ran past its budget" not in run.message


def test_an_overrun_vitest_batch_is_told_in_the_run_answer(tmp_path: Path, services: list[TestingService]) -> None:
    require("vitest")
    repo = make_repo(tmp_path / "repo", {
        "ui/package.json": '{"name": "ui", "private": true, "type": "module", "devDependencies": {"vitest": "3"}}\n',
        "ui/hang.test.mjs": "import {test} from 'vitest';\n" + HANG,
        "ui/ok.test.mjs": "import {test, expect} from 'vitest';\ntest('ok', () => { expect(1).toBe(1); });\n",
    }, commit=False)
    link_node_modules(repo / "ui")
    service = service_for(repo, workers=1, target_timeout_sec=3)
    services.append(service)
    run = finish(service.start_run(), timeout=240)
    assert {r.target.target_id: r.outcome for r in run.targets} == {"ui/hang.test.mjs": "timeout",
                                                                    "ui/ok.test.mjs": "passed"}
    assert ("a vitest process of 2 files ran past its budget of 6s with no result and was killed; "
            "each file then ran alone") in run.message, run.message
