"""QA40 §5: a case id its target does not hold got a bare "no test X" from go, jest and vitest (pytest names the
nearest cases, as the README promises), and that error was retried like a test failure (the runner started
twice). Every runner now names the cases nearest the one asked for, and the error is not run again."""

from __future__ import annotations

from pathlib import Path

from codeplane.testing import RunSnapshot, TestingService
from tests.builders import make_repo
from tests.runner_projects import GO_PROJECT, JEST_PROJECT, VITEST_PROJECT, link_node_modules, require
from tests.testing_service import finish, service_for


def _only(run: RunSnapshot) -> tuple[str, str, int]:
    (record,) = run.targets
    assert record.final is not None
    return record.outcome, record.final.message, len(record.attempts)


def test_go_names_the_nearest_tests_for_an_unknown_one_and_runs_once(
        tmp_path: Path, services: list[TestingService]) -> None:
    require("go")
    repo = make_repo(tmp_path / "repo", GO_PROJECT)
    service = service_for(repo)
    services.append(service)
    outcome, message, attempts = _only(finish(service.start_run(["svc/calc::TestAddd"]), timeout=240))
    assert (outcome, attempts) == ("error", 1), (outcome, message, attempts)
    assert message == "no test case TestAddd in svc/calc; it holds TestAdd (+2 more)", message


def test_jest_and_vitest_name_the_nearest_cases_for_an_unknown_one_and_run_once(
        tmp_path: Path, services: list[TestingService]) -> None:
    require("jest")
    require("vitest")
    repo = make_repo(tmp_path / "repo", {**JEST_PROJECT, **VITEST_PROJECT}, commit=False)
    link_node_modules(repo / "web")
    link_node_modules(repo / "ui")
    service = service_for(repo)
    services.append(service)
    outcome, message, attempts = _only(finish(service.start_run(["web/src/sum.test.js::sum > ads"]), timeout=240))
    assert (outcome, attempts) == ("error", 1), (outcome, message, attempts)
    assert message == ("no test case sum > ads in web/src/sum.test.js; "
                       "it holds sum > adds, sum > fails, sum > skipped"), message
    outcome, message, attempts = _only(finish(service.start_run(["ui/sum.test.mjs::sum > fail"]), timeout=240))
    assert (outcome, attempts) == ("error", 1), (outcome, message, attempts)
    assert message == ("no test case sum > fail in ui/sum.test.mjs; "
                       "it holds sum > fails, sum > adds, sum > skipped"), message
