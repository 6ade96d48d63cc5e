"""QA41 §3: a test file whose path starts like an option (``-k/``, ``-legacy/``, ``-x.rs``) or an argument file
(``@at/``) reaches each real runner as a path: its failure is a failure, and it cannot break a batch and make a
passing neighbour look flaky."""

from __future__ import annotations

from pathlib import Path

from codeplane.testing import RunSnapshot, TestingService
from tests.builders import make_repo
from tests.runner_projects import link_node_modules, require
from tests.testing_service import finish, service_for

FAILING = "def test_fails():\n    assert 1 + 1 == 3\n"


def _outcomes(snapshot: RunSnapshot) -> dict[str, str]:
    return {r.target.target_id: r.outcome for r in snapshot.targets}


def test_pytest_files_under_option_like_directories_fail_as_pytest_says(
        tmp_path: Path, services: list[TestingService]) -> None:
    """``pytest -k/test_a.py`` read ``-k`` as a keyword (``passed: no cases``/skipped) and ``-legacy/test_c.py`` as
    ``-l egacy/...`` (a usage error blamed on the whole batch: the passing ``test_b.py`` came out FLAKY)."""
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "-k/test_a.py": FAILING,
        "-legacy/test_c.py": FAILING,
        "@at/test_d.py": FAILING,
        "test_b.py": "def test_passes():\n    assert True\n",
    })
    service = service_for(repo)
    services.append(service)
    alone = finish(service.start_run(["-k/test_a.py"]))
    assert _outcomes(alone) == {"-k/test_a.py": "failed"}, alone
    (case,) = alone.targets[0].final.cases if alone.targets[0].final else ()
    assert (case.case_id, case.outcome) == ("-k/test_a.py::test_fails", "failed")
    whole = finish(service.start_run())
    assert _outcomes(whole) == {"-k/test_a.py": "failed", "-legacy/test_c.py": "failed", "@at/test_d.py": "failed",
                                "test_b.py": "passed"}, _outcomes(whole)
    target = next(t.target for t in whole.targets if t.target.target_id == "-legacy/test_c.py")
    assert target.cmd[-1] == "./-legacy/test_c.py"  # the command shown to the agent runs it too


def test_jest_and_vitest_files_under_a_dash_directory_fail_as_the_runners_say(
        tmp_path: Path, services: list[TestingService]) -> None:
    require("jest")
    require("vitest")
    repo = make_repo(tmp_path / "repo", {
        "web/package.json": '{"name": "web", "private": true, "devDependencies": {"jest": "29"}}\n',
        "web/-k/a.test.js": "test('fails', () => { expect(1).toBe(2); });\n",
        "web/b.test.js": "test('passes', () => { expect(1).toBe(1); });\n",
        "ui/package.json": '{"name": "ui", "private": true, "type": "module", "devDependencies": {"vitest": "3"}}\n',
        "ui/-k/a.test.mjs": "import {test, expect} from 'vitest';\ntest('fails', () => { expect(1).toBe(2); });\n",
        "ui/b.test.mjs": "import {test, expect} from 'vitest';\ntest('passes', () => { expect(1).toBe(1); });\n",
    }, commit=False)
    link_node_modules(repo / "web")
    link_node_modules(repo / "ui")
    service = service_for(repo, retry_failed=False)
    services.append(service)
    run = finish(service.start_run(), timeout=240)
    assert _outcomes(run) == {"web/-k/a.test.js": "failed", "web/b.test.js": "passed",
                              "ui/-k/a.test.mjs": "failed", "ui/b.test.mjs": "passed"}, _outcomes(run)


def test_a_cargo_test_named_like_an_option_runs(tmp_path: Path, services: list[TestingService]) -> None:
    """``cargo test --test -x`` is a usage error; ``--test=-x`` runs ``tests/-x.rs``."""
    require("cargo")
    repo = make_repo(tmp_path / "repo", {
        "rs/Cargo.toml": '[package]\nname = "dash"\nversion = "0.1.0"\nedition = "2021"\n\n[lib]\ndoctest = false\n',
        "rs/src/lib.rs": "pub fn two() -> i32 { 2 }\n",
        "rs/tests/-x.rs": "#[test]\nfn fails() { assert_eq!(dash::two(), 3); }\n",
    })
    service = service_for(repo, retry_failed=False)
    services.append(service)
    run = finish(service.start_run(["rs/tests/-x.rs"]), timeout=300)
    assert _outcomes(run) == {"rs/tests/-x.rs": "failed"}, run
    final = run.targets[0].final
    assert final is not None and [(c.case_id, c.outcome) for c in final.cases] == [("rs/tests/-x.rs::fails", "failed")]


def test_a_custom_command_gets_a_dash_file_as_a_path(tmp_path: Path, services: list[TestingService]) -> None:
    """``sh -ok.sh`` is ``sh`` with options ``-o k.sh``: a passing script failed."""
    repo = make_repo(tmp_path / "repo", {"-ok.sh": "exit 0\n", "bad.sh": "exit 3\n"})
    service = service_for(repo, retry_failed=False,
                          custom=[{"pattern": "*.sh", "runner": "shell", "cmd": ["sh", "{path}"]}])
    services.append(service)
    run = finish(service.start_run())
    assert _outcomes(run) == {"-ok.sh": "passed", "bad.sh": "failed"}, _outcomes(run)
