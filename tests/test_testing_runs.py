"""The tests subsystem without a server: real repos, real runners, real processes."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.server.tools.tests_run_models import TestRunResult, render_run
from codeplane.server.tools.tests_run_render import render_test_run
from codeplane.testing import RunSnapshot, TestingService
from tests.builders import cpl_json, make_repo
from tests.runner_projects import (
    CARGO_PROJECT,
    GO_PROJECT,
    JEST_PROJECT,
    PYTEST_PROJECT,
    VITEST_PROJECT,
    link_node_modules,
    require,
)
from tests.testing_service import finish, service_for

pytestmark = pytest.mark.usefixtures("lean_pytest")


def _outcomes(snapshot: RunSnapshot) -> dict[str, str]:
    return {r.target.target_id: r.outcome for r in snapshot.targets}


def _cases(snapshot: RunSnapshot) -> dict[str, str]:
    return {c.case_id: c.outcome for r in snapshot.targets if r.final for c in r.final.cases}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_pytest_results_per_case_with_collection_error_artifacts_and_stable_fingerprint(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        **PYTEST_PROJECT, "tests/conftest.py": "collect_ignore = ['test_ignored.py']\n",
        "tests/test_ignored.py": "def test_ignored():\n    assert False\n"})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    view = service.discover()
    assert [t.target_id for t in view.targets] == [
        "tests/test_broken.py", "tests/test_ignored.py", "tests/test_math.py", "tests/test_ok.py"]
    assert all(t.runner == "pytest" and t.cwd == "." for t in view.targets)
    first = finish(service.start_run())
    assert first.state == "failed"
    assert _outcomes(first) == {"tests/test_broken.py": "error", "tests/test_math.py": "failed",
                                "tests/test_ok.py": "passed", "tests/test_ignored.py": "skipped"}
    assert _cases(first) == {
        "tests/test_math.py::test_adds": "passed", "tests/test_math.py::test_fails": "failed",
        "tests/test_math.py::test_skipped": "skipped", "tests/test_math.py::test_known_bug": "xfail",
        "tests/test_math.py::TestGroup::test_in_class": "passed",
        "tests/test_ok.py::test_one": "passed", "tests/test_ok.py::test_two": "passed"}
    broken = next(r for r in first.targets if r.target.target_id == "tests/test_broken.py")
    assert broken.final is not None and "no_such_module_here" in broken.final.message
    failing = next(c for r in first.targets if r.final for c in r.final.cases if c.outcome == "failed")
    assert failing.exception_type == "AssertionError" and "math is hard" in failing.message
    assert "assert" in failing.traceback and len(failing.traceback) <= 2000
    kinds = {a.kind for a in first.artifacts}
    assert {"stdout", "events"} <= kinds
    for artifact in first.artifacts:
        assert (repo / artifact.path).is_file() and artifact.path.startswith(".codeplane/artifacts/")
    report = first.fingerprint
    assert report is not None and report.startswith("ff_")
    second = finish(service.start_run())
    assert second.fingerprint == report, "same failures must give the same fingerprint"
    taken = service.get_run(second.run_id).take_failure_report()
    assert taken is not None and taken.failing_tests == (
        "tests/test_broken.py::(error)", "tests/test_math.py::test_fails")
    assert service.get_run(second.run_id).take_failure_report() is None, "reported once per run"
    # Cost history: the second discovery estimates from measured durations, not the size prior; an ignored
    # file is measured too (free), so its prior never weighs in a packing again.
    medians = service.costs.medians([("pytest", "tests/test_ok.py"), ("pytest", "tests/test_ignored.py")])
    assert medians[("pytest", "tests/test_ok.py")] > 0 and medians[("pytest", "tests/test_ignored.py")] == 0.0


def test_a_configured_command_that_drops_the_event_stream_falls_back_to_junit(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {"pytest.ini": "[pytest]\n",
                                         "tests/test_math.py": PYTEST_PROJECT["tests/test_math.py"]})
    # A wrapper that filters the environment (as tox or a container would): the plugin loads, but has no
    # event file to write, so the results must come from the JUnit XML a configured command also gets.
    wrapper = ["env", "-u", "CODEPLANE_PYTEST_EVENTS", sys.executable, "-m", "pytest"]
    wrapped = service_for(repo, retry_failed=False, runners={"pytest": {"cmd": wrapper}})
    own = service_for(repo, retry_failed=False)
    services.extend([wrapped, own])
    via_junit = finish(wrapped.start_run())
    via_events = finish(own.start_run())
    assert _cases(via_junit) == _cases(via_events) == {
        "tests/test_math.py::test_adds": "passed", "tests/test_math.py::test_fails": "failed",
        "tests/test_math.py::test_skipped": "skipped", "tests/test_math.py::test_known_bug": "xfail",
        "tests/test_math.py::TestGroup::test_in_class": "passed"}
    kinds = {a.kind for a in via_junit.artifacts}
    assert "report" in kinds and "events" not in kinds
    assert "report" not in {a.kind for a in via_events.artifacts}, "CodePlane's own command writes no JUnit XML"


#: Source of a reference cycle whose finalizer leaves a mark: only the cyclic collector frees it.
_FINALIZED_CYCLE = ("class Cycle:\n"
                    "    def __init__(self):\n        self.me = self\n"
                    "    def __del__(self):\n        (MARKS / 'cycle').write_text('finalized')\n\n")


def test_runner_process_exits_without_teardown_collections_and_loses_nothing(
        tmp_path: Path, services: list[TestingService]) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    repo = make_repo(tmp_path / "repo", {
        # Without pytest's own last collection (unraisable exceptions), the garbage below is still there when
        # CodePlane's plugin freezes the heap: it must be collected first, its finalizer run.
        "pytest.ini": "[pytest]\naddopts = -p no:unraisableexception\n",
        "tests/conftest.py": (
            f"import atexit, gc, pathlib\nMARKS = pathlib.Path({str(marks)!r})\n"
            "atexit.register(lambda: (MARKS / 'atexit').write_text(str(gc.get_freeze_count())))\n"),
        "tests/test_a.py": (
            f"import gc, pathlib\nMARKS = pathlib.Path({str(marks)!r})\n\n"
            f"{_FINALIZED_CYCLE}"
            "def test_a():\n"
            "    gc.disable()\n"
            "    Cycle()  # garbage at once, freed by the cyclic collector only\n")})
    service = service_for(repo)
    services.append(service)
    assert finish(service.start_run()).state == "passed"
    assert (marks / "cycle").read_text() == "finalized"
    assert int((marks / "atexit").read_text()) > 0, "the runner process froze its heap before exiting"


def test_after_pytests_own_last_collection_the_runner_collects_only_young_garbage(
        tmp_path: Path, services: list[TestingService], monkeypatch: pytest.MonkeyPatch) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    repo = make_repo(tmp_path / "repo", {
        # pytest's unraisable-exception check runs a full collection in pytest_unconfigure. This plugin's
        # trylast hook runs after it and before CodePlane's (named first, registered first): its garbage is
        # made in between, and only the cyclic collector can free it.
        "pytest.ini": "[pytest]\naddopts = -p young_garbage\n",
        "young_garbage.py": (
            f"import atexit, gc, pathlib, pytest\nMARKS = pathlib.Path({str(marks)!r})\nFULL = []\n\n"
            f"{_FINALIZED_CYCLE}"
            "def _seen(phase, info):\n"
            "    if phase == 'start' and info['generation'] == 2 and not gc.get_freeze_count():\n"
            "        FULL.append(1)\n\n"
            "def pytest_sessionfinish(session):\n    gc.callbacks.append(_seen)\n\n"
            "@pytest.hookimpl(trylast=True)\n"
            "def pytest_unconfigure(config):\n"
            "    gc.disable()\n"
            "    Cycle()\n\n"
            "atexit.register(lambda: (MARKS / 'full').write_text(str(len(FULL))))\n"),
        "tests/test_a.py": "def test_a():\n    pass\n"})
    monkeypatch.setenv("PYTHONPATH", str(repo))
    service = service_for(repo)
    services.append(service)
    assert finish(service.start_run()).state == "passed"
    assert (marks / "cycle").read_text() == "finalized"
    assert (marks / "full").read_text() == "1", "one full collection over the live heap (pytest's), not two"


def test_batches_run_one_pytest_process_per_worker_sharing_unweighed_files(
        tmp_path: Path, services: list[TestingService]) -> None:
    # Each test waits until two processes have run a test: both must take files from the shared pool.
    barrier = (f"import os, time\nfrom pathlib import Path\n\nSEEN = Path({str(tmp_path / 'pids')!r})\n\n"
               "def test_{i}():\n    SEEN.mkdir(exist_ok=True)\n    (SEEN / str(os.getpid())).touch()\n"
               "    deadline = time.time() + 30\n"
               "    while len(list(SEEN.iterdir())) < 2 and time.time() < deadline:\n        time.sleep(0.01)\n"
               "    assert len(list(SEEN.iterdir())) >= 2\n")
    files = {f"tests/test_m{i}.py": barrier.replace("{i}", str(i)) for i in range(6)}
    repo = make_repo(tmp_path / "repo", {"pytest.ini": "[pytest]\n", **files})
    service = service_for(repo, workers=2)
    services.append(service)
    for history in (False, True):  # no cost history: shared pool; then packed by the recorded costs
        assert bool(service.costs.medians([("pytest", "tests/test_m0.py")])) is history
        snapshot = finish(service.start_run())
        assert snapshot.state == "passed" and snapshot.counts.passed == 6
        assert all(len(r.attempts) == 1 for r in snapshot.targets), "a shared file runs once"
        batches = {a.batch_id for r in snapshot.targets for a in r.attempts}
        assert len(batches) == 2, f"6 files on 2 workers must take 2 processes, got {sorted(batches)}"
        assert snapshot.progress_percentage == 100.0
        shutil.rmtree(tmp_path / "pids")


def test_the_processes_of_a_pool_collect_its_files_in_opposite_orders(
        tmp_path: Path, services: list[TestingService]) -> None:
    # Each collects every shared file; on a cold bytecode cache, opposite orders make each compile about half of
    # them and read the rest from the other (same orders: both compile all of them, at the same time).
    log = tmp_path / "imports"
    module = (f"import os\nwith open({str(log)!r}, 'a') as out:\n    out.write(f'{{os.getpid()}} {{__name__}}\\n')\n\n"
              "def test_x():\n    pass\n")
    repo = make_repo(tmp_path / "repo", {"pytest.ini": "[pytest]\n",
                                         **{f"tests/test_m{i}.py": module for i in range(4)}})
    service = service_for(repo, workers=2)
    services.append(service)
    snapshot = finish(service.start_run())
    assert snapshot.state == "passed" and snapshot.counts.passed == 4
    orders: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        pid, name = line.split()
        orders.setdefault(pid, []).append(name.rsplit(".", 1)[-1])
    assert len(orders) == 2, orders
    first, second = orders.values()
    assert sorted(first) == sorted(second) == [f"test_m{i}" for i in range(4)], "each collects every shared file"
    assert first == second[::-1], orders


def test_a_repo_asking_for_xdist_workers_runs_them_only_when_codeplane_runs_one_process(
        tmp_path: Path, services: list[TestingService], monkeypatch: pytest.MonkeyPatch) -> None:
    # As when the server itself runs under an xdist worker: the suites it runs must not take that for theirs.
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw7")
    runs = tmp_path / "runs"
    probe = ("import os\nfrom pathlib import Path\n\n"
             f"RUNS = Path({str(runs)!r})\n\n"
             "def test_{i}():\n    RUNS.mkdir(exist_ok=True)\n"
             "    (RUNS / f\"{i}-{os.getpid()}-{os.environ.get('PYTEST_XDIST_WORKER', 'in-process')}\").touch()\n")
    files = {f"tests/test_m{i}.py": probe.replace("{i}", str(i)) for i in range(4)}
    repo = make_repo(tmp_path / "repo", {"pytest.ini": "[pytest]\naddopts = -p xdist.plugin -n 2\n", **files})
    for workers in (2, 1):
        service = service_for(repo, workers=workers)
        services.append(service)
        snapshot = finish(service.start_run())
        assert snapshot.state == "passed" and snapshot.counts.passed == 4, (workers, snapshot.message, [
            (t.target.target_id, t.outcome, t.final.message[:300] if t.final else None) for t in snapshot.targets])
        ran = sorted(p.name.split("-", 2) for p in runs.iterdir())
        assert [test for test, _, _ in ran] == ["0", "1", "2", "3"], f"each test runs once: {ran}"
        if workers == 2:  # CodePlane's two processes fill the cores and share the files: no xdist inside
            assert {how for _, _, how in ran} == {"in-process"}
        else:  # one process: the repo's own xdist workers are the only parallelism there is
            assert {how for _, _, how in ran} <= {"gw0", "gw1"}
        shutil.rmtree(runs)


def test_processes_that_cannot_share_report_each_target_once(tmp_path: Path, services: list[TestingService]) -> None:
    files = {f"tests/test_m{i}.py": f"def test_{i}():\n    pass\n" for i in range(4)}
    repo = make_repo(tmp_path / "repo", {"pytest.ini": "[pytest]\n", **files,
                                         "tests/conftest.py": "raise RuntimeError('broken conftest')\n"})
    service = service_for(repo, workers=2)
    services.append(service)
    snapshot = finish(service.start_run())
    assert set(_outcomes(snapshot).values()) == {"error"}
    for record in snapshot.targets:
        assert [a.result.outcome for a in record.attempts] == ["error", "error"]
        assert record.final is not None and "broken conftest" in record.final.message


def _fails_once(marker: Path, others: str) -> str:
    """A test file whose ``test_sometimes`` fails the first time it runs (``marker`` remembers), then ``others``."""
    return ("from pathlib import Path\n\n"
            f"MARKER = Path({str(marker)!r})\n\n"
            "def test_sometimes():\n"
            "    if not MARKER.exists():\n"
            "        MARKER.write_text('seen')\n"
            "        raise AssertionError('first run fails')\n\n" + others)


def test_flaky_target_fails_once_then_passes(tmp_path: Path, services: list[TestingService]) -> None:
    marker = tmp_path / "flaky-marker"
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_flaky.py": _fails_once(marker, "def test_always():\n    pass\n"),
    })
    service = service_for(repo)
    services.append(service)
    snapshot = finish(service.start_run())
    (record,) = snapshot.targets
    assert record.outcome == "flaky" and snapshot.state == "passed"
    assert [a.result.outcome for a in record.attempts] == ["failed", "passed"]
    assert record.flaky_cases == ("tests/test_flaky.py::test_sometimes",)
    assert snapshot.fingerprint is None
    # A fresh process (the same one passed on state the first attempt left behind), running the failed case alone.
    assert len({a.batch_id for a in record.attempts}) == 2, "pytest re-runs a failed test in a new process"
    assert snapshot.counts.passed == 2 and snapshot.counts.failed == 0
    # Attempt 2 lists the file's cases (the final view) but ran only the failed one; attempt 1 ran all.
    first, second = record.attempts
    assert (len(second.result.cases), second.result.cases_run) == (2, 1)
    assert first.result.cases_run is None
    (shown,) = render_run(snapshot)["targets"]
    assert [(a.cases, a.cases_run) for a in shown.attempts] == [(2, 2), (2, 1)], "what the tool answer says"


def test_a_flaky_case_in_a_target_that_still_fails_is_reported(tmp_path: Path, services: list[TestingService]) -> None:
    """A case that failed and then passed on the retry was lost when another case of its file kept failing: the
    target is failed (rightly), and the flaky case is named too, in the record and in the text."""
    marker = tmp_path / "flaky-marker"
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_mixed.py": _fails_once(marker, "def test_broken():\n    assert 1 == 2\n\n"
                                                   "def test_fine():\n    pass\n"),
    })
    service = service_for(repo)
    services.append(service)
    snapshot = finish(service.start_run())
    (record,) = snapshot.targets
    assert record.outcome == "failed" and snapshot.state == "failed"
    assert record.flaky_cases == ("tests/test_mixed.py::test_sometimes",)
    text = render_test_run(TestRunResult.model_validate(render_run(snapshot)))
    assert "flaky (failed, then passed on retry): tests/test_mixed.py::test_sometimes" in text, text
    assert "retry 1/2" in text and "retry 0/" not in text, text


def test_reruns_fail_twice_time_out_alone_and_collection_errors_rerun_in_a_new_process(
        tmp_path: Path, services: list[TestingService]) -> None:
    marker = tmp_path / "hang-marker"
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_fails.py": (
            "import pytest\n\nSETUPS = []\n\n"
            "@pytest.fixture(scope='module')\n"
            "def shared():\n    SETUPS.append(1)\n    yield len(SETUPS)\n\n"
            "def test_fine(shared):\n    assert shared >= 1\n\n"
            "def test_always(shared):\n    assert shared == 99, 'always fails'\n"),
        "tests/test_hangs_on_rerun.py": (
            "import time\nfrom pathlib import Path\n\n"
            f"MARKER = Path({str(marker)!r})\n\n"
            "def test_first_fails_then_hangs():\n"
            "    if MARKER.exists():\n        time.sleep(300)\n"
            "    MARKER.write_text('seen')\n    assert False\n"),
        "tests/test_broken.py": "import no_such_module_here\n",
        "tests/test_ok.py": "def test_ok():\n    pass\n",
    })
    service = service_for(repo, workers=1, target_timeout_sec=3)
    services.append(service)
    snapshot = finish(service.start_run(["tests/test_fails.py", "tests/test_broken.py", "tests/test_ok.py"]))
    records = {r.target.target_id: r for r in snapshot.targets}
    assert _outcomes(snapshot) == {"tests/test_fails.py": "failed", "tests/test_broken.py": "error",
                                   "tests/test_ok.py": "passed"}
    fails = records["tests/test_fails.py"]
    assert [a.result.outcome for a in fails.attempts] == ["failed", "failed"]
    assert len({a.batch_id for a in fails.attempts}) == 2 and fails.flaky_cases == ()
    assert fails.final is not None and {c.case_id: c.outcome for c in fails.final.cases} == {
        "tests/test_fails.py::test_fine": "passed", "tests/test_fails.py::test_always": "failed"}
    broken = records["tests/test_broken.py"]
    assert [a.result.outcome for a in broken.attempts] == ["error", "error"]
    assert broken.attempts[0].batch_id != broken.attempts[1].batch_id, "a collection error re-runs in a new process"
    assert records["tests/test_ok.py"].attempts[0].batch_id == fails.attempts[0].batch_id
    assert snapshot.counts.passed == 2 and snapshot.counts.failed == 1 and snapshot.state == "failed"
    # The re-run has its own timeout budget, and overrunning it is the target's second attempt.
    snapshot = finish(service.start_run(["tests/test_hangs_on_rerun.py"]))
    (hangs,) = snapshot.targets
    assert [a.result.outcome for a in hangs.attempts] == ["failed", "timeout"] and hangs.outcome == "timeout"
    assert hangs.final is not None and "per-target timeout of 3s" in hangs.final.message


def test_target_timeout_kills_the_whole_process_tree_and_the_batch_goes_on(
        tmp_path: Path, services: list[TestingService]) -> None:
    pid_file = tmp_path / "child.pid"
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_a_hangs.py": (
            "import subprocess, time\n\n"
            "def test_1_quick():\n    pass\n\n"
            "def test_2_wrong():\n    assert 1 == 2\n\n"
            "def test_hangs():\n"
            "    child = subprocess.Popen(['sleep', '300'])\n"
            f"    open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
            "    time.sleep(300)\n"),
        "tests/test_b_fine.py": "def test_fine():\n    pass\n",
    })
    service = service_for(repo, workers=1, target_timeout_sec=2, retry_failed=False)
    services.append(service)
    began = time.monotonic()
    snapshot = finish(service.start_run())
    assert time.monotonic() - began < 30
    assert _outcomes(snapshot) == {"tests/test_a_hangs.py": "timeout", "tests/test_b_fine.py": "passed"}
    hung = next(r for r in snapshot.targets if r.outcome == "timeout")
    assert hung.final is not None and "per-target timeout of 2s" in hung.final.message
    # What ran before the hang is reported, and the hung test named (a file's 300 results were all dropped).
    assert "while running tests/test_a_hangs.py::test_hangs; 2 cases had finished" in hung.final.message
    assert _cases(snapshot) == {"tests/test_a_hangs.py::test_1_quick": "passed",
                                "tests/test_a_hangs.py::test_2_wrong": "failed",
                                "tests/test_b_fine.py::test_fine": "passed"}, _cases(snapshot)
    assert "tests.target_timeout_sec" in hung.final.message
    assert snapshot.state == "failed"
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the test's grandchild outlived the timeout"


def test_a_shared_file_that_hangs_times_out_alone(tmp_path: Path, services: list[TestingService]) -> None:
    pid_file = tmp_path / "child.pid"
    files = {f"tests/test_fine{i}.py": f"def test_{i}():\n    pass\n" for i in range(3)}
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n", **files,
        "tests/test_hangs.py": (
            "import subprocess, time\n\n"
            "def test_hangs():\n"
            "    child = subprocess.Popen(['sleep', '300'])\n"
            f"    open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
            "    time.sleep(300)\n"),
    })
    service = service_for(repo, workers=2, target_timeout_sec=2)
    services.append(service)
    snapshot = finish(service.start_run())
    assert _outcomes(snapshot) == {"tests/test_hangs.py": "timeout", **{t: "passed" for t in files}}
    assert all(len(r.attempts) == 1 for r in snapshot.targets)
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the test's grandchild outlived the timeout"


def test_cancel_stops_a_running_run(tmp_path: Path, services: list[TestingService]) -> None:
    pid_file = tmp_path / "child.pid"
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_slow.py": (
            "import subprocess, time\n\n"
            "def test_slow():\n"
            "    child = subprocess.Popen(['sleep', '300'])\n"
            f"    open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
            "    time.sleep(300)\n"),
        "tests/test_other.py": "def test_other():\n    pass\n",
    })
    service = service_for(repo, workers=1)
    services.append(service)
    record = service.start_run(["tests/test_slow.py"])
    deadline = time.monotonic() + 30
    while not pid_file.exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(1.0)
    # A running run's time so far (it stayed 0.0 s while no case had finished).
    assert render_run(record.snapshot())["duration_s"] >= 1.0
    service.cancel(record.run_id)
    snapshot = finish(record, timeout=15)
    assert snapshot.state == "cancelled" and snapshot.message == "cancelled on request"
    assert _outcomes(snapshot) == {"tests/test_slow.py": "cancelled"}
    assert snapshot.fingerprint is None and record.take_failure_report() is None
    time.sleep(0.2)
    assert not _alive(int(pid_file.read_text()))


def test_fail_fast_and_global_timeout(tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_a_fails.py": "def test_fails():\n    assert False\n",
        "tests/test_b_slow.py": "import time\n\ndef test_slow():\n    time.sleep(60)\n",
    })
    service = service_for(repo, workers=1)
    services.append(service)
    snapshot = finish(service.start_run(fail_fast=True))
    assert snapshot.state == "failed" and "fail_fast" in snapshot.message
    assert _outcomes(snapshot) == {"tests/test_a_fails.py": "failed", "tests/test_b_slow.py": "not_run"}
    assert len(snapshot.targets[0].attempts) == 1, "fail-fast does not re-run"
    snapshot = finish(service.start_run(["tests/test_b_slow.py"], timeout_sec=2))
    assert snapshot.state == "timed_out"
    assert _outcomes(snapshot) == {"tests/test_b_slow.py": "timeout"}


def test_fail_fast_inside_a_file_keeps_the_failure_it_stopped_at(tmp_path: Path,
                                                                  services: list[TestingService]) -> None:
    """The failing case's file was killed before its report: it was recorded not run, and the run ``passed``."""
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_a.py": "import time\n\ndef test_first_fails():\n    assert 1 == 2\n\n"
                           "def test_then_slow():\n    time.sleep(30)\n",
        "tests/test_b.py": "def test_one():\n    pass\n\ndef test_two():\n    pass\n",
    })
    service = service_for(repo, workers=1)
    services.append(service)
    snapshot = finish(service.start_run(["tests/test_a.py", "tests/test_b.py"], fail_fast=True), timeout=25)
    assert snapshot.state == "failed" and "fail_fast" in snapshot.message
    assert _outcomes(snapshot)["tests/test_a.py"] == "failed"
    result = next(t for t in snapshot.targets if t.target.target_id == "tests/test_a.py").final
    assert result is not None
    assert [(c.case_id, c.outcome) for c in result.cases] == [("tests/test_a.py::test_first_fails", "failed")]


def test_repo_venv_runs_pytest(tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_env.py": "import sys, os\n\ndef test_env():\n"
                             "    assert sys.prefix.endswith('.venv'), sys.prefix\n"
                             "    assert os.environ['VIRTUAL_ENV'].endswith('.venv')\n",
    })
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    # Give the repo's venv this checkout's pytest through a .pth file (no network, no pip).
    site = next((repo / ".venv").glob("lib/python*/site-packages"))
    here = next(p for p in sys.path if p.endswith("site-packages") and Path(p, "pytest").is_dir())
    (site / "deps.pth").write_text(here + "\n")
    service = service_for(repo)
    services.append(service)
    (target,) = service.discover().targets
    assert target.cmd[0] == str(repo / ".venv" / "bin" / "python")
    snapshot = finish(service.start_run())
    assert snapshot.state == "passed", snapshot.targets[0].final


def test_go_cargo_jest_and_vitest_in_one_repo(tmp_path: Path, services: list[TestingService]) -> None:
    for tool in ("go", "cargo", "jest", "vitest"):
        require(tool)
    repo = make_repo(tmp_path / "repo", {**GO_PROJECT, **CARGO_PROJECT, **JEST_PROJECT, **VITEST_PROJECT,
                                         "tests/test_py.py": "def test_py():\n    pass\n"}, commit=False)
    link_node_modules(repo / "web")
    link_node_modules(repo / "ui")
    service = service_for(repo, retry_failed=False)
    services.append(service)
    view = service.discover()
    runners = {t.target_id: t.runner for t in view.targets}
    assert runners == {
        "svc/broken": "go", "svc/calc": "go", "svc/util": "go",
        "rs/src/lib.rs": "cargo", "rs/src/lib.rs#doctests": "cargo", "rs/tests/integration.rs": "cargo",
        "web/src/__tests__/ok.js": "jest", "web/src/sum.test.js": "jest", "web/src/syntax.test.js": "jest",
        "ui/sum.test.mjs": "vitest", "tests/test_py.py": "pytest"}
    assert view.missing == ()
    snapshot = finish(service.start_run(), timeout=240)
    assert _outcomes(snapshot) == {
        "svc/broken": "error", "svc/calc": "failed", "svc/util": "passed",
        "rs/src/lib.rs": "failed", "rs/src/lib.rs#doctests": "failed", "rs/tests/integration.rs": "passed",
        "web/src/__tests__/ok.js": "passed", "web/src/sum.test.js": "failed", "web/src/syntax.test.js": "error",
        "ui/sum.test.mjs": "failed", "tests/test_py.py": "passed"}
    cases = _cases(snapshot)
    assert cases["svc/calc::TestAddFails"] == "failed" and cases["svc/calc::TestSkipped"] == "skipped"
    assert cases["rs/src/lib.rs::tests::fails"] == "failed" and cases["rs/src/lib.rs::tests::ignored"] == "skipped"
    assert cases["rs/tests/integration.rs::works"] == "passed"
    # A failing example in a doc comment (cargo test fails; its doc-tests never ran, and the crate "passed").
    assert cases["rs/src/lib.rs#doctests::src/lib.rs - add (line 3)"] == "failed", cases
    assert cases["web/src/sum.test.js::sum > fails"] == "failed"
    # The values and the test's own line, not a dozen of the runner's frames (a bounded excerpt kept those).
    tracebacks = {c.case_id: c.traceback for r in snapshot.targets if r.final for c in r.final.cases}
    for case in ("web/src/sum.test.js::sum > fails", "ui/sum.test.mjs::sum > fails"):
        shown = tracebacks[case]
        values = ("Expected: 3" in shown and "Received: 2" in shown) or "expected 2 to be 3" in shown  # jest, vitest
        assert values and "sum.test." in shown, shown
        assert not any("node_modules" in line for line in shown.splitlines()[:-1]), shown
    assert cases["web/src/sum.test.js::sum > skipped"] == "skipped"
    assert cases["ui/sum.test.mjs::sum > adds"] == "passed" and cases["ui/sum.test.mjs::sum > fails"] == "failed"
    broken = next(r for r in snapshot.targets if r.target.target_id == "svc/broken")
    assert broken.final is not None and "undefined" in broken.final.message
    # A failing case re-run alone by its id (--testNamePattern): the whole file ran, or the id was refused.
    for case in ("ui/sum.test.mjs::sum > fails", "web/src/sum.test.js::sum > fails"):
        one = finish(service.start_run([case]), timeout=240)
        assert _cases(one) == {case: "failed"}, _cases(one)
        assert one.targets[0].target.cmd[-3:-1] == ("--testNamePattern", "^(?:sum fails)$")
    typo = finish(service.start_run(["web/src/sum.test.js::sum > adds", "web/src/sum.test.js::sum > nope"]),
                  timeout=240)
    (result,) = [r.final for r in typo.targets if r.final]
    assert result.outcome == "error" and result.message == (
        "no test case sum > nope in web/src/sum.test.js; it holds sum > skipped, sum > adds, sum > fails"), result
    assert _cases(typo) == {"web/src/sum.test.js::sum > adds": "passed"}
    # A case id of a runner that runs files whole: said so, with the target to run instead.
    with pytest.raises(CodePlaneError) as whole:
        service.start_run(["rs/tests/integration.rs::works"])
    assert whole.value.code == 7005 and "cargo targets run whole" in whole.value.message
    assert whole.value.details["target"] == "rs/tests/integration.rs"


def test_missing_runner_is_listed_and_running_it_is_7001(tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n", "tests/test_a.py": "def test_a():\n    pass\n",
        "ex/mix.exs": "defmodule Ex.MixProject do\nend\n", "ex/test/ex_test.exs": "",
    })
    (repo / ".codeplane").mkdir()
    (repo / ".codeplane" / "config.yaml").write_text("tests:\n  runners:\n    mix: {cmd: [no-such-mix-binary, test]}\n")
    service = service_for(repo, runners={"mix": {"cmd": ["no-such-mix-binary", "test"]}})
    services.append(service)
    view = service.discover()
    assert [(m.runner, m.project) for m in view.missing] == [("mix", "ex")]
    with pytest.raises(CodePlaneError) as caught:
        service.start_run()
    assert caught.value.code == 7001 and caught.value.details["missing"] == [{"runner": "mix", "project": "ex"}]
    # The configured command is what is missing (QA50 #8: the hint sent users to the key they had set).
    assert caught.value.message == "'no-such-mix-binary' (tests.runners.mix.cmd) not found (project ex)"
    assert caught.value.details["hint"].startswith("no-such-mix-binary (tests.runners.mix.cmd) is not an executable")
    assert {t.cmd[:2] for t in view.targets if t.runner == "mix"} == {("no-such-mix-binary", "test")}
    with pytest.raises(CodePlaneError) as unknown:
        service.start_run(["tests/test_nope.py"])
    assert unknown.value.code == 7005
    snapshot = finish(service.start_run(["tests"]))
    assert _outcomes(snapshot) == {"tests/test_a.py": "passed"}
    with pytest.raises(CodePlaneError) as missing_run:
        service.get_run("tr_nope")
    assert missing_run.value.code == 7004
    report = cpl_json("doctor", cwd=repo)
    (line,) = [c for c in report["checks"] if c["name"].startswith("test runner")]
    assert line == {"name": "test runner mix", "ok": False,
                    "detail": "'no-such-mix-binary' (tests.runners.mix.cmd) not found (project ex)",
                    "fix": "no-such-mix-binary (tests.runners.mix.cmd) is not an executable here: fix that path in "
                           ".codeplane/config.yaml, or install it there"}


def test_config_custom_runner_and_exclude(tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "tests/test_a.py": "def test_a():\n    pass\n", "tests/fixtures/test_data.py": "",
        "checks/ok.sh": "exit 0\n", "checks/bad.sh": "echo broken; exit 3\n",
    })
    service = service_for(repo, exclude=["**/fixtures/**"],
                       custom=[{"pattern": "checks/*.sh", "runner": "shell", "cmd": ["sh", "{path}"]}])
    services.append(service)
    view = service.discover()
    assert {t.target_id: t.runner for t in view.targets} == {
        "checks/bad.sh": "shell", "checks/ok.sh": "shell", "tests/test_a.py": "pytest"}
    snapshot = finish(service.start_run(["checks"]))
    assert _outcomes(snapshot) == {"checks/bad.sh": "failed", "checks/ok.sh": "passed"}
    bad = next(r for r in snapshot.targets if r.outcome == "failed")
    assert bad.final is not None and "broken" in bad.final.message and bad.final.exit_code == 3
    for runners in ({"typescript": "pytest"}, {"python": "no-such-runner"}, {"nosuch": {"cmd": ["x"]}}):
        services.append(invalid_config := service_for(repo, runners=runners))
        with pytest.raises(CodePlaneError) as invalid:
            invalid_config.discover()
        assert invalid.value.code == 2002




def test_selected_cases_run_alone_however_many_from_one_collection(
        tmp_path: Path, services: list[TestingService]) -> None:
    """Node ids of one file run exactly those cases (parameters included) beyond the 40 a command line names;
    the file is handed to pytest once and the events plugin deselects the rest."""
    body = "".join(f"def test_{n}():\n    pass\n\n\n" for n in range(60))
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_many.py": ("import pytest\n\nCOLLECTED = []\n\n\n" + body
                               + "@pytest.mark.parametrize('x', [1, 2])\ndef test_p(x):\n    pass\n\n\n"
                               "class TestK:\n    def test_a(self):\n        pass\n\n    def test_b(self):\n"
                               "        pass\n\n\ndef test_p_other():\n    pass\n"),
        "tests/test_other.py": "def test_whole():\n    pass\n"})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    wanted = [f"tests/test_many.py::test_{n}" for n in range(45)]
    record = finish(service.start_run([*wanted, "tests/test_many.py::test_p", "tests/test_many.py::TestK",
                                       "tests/test_other.py"]))
    (many,) = [r.target for r in record.targets if r.target.target_id == "tests/test_many.py"]
    assert len(many.cases) == 47 and many.cmd[-1] == "tests/test_many.py"  # too many to name in cmd
    assert _cases(record) == {
        **{w: "passed" for w in wanted}, "tests/test_many.py::test_p[1]": "passed",
        "tests/test_many.py::test_p[2]": "passed", "tests/test_many.py::TestK::test_a": "passed",
        "tests/test_many.py::TestK::test_b": "passed", "tests/test_other.py::test_whole": "passed"}


def test_a_case_asked_for_by_a_name_the_file_does_not_hold_is_an_error_not_a_pass(
        tmp_path: Path, services: list[TestingService]) -> None:
    """``test_a.py::test_typo`` beside ``test_a.py::test_real``: only the real one ran and the run said
    "passed" (alone: "passed, no cases"); a typo or a renamed test must not read as a pass."""
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n", "tests/test_a.py": "def test_real():\n    pass\n\n\ndef test_b():\n    pass\n"})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    record = finish(service.start_run(["tests/test_a.py::test_real", "tests/test_a.py::test_typo"]))
    (result,) = [r.final for r in record.targets if r.final]
    assert result.outcome == "error", result
    assert result.message == "no test case test_typo in tests/test_a.py; it holds test_real, test_b", result.message
    assert _cases(record) == {"tests/test_a.py::test_real": "passed"}
    assert record.counts.error == 1 and record.state == "failed", (record.counts, record.state)


def test_errors_no_re_run_can_change_are_not_re_run(tmp_path: Path, services: list[TestingService]) -> None:
    """A case id the file does not hold, and a file that does not compile, were re-run anyway ("error, retry
    error"): twice the time, and a test-run budget spent on nothing. A failing test is still re-run."""
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n", "tests/test_a.py": "def test_real():\n    assert False\n",
        "tests/test_broken.py": "def test_x(:\n    pass\n"})
    service = service_for(repo)
    services.append(service)
    record = finish(service.start_run(["tests/test_a.py::test_typo", "tests/test_broken.py"]))
    assert {r.target.target_id: [a.result.outcome for a in r.attempts] for r in record.targets} == {
        "tests/test_a.py": ["error"], "tests/test_broken.py": ["error"]}
    again = finish(service.start_run(["tests/test_a.py::test_real"]))
    assert [a.result.outcome for a in again.targets[0].attempts] == ["failed", "failed"]


def test_a_go_test_asked_for_by_a_name_the_package_does_not_hold_is_an_error(
        tmp_path: Path, services: list[TestingService]) -> None:
    # ``go test -run '^(TestAdd|TestTypo)$'`` runs TestAdd and says nothing of TestTypo: not a pass.
    require("go")
    repo = make_repo(tmp_path / "repo", {k: v for k, v in GO_PROJECT.items() if "/broken/" not in k})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    record = finish(service.start_run(["svc/calc::TestAdd", "svc/calc::TestTypo"]), timeout=240)
    (result,) = [r.final for r in record.targets if r.final]
    assert result.outcome == "error" and result.message == (
        "no test case TestTypo in svc/calc; it holds TestAdd, TestAddFails, TestSkipped"), result
    assert _cases(record) == {"svc/calc::TestAdd": "passed"}
    fine = finish(service.start_run(["svc/calc::TestAdd"]), timeout=240)
    assert fine.state == "passed", fine


def test_a_pytest_found_on_path_runs_as_python_m_pytest_so_an_uninstalled_package_imports(
        tmp_path: Path, services: list[TestingService]) -> None:
    # No virtualenv in the repository: the ``pytest`` on PATH runs. An agent's ``python -m pytest`` puts the
    # project directory on sys.path, so ``tests/`` importing the top-level package ``pkg`` passes there; the
    # bare console script does not (ModuleNotFoundError).
    repo = make_repo(tmp_path / "repo", {
        "pkg/__init__.py": "def answer():\n    return 42\n",
        "tests/test_pkg.py": "from pkg import answer\n\ndef test_answer():\n    assert answer() == 42\n"})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    run = finish(service.start_run())
    assert _outcomes(run) == {"tests/test_pkg.py": "passed"}, render_run(run)


def test_tests_that_imported_another_copy_of_the_repositorys_package_are_told_so(
        tmp_path: Path, services: list[TestingService], monkeypatch: pytest.MonkeyPatch) -> None:
    # ``src/shadowed`` is the repository's code, but an installed copy comes first on the runner's path (a venv
    # where the project was never installed, ``click`` beside ``src/click``): the tests ran that copy.
    elsewhere = tmp_path / "site" / "shadowed"
    elsewhere.mkdir(parents=True)
    (elsewhere / "__init__.py").write_text("VALUE = 'installed'\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    repo = make_repo(tmp_path / "repo", {
        "src/shadowed/__init__.py": "VALUE = 'repo'\n",
        "tests/test_value.py": "import shadowed\n\n\ndef test_value():\n    assert shadowed.VALUE\n"})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    run = finish(service.start_run())
    assert _outcomes(run) == {"tests/test_value.py": "passed"}
    where = str((elsewhere / "__init__.py").resolve())
    assert f"the tests imported shadowed from {where}, not the repository's shadowed" in run.message, run.message
    assert where in render_run(run)["message"]  # what the tool answers (its text shows the run's message)
    # Once the repository's own copy is what they import, nothing is said.
    (repo / "pytest.ini").write_text("[pytest]\npythonpath = src\n")
    again = finish(service.start_run())
    assert _outcomes(again) == {"tests/test_value.py": "passed"} and again.message == "", again.message


def _logged(name: str) -> str:
    """A Go test that appends its name to runs.log each time it runs."""
    return (f"func {name}(t *testing.T) {{\n\tf, _ := os.OpenFile(\"runs.log\", os.O_APPEND|os.O_CREATE|os.O_WRONLY, "
            f"0o644)\n\tfmt.Fprintln(f, \"{name}\")\n\tf.Close()\n}}\n\n")


def test_a_go_retry_runs_only_the_failing_tests_and_carries_the_rest_over(
        tmp_path: Path, services: list[TestingService]) -> None:
    # blackfriday: one failing test re-ran the whole package (two 9 s tests among them), twice the shell's time.
    require("go")
    head = 'package {pkg}\n\nimport (\n\t"fmt"\n\t"os"\n\t"testing"\n)\n\n'
    repo = make_repo(tmp_path / "repo", {
        "svc/go.mod": "module example.com/svc\n\ngo 1.19\n",
        "svc/calc/calc_test.go": head.format(pkg="calc") + _logged("TestStable") + (
            "func TestBroken(t *testing.T) {\n\tt.Run(\"sub\", func(t *testing.T) { t.Fatal(\"always\") })\n}\n"),
        # Fails on its first run only (it leaves a marker): flaky.
        "svc/flaky/flaky_test.go": head.format(pkg="flaky") + _logged("TestSteady") + (
            "func TestOnce(t *testing.T) {\n\tif _, err := os.Stat(\"marker\"); err != nil {\n"
            "\t\tos.WriteFile(\"marker\", nil, 0o644)\n\t\tfmt.Println(err)\n\t\tt.Fatal(\"first run\")\n\t}\n}\n"),
    })
    service = service_for(repo)
    services.append(service)
    run = finish(service.start_run(), timeout=240)
    assert _outcomes(run) == {"svc/calc": "failed", "svc/flaky": "flaky"}, render_run(run)
    assert _cases(run) == {"svc/calc::TestStable": "passed", "svc/calc::TestBroken": "failed",
                           "svc/calc::TestBroken/sub": "failed", "svc/flaky::TestSteady": "passed",
                           "svc/flaky::TestOnce": "passed"}
    calc, flaky = sorted(run.targets, key=lambda r: r.target.target_id)
    assert [a.result.cases_run for a in calc.attempts] == [None, 2]  # TestBroken and its subtest, again
    assert flaky.flaky_cases == ("svc/flaky::TestOnce",)
    # The passing tests ran once each: the retry ran the failing ones alone.
    assert (repo / "svc/calc/runs.log").read_text() == "TestStable\n"
    assert (repo / "svc/flaky/runs.log").read_text() == "TestSteady\n"


def test_a_test_that_kills_the_pytest_process_fails_its_file_and_no_other(
        tmp_path: Path, services: list[TestingService]) -> None:
    """``os._exit(3)`` (or a segfault) in the second test of a file: the run said "1 passed", state passed, as the
    first test's report was all that arrived; in a batch the other files were blamed and called flaky. The file
    whose test was running is an error naming the test and how the process died; the files it did not reach run
    again, alone, and pass."""
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_a_ok.py": "def test_ok():\n    pass\n",
        "tests/test_b_exit.py": ("import os\n\ndef test_before():\n    pass\n\ndef test_exit():\n    os._exit(3)\n\n"
                                 "def test_after():\n    assert False\n"),
        "tests/test_c_segv.py": ("import ctypes\n\ndef test_a():\n    pass\n\n"
                                 "def test_segv():\n    ctypes.string_at(0)\n"),
        "tests/test_d_ok.py": "def test_fine():\n    pass\n\ndef test_also():\n    pass\n"})
    service = service_for(repo, workers=1)
    services.append(service)
    snapshot = finish(service.start_run())
    outcomes = _outcomes(snapshot)
    assert snapshot.state == "failed", outcomes
    assert outcomes["tests/test_b_exit.py"] == outcomes["tests/test_c_segv.py"] == "error", outcomes
    assert outcomes["tests/test_a_ok.py"] == outcomes["tests/test_d_ok.py"] == "passed", outcomes
    by_id = {r.target.target_id: r for r in snapshot.targets}
    exited = by_id["tests/test_b_exit.py"].attempts[0].result.message
    assert exited.startswith("the pytest process exited 3 while running tests/test_b_exit.py::test_exit"), exited
    assert "1 of 3 cases had finished" in exited
    killed = by_id["tests/test_c_segv.py"].attempts[0].result.message
    assert "killed by SIGSEGV while running tests/test_c_segv.py::test_segv" in killed, killed
    assert "Fatal Python error" in killed, killed


def test_a_file_skipped_while_pytest_imports_it_counts_one_skip_with_its_reason(
        tmp_path: Path, services: list[TestingService]) -> None:
    """``pytest.importorskip("cloudpickle")`` at the top of a file: pytest reports ``SKIPPED [1] ...: could not
    import 'cloudpickle'``; the run said ``skipped`` with no case and no reason, one skip short of pytest's count,
    and the agent never learnt what was missing."""
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_third.py": ("import pytest\n\npytest.importorskip('no_such_module_xyz')\n\n"
                                "def test_x():\n    pass\n"),
        "tests/test_ok.py": "def test_ok():\n    pass\n"})
    service = service_for(repo)
    services.append(service)
    snapshot = finish(service.start_run())
    assert snapshot.state == "passed" and (snapshot.counts.passed, snapshot.counts.skipped) == (1, 1)
    record = next(r for r in snapshot.targets if r.target.target_id == "tests/test_third.py")
    assert record.outcome == "skipped" and record.final is not None
    (case,) = record.final.cases
    assert "could not import 'no_such_module_xyz'" in case.message, case


def test_a_run_the_server_stops_says_so_not_cancelled_on_request(tmp_path: Path) -> None:
    """``cpl down`` during a run ended it "cancelled on request": nobody had asked."""
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(300)\n"})
    service = service_for(repo, workers=1)
    record = service.start_run(["tests/test_slow.py"])
    deadline = time.monotonic() + 30
    while record.snapshot().state != "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    service.close()
    snapshot = finish(record, timeout=15)
    assert snapshot.state == "cancelled" and "the server stopped" in snapshot.message, snapshot.message


def test_a_go_subtest_asked_for_by_its_id_runs_alone(tmp_path: Path, services: list[TestingService]) -> None:
    """``cmp::TestDiff/Project2/Inequal`` (an id the answer printed) ran the whole package, an unrelated failure
    with it, and said nothing: ``-run`` goes level by level now, and a subtest that is not there is an error."""
    require("go")
    files = {"svc/go.mod": "module example.com/svc\n\ngo 1.19\n",
             "svc/table/table_test.go": (
                 'package table\n\nimport "testing"\n\n'
                 "func TestTable(t *testing.T) {\n"
                 '\tfor _, name := range []string{"ok", "a+b", "broken"} {\n'
                 "\t\tname := name\n"
                 '\t\tt.Run(name, func(t *testing.T) {\n\t\t\tif name == "broken" {\n\t\t\t\tt.Fatal("broken")\n'
                 "\t\t\t}\n\t\t})\n\t}\n}\n\n"
                 'func TestOther(t *testing.T) { t.Fatal("unrelated") }\n')}
    repo = make_repo(tmp_path / "repo", files)
    service = service_for(repo, retry_failed=False)
    services.append(service)
    alone = finish(service.start_run(["svc/table::TestTable/a+b"]), timeout=240)
    assert alone.state == "passed" and _cases(alone) == {
        "svc/table::TestTable": "passed", "svc/table::TestTable/a+b": "passed"}, _cases(alone)
    typo = finish(service.start_run(["svc/table::TestTable/nope"]), timeout=240)
    (result,) = [r.final for r in typo.targets if r.final]
    assert result.outcome == "error" and result.message == (
        "no test case TestTable/nope in svc/table; it holds TestTable (+1 more)"), result


def test_a_batch_watched_whole_is_held_for_one_timeout_plus_what_its_targets_take() -> None:
    """Vitest's results come at the end: a batch of N files was held for N timeouts when one hung (124 s for a
    30 s limit). It is now one timeout plus each file's expected time (3x its recorded cost, 10 s at least),
    never more than the old sum."""
    from codeplane.testing.batch import whole_batch_budget
    from codeplane.testing.model import Target

    def target(name: str, cost: float) -> Target:
        return Target(target_id=name, runner="vitest", lang="javascript", cwd=".", selector=name, cmd=("x",),
                      estimated_cost=cost)

    files = [target(f"t{n}.test.ts", 1.0) for n in range(10)]
    budgets = {t.target_id: 30.0 for t in files}
    assert whole_batch_budget(files, budgets) == 30 + 10 * 10  # was 300
    slow = [target("slow.test.ts", 8.0), target("quick.test.ts", 0.1), target("quick2.test.ts", 0.1)]
    assert whole_batch_budget(slow, {t.target_id: 30.0 for t in slow}) == 30 + 24 + 10 + 10
    tight = [target(f"t{n}.test.ts", 1.0) for n in range(3)]
    assert whole_batch_budget(tight, {t.target_id: 5.0 for t in tight}) == 15  # never more than the sum


def test_a_go_package_that_times_out_names_its_hung_test_and_keeps_what_finished(
        tmp_path: Path, services: list[TestingService]) -> None:
    """A hung Go test: the answer said only "exceeded the per-target timeout", while ``go test -json`` had named
    the test running and the ones that had passed (pytest's timeouts said both)."""
    require("go")
    files = {"svc/go.mod": "module example.com/svc\n\ngo 1.19\n",
             "svc/slow/slow_test.go": (
                 'package slow\n\nimport (\n\t"testing"\n\t"time"\n)\n\n'
                 "func TestAQuick(t *testing.T) {}\n\n"
                 "func TestBHangs(t *testing.T) {\n"
                 '\tt.Run("inner", func(t *testing.T) { time.Sleep(300 * time.Second) })\n}\n')}
    repo = make_repo(tmp_path / "repo", files)
    service = service_for(repo, retry_failed=False, target_timeout_sec=5)
    services.append(service)
    record = finish(service.start_run(["svc/slow"]), timeout=120)
    (result,) = [r.final for r in record.targets if r.final]
    assert result.outcome == "timeout", result
    assert "while running svc/slow::TestBHangs/inner" in result.message, result.message
    assert {c.case_id: c.outcome for c in result.cases} == {"svc/slow::TestAQuick": "passed"}, result.cases
