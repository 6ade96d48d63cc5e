"""pytest runs agree with pytest's own CLI (QA23): interruptions, retries in a fresh process, XPASS, ``-x``,
process deaths, teardown errors, the run's timeout, ``--doctest-modules``, conftest import errors and hangs at
import, and the order failures are listed in. Real repositories, real pytest processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.server.tools.tests_run_models import MAX_DETAIL_CHARS, TestRunResult, render_run
from codeplane.server.tools.tests_run_render import render_test_run
from codeplane.testing import RunSnapshot, TestingService, batch
from tests.builders import make_repo
from tests.testing_service import finish, service_for

pytestmark = pytest.mark.usefixtures("lean_pytest")


def _outcomes(snapshot: RunSnapshot) -> dict[str, str]:
    return {r.target.target_id: r.outcome for r in snapshot.targets}


def _cases(snapshot: RunSnapshot) -> dict[str, str]:
    return {c.case_id: c.outcome for r in snapshot.targets if r.final for c in r.final.cases}


def _text(snapshot: RunSnapshot, include: str = "summary") -> str:
    return render_test_run(TestRunResult.model_validate(render_run(snapshot, include=include)))


def _message(snapshot: RunSnapshot, target: str) -> str:
    record = next(r for r in snapshot.targets if r.target.target_id == target)
    assert record.final is not None
    return record.final.message


def test_a_test_raising_keyboardinterrupt_or_calling_pytest_exit_errors_its_file_and_names_what_did_not_run(
        tmp_path: Path, services: list[TestingService]) -> None:
    """The interrupting test had only its setup's "passed" report: the file and the run said passed, and the
    tests after it vanished. pytest says ``!!! KeyboardInterrupt !!!`` and exits 2."""
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_a_ok.py": "def test_ok():\n    pass\n",
        "tests/test_kbd.py": ("def test_before():\n    pass\n\ndef test_kbd():\n    raise KeyboardInterrupt\n\n"
                              "def test_after():\n    pass\n"),
        "tests/test_pexit.py": ("import pytest\n\ndef test_before():\n    pass\n\ndef test_pytest_exit():\n"
                                "    pytest.exit('giving up: database unreachable', returncode=3)\n\n"
                                "def test_after():\n    assert 0, 'never runs'\n"),
        "tests/test_z_ok.py": "def test_fine():\n    pass\n\ndef test_also():\n    pass\n"})
    service = service_for(repo, workers=1, retry_failed=False)
    services.append(service)
    snapshot = finish(service.start_run())
    assert snapshot.state == "failed"
    assert _outcomes(snapshot) == {"tests/test_a_ok.py": "passed", "tests/test_kbd.py": "error",
                                   "tests/test_pexit.py": "error", "tests/test_z_ok.py": "passed"}
    cases = _cases(snapshot)
    assert cases["tests/test_kbd.py::test_kbd"] == "error" and cases["tests/test_kbd.py::test_before"] == "passed"
    assert cases["tests/test_pexit.py::test_pytest_exit"] == "error"
    assert "tests/test_kbd.py::test_after" not in cases and cases["tests/test_z_ok.py::test_also"] == "passed"
    kbd = _message(snapshot, "tests/test_kbd.py")
    assert "interrupted by KeyboardInterrupt while running tests/test_kbd.py::test_kbd" in kbd, kbd
    assert "not run (1): test_after" in kbd, kbd
    pexit = _message(snapshot, "tests/test_pexit.py")
    assert "pytest.exit() while running tests/test_pexit.py::test_pytest_exit: giving up: database unreachable" \
        in pexit, pexit
    assert "not run (1): test_after" in pexit, pexit
    assert snapshot.counts.passed == 5 and snapshot.counts.error == 2, snapshot.counts


def _registry_bug() -> str:
    return ("_registry = {}\n\n"
            "def register(name):\n"
            "    if name not in _registry:\n"
            "        _registry[name] = {'name': name}\n"
            "        return None\n"
            "    return _registry[name]\n\n"
            "def test_register_returns_entry():\n"
            "    assert register('x') == {'name': 'x'}, 'registry returned nothing'\n\n"
            "def test_other():\n    pass\n")


def test_a_retry_runs_in_a_fresh_process_so_state_left_by_the_first_attempt_cannot_pass_it(
        tmp_path: Path, services: list[TestingService]) -> None:
    """The in-process re-run found the module cache the first attempt had filled and passed: "2 passed", flaky,
    for a failure pytest reports on every invocation."""
    repo = make_repo(tmp_path / "repo", {"pytest.ini": "[pytest]\n", "tests/test_cache.py": _registry_bug()})
    service = service_for(repo)
    services.append(service)
    snapshot = finish(service.start_run())
    (record,) = snapshot.targets
    assert [a.result.outcome for a in record.attempts] == ["failed", "failed"], record.attempts
    assert record.attempts[0].batch_id != record.attempts[1].batch_id, "the retry has a process of its own"
    assert record.outcome == "failed" and snapshot.state == "failed" and record.flaky_cases == ()
    assert snapshot.counts.failed == 1 and snapshot.counts.passed == 1
    assert "registry returned nothing" in _text(snapshot)


def test_a_flaky_case_keeps_its_first_failure_in_the_answer(tmp_path: Path,
                                                            services: list[TestingService]) -> None:
    marker = tmp_path / "flaky-marker"
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_flaky.py": ("from pathlib import Path\n\n"
                                f"MARKER = Path({str(marker)!r})\n\n"
                                "def test_flaky():\n"
                                "    if not MARKER.exists():\n"
                                "        MARKER.write_text('seen')\n"
                                "        raise AssertionError('first attempt fails')\n\n"
                                "def test_always():\n    pass\n")})
    service = service_for(repo)
    services.append(service)
    snapshot = finish(service.start_run())
    (record,) = snapshot.targets
    assert record.outcome == "flaky" and record.flaky_cases == ("tests/test_flaky.py::test_flaky",)
    rendered = render_run(snapshot)
    (first,) = rendered["flaky_failures"]
    assert first.case_id == "tests/test_flaky.py::test_flaky" and "first attempt fails" in first.message
    text = _text(snapshot)
    assert "FLAKY tests/test_flaky.py::test_flaky failed first: AssertionError: first attempt fails" in text, text


def test_an_unexpected_pass_of_a_lenient_xfail_is_xpass_and_a_strict_one_fails(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_marks.py": ("import pytest\n\n"
                                "@pytest.mark.xfail(reason='lenient')\ndef test_xpass():\n    pass\n\n"
                                "@pytest.mark.xfail(reason='known')\ndef test_xfail():\n    assert 0\n\n"
                                "@pytest.mark.xfail(reason='should fail', strict=True)\n"
                                "def test_strict():\n    pass\n")})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    snapshot = finish(service.start_run())
    assert _cases(snapshot) == {"tests/test_marks.py::test_xpass": "xpass", "tests/test_marks.py::test_xfail": "xfail",
                                "tests/test_marks.py::test_strict": "failed"}
    xpass = next(c for r in snapshot.targets if r.final for c in r.final.cases if c.outcome == "xpass")
    assert xpass.message == "lenient"
    counts = snapshot.counts
    assert (counts.xpass, counts.xfail, counts.failed, counts.passed) == (1, 1, 1, 0)
    assert render_run(snapshot)["counts"].xpass == 1
    assert "1 xpassed" in _text(snapshot).splitlines()[0], _text(snapshot)


def test_files_a_stopped_pytest_never_ran_are_not_run_not_skipped(tmp_path: Path,
                                                                  services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\naddopts = -x\n",
        "tests/test_a_fail.py": "def test_fail():\n    assert 0, 'A fails'\n\ndef test_a2():\n    pass\n",
        "tests/test_b.py": "def test_b():\n    pass\n",
        "tests/test_c.py": "def test_c():\n    pass\n"})
    service = service_for(repo, workers=1, retry_failed=False)
    services.append(service)
    snapshot = finish(service.start_run())
    assert _outcomes(snapshot) == {"tests/test_a_fail.py": "failed", "tests/test_b.py": "not_run",
                                   "tests/test_c.py": "not_run"}, _outcomes(snapshot)
    assert "pytest stopped (stopping after 1 failures" in _message(snapshot, "tests/test_b.py")
    assert "1 of 2 cases did not run" in _message(snapshot, "tests/test_a_fail.py")
    assert snapshot.state == "failed" and snapshot.counts.skipped == 0


def test_a_segfault_message_keeps_its_head_line_within_the_answers_bound(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_segv.py": ("import ctypes\n\ndef test_before():\n    pass\n\n"
                               "def test_segv():\n    ctypes.string_at(0)\n\ndef test_after():\n    pass\n")})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    snapshot = finish(service.start_run())
    (target,) = render_run(snapshot)["targets"]
    (attempt,) = target.attempts
    assert attempt.message.startswith(
        "the pytest process was killed by SIGSEGV while running tests/test_segv.py::test_segv; 1 of 3 cases"), \
        attempt.message
    assert len(attempt.message) <= MAX_DETAIL_CHARS
    assert "Fatal Python error: Segmentation fault" in attempt.message
    assert 'test_segv.py", line 7 in test_segv' in attempt.message
    assert "_pytest" not in attempt.message and "frames of pytest and pluggy" in attempt.message


def test_a_failed_test_whose_fixture_teardown_raises_reports_both(tmp_path: Path,
                                                                  services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_fixtures.py": ("import pytest\n\n@pytest.fixture\ndef broken_teardown():\n    yield 1\n"
                                   "    raise RuntimeError('teardown exploded')\n\n"
                                   "def test_teardown_and_fail(broken_teardown):\n    assert broken_teardown == 2\n")})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    snapshot = finish(service.start_run())
    (case,) = [c for r in snapshot.targets if r.final for c in r.final.cases]
    assert case.outcome == "failed" and case.message.startswith("assert 1 == 2"), case
    assert "(and an error in teardown: RuntimeError: teardown exploded)" in case.message, case.message
    assert "teardown exploded" in case.traceback and "assert 1 == 2" in case.traceback


def test_the_runs_timeout_names_the_running_test_and_keeps_what_finished(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_loop.py": ("def test_fast():\n    pass\n\ndef test_loop():\n    while True:\n        pass\n\n"
                               "def test_after():\n    pass\n")})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    snapshot = finish(service.start_run(timeout_sec=4))
    assert snapshot.state == "timed_out"
    message = _message(snapshot, "tests/test_loop.py")
    assert "the run's timeout of 4s was reached while running tests/test_loop.py::test_loop" in message, message
    assert "1 cases had finished" in message
    assert _cases(snapshot) == {"tests/test_loop.py::test_fast": "passed"}


def test_doctest_modules_in_addopts_makes_modules_with_examples_targets(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": "[tool.pytest.ini_options]\naddopts = \"--doctest-modules\"\n",
        "lib/__init__.py": "",
        "lib/mathx.py": 'def double(x):\n    """\n    >>> double(3)\n    7\n    """\n    return 2 * x\n',
        "lib/plain.py": "def f():\n    return 1\n",
        "tests/test_ok.py": "def test_ok():\n    pass\n"})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    assert [t.target_id for t in service.discover().targets] == ["lib/mathx.py", "tests/test_ok.py"]
    snapshot = finish(service.start_run(["lib/mathx.py"]))
    assert _cases(snapshot) == {"lib/mathx.py::lib.mathx.double": "failed"}, _cases(snapshot)
    assert snapshot.state == "failed"


def test_a_conftest_import_error_is_its_directorys_not_another_file_in_the_process(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/conftest.py": "import pytest\n\n@pytest.fixture\ndef harmless():\n    return 1\n",
        "tests/sub/conftest.py": "import nosuchmod_qa23\n",
        "tests/sub/test_sub.py": "def test_sub():\n    pass\n",
        "tests/good/test_good.py": "def test_good():\n    pass\n"})
    service = service_for(repo, workers=1)
    services.append(service)
    snapshot = finish(service.start_run())
    assert _outcomes(snapshot) == {"tests/sub/test_sub.py": "error", "tests/good/test_good.py": "passed"}
    good = next(r for r in snapshot.targets if r.target.target_id == "tests/good/test_good.py")
    assert [a.result.outcome for a in good.attempts] == ["passed"] and good.flaky_cases == ()
    assert "nosuchmod_qa23" in _message(snapshot, "tests/sub/test_sub.py")


def test_a_file_hanging_at_import_is_named_and_times_out_alone(tmp_path: Path, services: list[TestingService],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file of the process was a timeout, with "did not start a test", the hanging one unnamed. Importing
    keeps the start-up budget (heavy imports are not a test's time), made short here."""
    monkeypatch.setattr(batch, "STARTUP_FLOOR_S", 3.0)
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_a_ok.py": "def test_ok():\n    pass\n",
        "tests/test_collect_loop.py": "import time\n\nwhile True:\n    time.sleep(0.1)\n",
        "tests/test_z_ok.py": "def test_z():\n    pass\n"})
    service = service_for(repo, workers=1, target_timeout_sec=3, retry_failed=False)
    services.append(service)
    snapshot = finish(service.start_run())
    assert _outcomes(snapshot) == {"tests/test_a_ok.py": "passed", "tests/test_collect_loop.py": "timeout",
                                   "tests/test_z_ok.py": "passed"}, _outcomes(snapshot)
    message = _message(snapshot, "tests/test_collect_loop.py")
    assert message == "pytest did not finish importing this file (collection) within 3s", message
    records = {r.target.target_id: r for r in snapshot.targets}
    assert [a.result.outcome for a in records["tests/test_a_ok.py"].attempts] == ["passed"]


def test_failures_are_listed_in_numeric_parameter_order(tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_many.py": ("import pytest\n\n@pytest.mark.parametrize('i', range(12))\n"
                               "def test_many(i):\n    assert i < 0\n")})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    snapshot = finish(service.start_run())
    listed = [c.case_id.rsplit("[", 1)[1].rstrip("]") for c in render_run(snapshot)["failures"]]
    assert listed == [str(i) for i in range(12)], listed
    every = [c.case_id.rsplit("[", 1)[1].rstrip("]") for c in render_run(snapshot, include="cases")["cases"]]
    assert every == [str(i) for i in range(12)], every


def test_each_failing_unittest_subtest_is_a_case_with_its_parameters(tmp_path: Path,
                                                                     services: list[TestingService]) -> None:
    """pytest says ``PASSED T::test_subtests``, ``SUBFAILED(i=1)`` and ``SUBFAILED(i=2)``: only the first failure
    was reported, without its parameters."""
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_unit.py": ("import unittest\n\nclass T(unittest.TestCase):\n    def test_subtests(self):\n"
                               "        for i in range(3):\n            with self.subTest(i=i):\n"
                               "                self.assertLess(i, 1)\n")})
    service = service_for(repo)
    services.append(service)
    snapshot = finish(service.start_run())
    assert _cases(snapshot) == {"tests/test_unit.py::T::test_subtests": "passed",
                                "tests/test_unit.py::T::test_subtests (i=1)": "failed",
                                "tests/test_unit.py::T::test_subtests (i=2)": "failed"}, _cases(snapshot)
    (record,) = snapshot.targets
    assert [a.result.outcome for a in record.attempts] == ["failed", "failed"], "the retry ran the parent test"
    assert record.attempts[1].result.cases_run == 3
    messages = {c.case_id: c.message for c in record.attempts[1].result.cases}
    assert "2 not less than 1" in messages["tests/test_unit.py::T::test_subtests (i=2)"]
    assert snapshot.state == "failed" and snapshot.counts.failed == 2
