"""The text a model reads for a test run (issue 16): what pytest prints under a failing assert, trimmed to
what the failure's head line does not already say. Real pytest runs through the real testing service."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codeplane.server.tools.tests_run_models import TestRunResult, render_run
from codeplane.server.tools.tests_run_render import brief_traceback, case_ids, render_test_run
from codeplane.testing import TestingService
from tests.builders import make_repo
from tests.testing_service import finish, service_for

pytestmark = pytest.mark.usefixtures("lean_pytest")

_LONG_A = "x" * 120 + "a"
_LONG_B = "x" * 120 + "b"


def test_a_comparison_shown_whole_in_the_head_drops_pytests_diff_but_a_shortened_one_keeps_it(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_text.py": (
            "def test_short():\n    out = '123 5678...'\n    assert out == '123...'\n\n"
            f"def test_long():\n    out = {_LONG_A!r}\n    assert out == {_LONG_B!r}\n"),
    })
    service = service_for(repo, workers=1)
    services.append(service)
    snapshot = finish(service.start_run(["tests/test_text.py"]))
    result = TestRunResult(**render_run(snapshot))
    text = render_test_run(result)
    long, short = text.split("FAILED tests/test_text.py::test_long")[1].split("FAILED tests/test_text.py::test_short")
    # The head shows both values whole: pytest's `- 123...` / `+ 123 5678...` would only say them again.
    assert "assert '123 5678...' == '123...'" in short.splitlines()[0], text
    assert "E " not in short and ">" in short, text
    # pytest shortened the long values in the head: the diff is the only place that shows where they differ.
    assert "- xxxxxxxxxxb" in long and "+ xxxxxxxxxxa" in long and "^" in long, text
    full = {c.case_id: c.traceback for c in result.failures}
    assert "- 123..." in full["tests/test_text.py::test_short"], "the record keeps pytest's whole traceback"


def test_cases_failing_alike_are_one_group_named_once_by_path_and_function(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_same.py": ("import pytest\n\n\n@pytest.mark.parametrize('n', ['a', 'b c'])\n"
                               "def test_param(n):\n    assert 'x' == 'y'\n"),
    })
    service = service_for(repo, workers=1)
    services.append(service)
    snapshot = finish(service.start_run(["tests/test_same.py"]))
    result = TestRunResult(**render_run(snapshot))
    head, failed, same, *trace = render_test_run(result).splitlines()
    assert re.fullmatch(rf"{result.run_id}: 2 failed in [\d.]+s fingerprint=ff_[0-9a-f]{{12}}", head), head
    # The failed assert says it is an AssertionError; the second case is the first's function with other params.
    assert failed == "FAILED tests/test_same.py::test_param[a]: assert 'x' == 'y'", failed
    assert same == "  same: [b c]", same
    assert trace[-1] == "tests/test_same.py:6", "the location; the head line named the failure"


def test_case_ids_say_a_path_and_function_once_per_run_of_parameters() -> None:
    ids = ["t.py::test_x[a]", "t.py::test_x[b c]", "t.py::test_y", "t.py::test_y[1]", "u.py::test_x[a]",
           "u.py::C::test_z[q]", "u.py::C::test_z[r]"]
    assert case_ids(ids) == ["t.py::test_x[a]", "[b c]", "t.py::test_y", "t.py::test_y[1]", "u.py::test_x[a]",
                             "u.py::C::test_z[q]", "[r]"]


def test_a_flaky_targets_cases_follow_its_line_and_are_not_listed_again(
        tmp_path: Path, services: list[TestingService]) -> None:
    marker = tmp_path / "flaky-marker"
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_flaky.py": (
            "from pathlib import Path\n\n"
            f"MARKER = Path({str(marker)!r})\n\n"
            "def test_sometimes():\n"
            "    if not MARKER.exists():\n"
            "        MARKER.write_text('seen')\n"
            "        raise AssertionError('first run fails')\n\n"
            "def test_always():\n    pass\n"),
        "tests/test_ok.py": "def test_ok():\n    pass\n",
    })
    service = service_for(repo, workers=1)
    services.append(service)
    result = TestRunResult(**render_run(finish(service.start_run())))
    assert result.state == "passed" and result.flaky == ["tests/test_flaky.py::test_sometimes"]
    lines = render_test_run(result).splitlines()
    # Passed in the end: the state is not said (the counts say it), nor a tally of targets (the one that did
    # not just pass has its line); the flaky target once, its case after it, then how that case first failed.
    assert re.fullmatch(rf"{result.run_id}: 3 passed in [\d.]+s", lines[0]), lines
    assert lines[1:] == [
        "FLAKY tests/test_flaky.py: 1/2 failing, retry passed: test_sometimes",
        "FLAKY tests/test_flaky.py::test_sometimes failed first: AssertionError: first run fails"], lines


def test_targets_named_only_by_their_failing_cases_are_tallied_in_the_head(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_a.py": "def test_a():\n    assert 1 == 2\n",
        "tests/test_b.py": "def test_b():\n    assert 3 == 4\n",
        "tests/test_ok.py": "def test_ok():\n    pass\n",
    })
    service = service_for(repo, workers=1)
    services.append(service)
    result = TestRunResult(**render_run(finish(service.start_run())))
    lines = render_test_run(result).splitlines()
    # No target has a line of its own (each failed only through its case, again on the retry): the tally says
    # how many failed.
    assert re.fullmatch(rf"{result.run_id}: 1 passed, 2 failed in [\d.]+s \(targets: 2 failed, 1 passed\) "
                        r"fingerprint=ff_[0-9a-f]{12}", lines[0]), lines
    assert not any(line.startswith(("FAILED tests/test_a.py: ", "FAILED tests/test_b.py: ")) for line in lines), lines


def test_targets_failing_alike_are_named_once_with_their_message_said_once(
        tmp_path: Path, services: list[TestingService]) -> None:
    # A build every target shares (cargo's, a broken conftest.py) fails the same way for each: five cargo targets
    # printed one 900-byte network error five times.
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/conftest.py": "raise RuntimeError('the shared fixture module is broken')\n",
        **{f"tests/test_{n}.py": f"def test_{n}():\n    pass\n" for n in "abc"},
    })
    service = service_for(repo, workers=1)
    services.append(service)
    snapshot = finish(service.start_run([f"tests/test_{n}.py" for n in "abc"]))
    text = render_test_run(TestRunResult(**render_run(snapshot)))
    assert text.count("RuntimeError: the shared fixture module is broken") == 1, text
    assert "ERROR tests/test_a.py: error, retry error\n  same: tests/test_b.py tests/test_c.py\n" in text, text


def test_a_rust_panic_keeps_its_values_not_the_standard_librarys_frames() -> None:
    """The text kept the tail of ``stack backtrace:`` (``panicking.rs:439:17`` and a dozen std frames) and lost
    ``left: 3``/``right: 2`` and where it panicked; a Go failure's message was printed twice."""
    panic = ("thread 'stock::tests::put' panicked at src/stock.rs:46:9:\nassertion `left == right` failed\n"
             "  left: 3\n right: 2\nstack backtrace:\n   0: rust_begin_unwind\n"
             + "\n".join(f"   {i}: core::panicking::frame_{i}\n             at /rustc/x/panicking.rs:{i}:5"
                         for i in range(1, 60)))
    assert brief_traceback(panic, "assertion `left == right` failed").splitlines() == [
        "thread 'stock::tests::put' panicked at src/stock.rs:46:9:", "  left: 3", " right: 2"]
    go = "    calc_test.go:12: Add(1, 2) = 4, want 3\n--- FAIL: TestAdd (0.00s)"
    assert brief_traceback(go, "calc_test.go:12: Add(1, 2) = 4, want 3") == "--- FAIL: TestAdd (0.00s)"


def test_passing_targets_share_a_line_and_a_continued_page_is_only_its_items(
        tmp_path: Path, services: list[TestingService]) -> None:
    """``include='targets'`` printed ``PASSED x: passed`` per passing target, and every page of
    ``include='cases'`` repeated the summary and the failures (2.6 KB a page)."""
    files = {f"tests/test_p{i}.py": "def test_ok():\n    pass\n" for i in range(3)}
    repo = make_repo(tmp_path / "repo", {"pytest.ini": "[pytest]\n", **files,
                                         "tests/test_bad.py": "def test_no():\n    assert 1 == 2\n"})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    snapshot = finish(service.start_run())
    text = render_test_run(TestRunResult.model_validate(render_run(snapshot, include="targets")))
    assert "passed (3): tests/test_p0.py tests/test_p1.py tests/test_p2.py" in text.splitlines(), text
    assert "PASSED" not in text, text
    first = TestRunResult.model_validate(render_run(snapshot, include="cases", limit=2))
    # The failing case is listed with its head line, the summary's failure report not said again (s54 F2).
    first_text = render_test_run(first)
    assert first.next_cursor and re.search(r"^failed tests/test_bad\.py::test_no [\d.]+s: assert 1 == 2$",
                                           first_text, re.M), first_text
    assert "FAILED" not in first_text, first_text
    later = render_test_run(TestRunResult.model_validate(render_run(snapshot, include="cases", limit=2,
                                                                    cursor=first.next_cursor)))
    assert later.splitlines() == [f"{snapshot.run_id} (continued)", *[
        line for line in later.splitlines() if line.startswith("passed tests/")]], later
    assert len(later.splitlines()) == 3, later
