"""The test tools through the real server and the official MCP client (one server for the module)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    call_error,
    cpl_env,
    envelope,
    make_repo,
    mcp_client,
    running_server,
    start_server,
)
from tests.runner_projects import PYTEST_PROJECT

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    base = tmp_path_factory.mktemp("testtools")
    repo = make_repo(base / "repo", {
        **PYTEST_PROJECT,
        "tests/test_slow.py": (
            "import os, subprocess, time\n\n"
            "def test_slow():\n"
            "    child = subprocess.Popen(['sleep', '300'])\n"
            "    open(os.environ['SLOW_PID_FILE'], 'w').write(str(child.pid))\n"
            "    time.sleep(300)\n"),
    })
    env = cpl_env({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "SLOW_PID_FILE": str(base / "slow.pid")})
    with running_server(repo, "--set", "tests.retry_failed=false", env=env) as handle:
        yield handle


def _pid_file(server: ServerHandle) -> Path:
    return server.root.parent / "slow.pid"


async def test_discover_lists_targets_with_runner_cost_and_pages(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        found = await call(client, "discover_test_targets", {})
        ids = [t["target_id"] for t in found["targets"]]
        assert ids == ["tests/test_broken.py", "tests/test_math.py", "tests/test_ok.py", "tests/test_slow.py"]
        first = found["targets"][1]
        assert first["runner"] == "pytest" and first["cwd"] == "." and first["cmd"][-1] == "tests/test_math.py"
        assert first["estimated_cost"] > 0 and found["runners"] == ["pytest"] and "missing_runners" not in found
        page1 = await call(client, "discover_test_targets", {"paths": ["tests"], "limit": 3})
        assert len(page1["targets"]) == 3 and page1["next_cursor"] and page1["total"] == 4
        page2 = await call(client, "discover_test_targets", {"paths": ["tests"], "limit": 3,
                                                              "cursor": page1["next_cursor"]})
        assert [t["target_id"] for t in page2["targets"]] == ["tests/test_slow.py"] and "next_cursor" not in page2
        err = await call_error(client, "discover_test_targets", {"cursor": page1["next_cursor"]})
        assert err["code"] == 1005
        # A path that is not there is said so, as list_files says it, not "0 targets".
        missing = await call_error(client, "discover_test_targets", {"paths": ["tests", "no_such_dir"]})
        assert missing["code"] == 5004 and missing["details"]["paths"] == ["no_such_dir"]
        doc = await call(client, "describe", {"action": "tool", "name": "run_test_targets"})
        assert doc["annotations"]["readOnlyHint"] is False and "wait_sec" in doc["input_schema"]["properties"]


async def test_run_polls_with_progress_then_reports_failures_and_fingerprint_once(server: ServerHandle) -> None:
    updates: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total))

    targets = ["tests/test_math.py", "tests/test_ok.py", "tests/test_broken.py"]
    async with mcp_client(server) as client:
        res = await client.call_tool("run_test_targets", {"targets": targets, "wait_sec": 0},
                                     progress_callback=on_progress)
        started = envelope(res)["result"]
        assert started["state"] in ("queued", "running") and not started["finished"]
        assert started["state"] not in answer_text(res).splitlines()[1:], "the state once, in the head line"
        assert isinstance(started["progress_percentage"], float) and started["last_progress_at"] > 0
        assert "get_test_run" in started["poll_hint"]
        res = await client.call_tool("get_test_run", {"run_id": started["run_id"], "wait_sec": 60},
                                     progress_callback=on_progress)
        body = envelope(res)
        run = body["result"]
        assert run["state"] == "failed" and run["finished"] and run["progress_percentage"] == 100.0
        assert run["target_outcomes"] == {"error": 1, "failed": 1, "passed": 1}
        assert [t["target_id"] for t in run["targets"]][:2] == ["tests/test_broken.py", "tests/test_math.py"]
        # The collection error of test_broken.py has no case, and still counts (issue 16).
        assert run["counts"] == {"passed": 4, "failed": 1, "error": 1, "skipped": 1, "xfail": 1, "total": 8}, run
        (failure,) = run["failures"]
        assert failure["case_id"] == "tests/test_math.py::test_fails" and "math is hard" in failure["message"]
        assert run["fingerprint"] and body["meta"]["failure_fingerprint"] == run["fingerprint"]
        assert {a["kind"] for a in run["artifacts"]} >= {"stdout", "events"}
        assert all(a["path"].startswith(".codeplane/artifacts/art_") for a in run["artifacts"])
        again = envelope(await client.call_tool("get_test_run", {"run_id": run["run_id"]}))
        assert again["result"]["fingerprint"] == run["fingerprint"]
        assert "failure_fingerprint" not in again["meta"], "a run's failure is reported to the task once"
        cases = await call(client, "get_test_run", {"run_id": run["run_id"], "include": "cases", "limit": 5})
        assert len(cases["cases"]) == 5 and cases["next_cursor"]
        rest = await call(client, "get_test_run", {"run_id": run["run_id"], "include": "cases", "limit": 5,
                                                   "cursor": cases["next_cursor"]})
        assert len(rest["cases"]) == 2 and "next_cursor" not in rest
    assert updates, "no progress notification arrived"
    assert all(total == 100.0 for _, total in updates)
    assert updates[-1][0] == 100.0


async def test_cancel_ends_in_cancelled_and_kills_the_runner(server: ServerHandle) -> None:
    pid_file = _pid_file(server)
    pid_file.unlink(missing_ok=True)
    async with mcp_client(server) as client:
        started = await call(client, "run_test_targets", {"targets": ["tests/test_slow.py"], "wait_sec": 0})
        for _ in range(300):
            if pid_file.exists():
                break
            await call(client, "get_test_run", {"run_id": started["run_id"], "wait_sec": 0.1})
        assert pid_file.exists()
        cancelled = await call(client, "cancel_test_run", {"run_id": started["run_id"]})
        assert cancelled["state"] == "cancelled" and cancelled["finished"]
        assert cancelled["target_outcomes"] == {"cancelled": 1} and "fingerprint" not in cancelled
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


async def test_errors_and_test_budget(server: ServerHandle) -> None:
    session = {"session_id": "sess_test_budget"}
    async with mcp_client(server) as client:
        err = await call_error(client, "run_test_targets", {"targets": ["tests/test_nope.py"]})
        assert err["code"] == 7005 and err["details"]["unknown"] == ["tests/test_nope.py"]
        # A typo names the target meant (it pointed to discover_test_targets, which the core profile withholds).
        err = await call_error(client, "run_test_targets", {"targets": ["tests/test_oks.py"]})
        assert err["code"] == 7005 and "did you mean tests/test_ok.py?" in err["message"], err
        err = await call_error(client, "get_test_run", {"run_id": "tr_missing"})
        assert err["code"] == 7004
        err = await call_error(client, "run_test_targets", {"targets": ["tests/test_ok.py"], "affected_by": ["a.py"]})
        assert err["code"] == 1003
        await call(client, "open_task", {"limits": {"max_test_runs": 1}, **session})
        ok: dict[str, Any] = await call(client, "run_test_targets", {"targets": ["tests/test_ok.py"], "wait_sec": 60,
                                                                     **session})
        assert ok["state"] == "passed"
        refused = await call_error(client, "run_test_targets", {"targets": ["tests/test_ok.py"], **session})
        assert refused["code"] == 6001
        polled = await call(client, "get_test_run", {"run_id": ok["run_id"], **session})
        assert polled["state"] == "passed", "polling is not a test run"


async def test_impact_selection_through_the_tools(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        found = await call(client, "discover_test_targets", {"affected_by": ["tests/test_ok.py"]})
        assert [t["target_id"] for t in found["targets"]] == ["tests/test_ok.py"]
        impact = found["impact"]
        assert impact["confidence"] == "complete" and impact["high"] == 1 and impact["low"] == 0
        assert impact["matches"] == [{"test_file": "tests/test_ok.py", "confidence": "high",
                                      "reasons": ["is a changed test file"]}]
        inspected = (await call(client, "inspect_affected_tests", {"changed_files": ["pytest.ini"]}))["impact"]
        assert inspected["confidence"] == "partial" and inspected["unresolved_files"] == ["pytest.ini"]
        # pytest's own configuration reaches every test (an added ``usefixtures`` errors them all): all selected.
        assert {m["test_file"] for m in inspected["matches"]} == {
            "tests/test_broken.py", "tests/test_math.py", "tests/test_ok.py", "tests/test_slow.py"}
        assert all(m["reasons"] == ["pytest.ini configures pytest"] for m in inspected["matches"]), inspected
        run = await call(client, "run_test_targets", {"affected_by": ["tests/test_ok.py"], "wait_sec": 60})
        assert run["state"] == "passed" and "targets" not in run, "passing targets are counts only"
        every = await call(client, "get_test_run", {"run_id": run["run_id"], "include": "targets"})
        assert [t["target_id"] for t in every["targets"]] == ["tests/test_ok.py"]


def _gone(pid: int) -> bool:
    try:
        return "zombie" in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True


async def test_a_restart_answers_old_runs_and_kills_what_a_killed_server_left_running(tmp_path: Path) -> None:
    started_file = tmp_path / "started"
    repo = make_repo(tmp_path / "repo", {**PYTEST_PROJECT, "tests/test_wait.py": (
        "import os, subprocess, time\n\ndef test_wait():\n"
        "    child = subprocess.Popen(['sleep', '300'])\n"
        "    open(os.environ['STARTED_FILE'], 'w').write(f'{os.getpid()} {child.pid}')\n    time.sleep(300)\n")})
    env = cpl_env({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "STARTED_FILE": str(started_file)})
    first = start_server(repo, "--set", "tests.retry_failed=false", env=env)
    try:
        async with mcp_client(first) as client:
            done = await call(client, "run_test_targets", {"targets": ["tests/test_math.py"], "wait_sec": 60})
            running = await call(client, "run_test_targets", {"targets": ["tests/test_wait.py"], "wait_sec": 0})
            deadline = time.monotonic() + 60
            while not started_file.exists() and time.monotonic() < deadline:
                await call(client, "get_test_run", {"run_id": running["run_id"], "wait_sec": 0.1})
            assert started_file.exists()
    finally:
        first.proc.kill()  # no shutdown: the run in flight is never finished by this process
        first.proc.wait()
    leftovers = [int(pid) for pid in started_file.read_text().split()]
    assert not any(_gone(pid) for pid in leftovers), "a killed server cannot stop its runners itself"
    with running_server(repo, env=env) as second:
        deadline = time.monotonic() + 30  # killed while the server starts its services, after "ready"
        while not all(_gone(pid) for pid in leftovers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_gone(pid) for pid in leftovers), "the restarted server kills the runner and its child"
        async with mcp_client(second) as client:
            again = await call(client, "get_test_run", {"run_id": done["run_id"]})
            assert done["state"] == "failed" and done["fingerprint"]
            assert {k: v for k, v in again.items() if k != "query_id"} == {
                k: v for k, v in done.items() if k != "query_id"}
            cases = await call(client, "get_test_run", {"run_id": done["run_id"], "include": "cases"})
            assert len(cases["cases"]) == 5
            interrupted = await call(client, "get_test_run", {"run_id": running["run_id"]})
            assert interrupted["state"] == "failed" and interrupted["finished"]
            assert "server stopped" in interrupted["message"]
            assert interrupted["target_outcomes"] == {"not_run": 1}
            # describe counts the runs it answers (it said runs_kept=0 after every restart).
            described = await call(client, "describe", {})
            assert described["status"]["tests"]["runs_kept"] == 2, described["status"]["tests"]
