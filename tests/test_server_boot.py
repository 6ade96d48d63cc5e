"""What the boot leaves until after ``/ready`` (issue 19's warm restart) still works from ``/ready`` on.

The tool catalogue's schemas and the refactor, analysis, lint, tests and git services are built on a daemon
thread once the server serves, or by the first call that needs them; ``/ready`` must still mean every tool
answers, over a tree whose crash recovery ran.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from codeplane.core.config import load_config
from codeplane.core.errors import CodePlaneError
from codeplane.mutation.journal import Journal, Original, temp_path
from codeplane.server.boot_index import EarlyIndex
from codeplane.server.services import Deferred, build_services
from tests.builders import call, cpl_env, cpl_json, make_repo, mcp_client, start_server
from tests.index_helpers import hit_lines, running_index

FILES = {
    "app/__init__.py": "",
    "app/models.py": "class User:\n    def save(self):\n        return 'user'\n",
    "app/service.py": "from app.models import User\n\n\ndef store(u: User):\n    return u.save()\n",
}


def test_a_deferred_service_is_built_once_however_many_threads_ask() -> None:
    built: list[object] = []

    def build() -> object:
        time.sleep(0.05)  # long enough for every thread to arrive while the first builds
        built.append(object())
        return built[-1]

    deferred: Deferred[object] = Deferred(build)
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(deferred.get())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(built) == 1 and seen == [built[0]] * 8


def test_a_failed_build_raises_to_its_caller_and_the_next_use_builds_again() -> None:
    attempts: list[int] = []

    def build() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("disk went away")
        return "service"

    deferred: Deferred[str] = Deferred(build)
    with pytest.raises(OSError, match="disk went away"):
        deferred.get()
    assert deferred.get() == "service" and deferred.get() == "service" and len(attempts) == 2


def test_a_build_hook_runs_before_anyone_can_reach_the_service_and_at_once_once_it_is_built() -> None:
    # The metrics subscribe to test runs this way: no run can start before the subscription.
    seen: list[tuple[str, bool]] = []
    deferred: Deferred[list[str]] = Deferred(lambda: ["service"])
    deferred.on_build(lambda value: seen.append(("early", deferred.peek() is None and value == ["service"])))
    assert seen == [] and deferred.peek() is None
    deferred.get()
    deferred.on_build(lambda value: seen.append(("late", value is deferred.peek())))
    deferred.get()
    assert seen == [("early", True), ("late", True)]


@pytest.mark.anyio
async def test_a_batch_a_crash_left_half_written_is_rolled_back_by_ready_and_never_found(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    cpl_json("init", cwd=repo)  # a warm restart: the index exists and holds the file as committed
    original = (repo / "app/models.py").read_bytes()
    Journal.write(repo, repo / ".codeplane/journal", "mut_crashed",
                  [Original("app/models.py", original, 0o644, temp_path("app/models.py", "mut_crashed"))],
                  created_dirs=[], moves=[])
    (repo / "app/models.py").write_text("half_written_token = 1\n")
    handle = start_server(repo)
    try:
        with httpx.Client(timeout=10) as http:
            deadline = time.monotonic() + 60
            while http.get(f"{handle.base_url}/ready").status_code != 200:
                assert time.monotonic() < deadline, "server never became ready"
                time.sleep(0.01)
        assert (repo / "app/models.py").read_bytes() == original
        async with mcp_client(handle) as client:
            stale = await call(client, "search", {"query": "half_written_token", "syntax": "identifier"})
            fresh = await call(client, "search", {"query": "User", "syntax": "identifier"})
        assert "results" not in stale  # an empty page leaves the key out
        assert "app/models.py" in {r["path"] for r in fresh["results"]}
    finally:
        handle.stop()


@pytest.mark.anyio
async def test_tools_answer_at_the_first_ready_before_the_warm_up_can_have_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    handle = start_server(repo)
    try:
        deadline = time.monotonic() + 60
        with httpx.Client(timeout=10) as http:
            while http.get(f"{handle.base_url}/ready").status_code != 200:
                assert time.monotonic() < deadline, "server never became ready"
                time.sleep(0.001)
        # At once: the catalogue and the refactor service may still be unbuilt; the calls build what they need.
        async with mcp_client(handle) as client:
            preview = await call(client, "refactor_rename", {"symbol": "app.models.User.save", "new_name": "persist"})
            # semantic_diff and lint_tools import their subsystem on first use (neither is imported by the boot).
            diff = await call(client, "semantic_diff", {"base": "HEAD"})
            linters = await call(client, "lint_tools")
            names = {tool.name for tool in (await client.list_tools()).tools}
        assert preview["status"] == "ready" and "app/models.py" in {f["path"] for f in preview["affected_files"]}
        assert diff["summary"] and isinstance(linters, dict)  # each answered (``call`` asserts no error)
        assert {"refactor_rename", "search", "write_source", "describe"} <= names
        refactor = handle.get("/status").json()["refactor"]
        assert refactor["open_plans"] == 1 and refactor["enabled"] is True
    finally:
        handle.stop()


#: Run in a fresh interpreter: which subsystems building the services and the MCP stack (all of the boot but the
#: lifecycles) imports, then whether the deferred services still come up on first use.
_BOOT_IMPORTS = """
import sys
from pathlib import Path
from codeplane.core.config import load_config
from codeplane.server.app import build_stack
from codeplane.server.services import build_services
root = Path(sys.argv[1])
stack = build_stack(build_services(root, load_config(root), "boot-imports"))
print(sorted({m for m in sys.modules if m in ("codeplane.analysis", "codeplane.refactor.service",
                                              "codeplane.testing.service", "codeplane.git.service")}))
stack.services.analysis
print("codeplane.analysis" in sys.modules)
print(stack.services.deferred_testing.peek(), stack.services.deferred_git.peek())
print(sorted(stack.services.status()["tests"]) == sorted(stack.services.testing.status()),
      stack.services.git.status(limit=1).branch is not None)
"""


def test_building_the_stack_leaves_the_semantic_diff_engine_for_its_first_use(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    proc = subprocess.run([sys.executable, "-c", _BOOT_IMPORTS, str(repo)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:4] == ["[]", "True", "None None", "True True"]


@pytest.mark.anyio
async def test_stopping_before_the_warm_up_builds_no_service_just_to_stop_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    services = build_services(repo, load_config(repo, overrides=["index.watch=false"]), "stop-early")
    for lifecycle in reversed(services.lifecycles):
        if lifecycle.name in ("testing", "git", "lint"):
            await lifecycle.stop()
    assert (services.deferred_testing.peek(), services.deferred_git.peek(), services.deferred_lint.peek()) == (
        None, None, None)
    assert not services.layout.test_runs_db.exists()
    services.testing.close()  # built (it opens its stores), and closed as the lifecycle would
    assert services.layout.test_runs_db.exists()


@pytest.mark.anyio
async def test_tests_and_git_answer_from_ready_and_runs_reach_the_metrics(tmp_path: Path) -> None:
    # Both services are built after /ready (by the warm-up or the first call that needs them): /status answers
    # for them at once, a run started right away is counted by /metrics, and a write's delta names its tests.
    repo = make_repo(tmp_path / "repo", {**FILES, "pytest.ini": "[pytest]\npythonpath = .\n",
                                         "tests/test_models.py": "from app.models import User\n\n\n"
                                                                 "def test_save():\n    assert User().save()\n"})
    handle = start_server(repo, env=cpl_env({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}))
    try:
        deadline = time.monotonic() + 60
        with httpx.Client(timeout=10) as http:
            while http.get(f"{handle.base_url}/ready").status_code != 200:
                assert time.monotonic() < deadline, "server never became ready"
                time.sleep(0.001)
        status = handle.get("/status").json()
        assert status["tests"]["active_runs"] == [] and status["storage"]["warnings"] == []
        async with mcp_client(handle) as client:
            run = await call(client, "run_test_targets", {"targets": ["tests/test_models.py"], "wait_sec": 60})
            written = await call(client, "write_source", {"edits": [
                {"path": "app/models.py", "action": "update", "old_text": "return 'user'",
                 "new_text": "return 'member'"}]})
            git = await call(client, "git_status", {})
        assert run["state"] == "passed" and run["counts"]["passed"] == 1
        assert [(e["path"], e["status"]) for e in git["modified"]] == [("app/models.py", "modified")]
        assert written["delta"]["tests_affected"] == ["tests/test_models.py::test_save"]
        metrics = handle.get("/metrics").text
        assert 'codeplane_test_runs_total{state="passed"} 1.0' in metrics
    finally:
        handle.stop()


def test_a_reconcile_listener_registered_after_the_startup_reconcile_still_hears_of_it(tmp_path: Path) -> None:
    # The boot starts the index before it wires its metrics (server/boot_index.py): what was published before
    # a listener came is replayed to it once, and what comes after is told once.
    repo = make_repo(tmp_path / "repo", FILES)
    with running_index(repo) as index:
        heard: list[tuple[str, int]] = []
        index.on_reconcile(lambda report, _summary: heard.append((report.reason, report.added)))
        assert heard == [("startup", len(FILES))]
        (repo / "app/extra.py").write_text("EXTRA = 1\n")
        index.refresh_paths(["app/extra.py"])
        assert heard == [("startup", len(FILES)), ("refresh", 1)]


def test_an_early_index_runs_recovery_before_the_start_and_a_failed_recovery_fails_both_steps(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    cpl_json("init", cwd=repo)
    original = (repo / "app/models.py").read_bytes()
    Journal.write(repo, repo / ".codeplane/journal", "mut_crashed",
                  [Original("app/models.py", original, 0o644, temp_path("app/models.py", "mut_crashed"))],
                  created_dirs=[], moves=[])
    (repo / "app/models.py").write_text("half_written_token = 1\n")
    early = EarlyIndex(repo, load_config(repo, overrides=["index.watch=false"]))
    try:
        index = early.started()
        assert index.wait_ready(60)
        assert (repo / "app/models.py").read_bytes() == original
        assert not hit_lines(index, "half_written_token")
    finally:
        early.abandon()
    assert index.state == "stopped"
    # A journal that cannot be rolled back (its directory unreadable as a journal) keeps the index unopened.
    broken = repo / ".codeplane/journal/mut_broken"
    broken.mkdir(parents=True)
    (broken / "manifest.json").write_text("{not json")
    failed = EarlyIndex(repo, load_config(repo, overrides=["index.watch=false"]))
    with pytest.raises(CodePlaneError):
        failed.recovered()
    with pytest.raises(CodePlaneError):
        failed.started()
    failed.abandon()  # nothing started: nothing to stop, no error
    assert failed.index.state == "stopped"


#: Run in a fresh interpreter, as the boot does: the SDK and the stack's modules imported, then what a server never
#: uses must be absent, the SDK packages' exports must still resolve, and the warm-up must build every model left
#: but the tools' result models (each built by its tool's first call).
_LEAN_IMPORTS = """
import sys
from pydantic import BaseModel
from codeplane.server.sdk_import import import_mcp_sdk
import_mcp_sdk()
import codeplane.cli.main, codeplane.server.app
from codeplane.server.app import build_deferred_models
from codeplane.git.models import GitModel
print(sorted(m for m in ("httpx", "httpx2", "mcp.client.client", "mcp.server.mcpserver") if m in sys.modules))
print(GitModel.__pydantic_complete__)
print(build_deferred_models() > 0, build_deferred_models())
def subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)
from codeplane.server.tooling import ToolResult
print(sorted({m.__qualname__ for m in subclasses(BaseModel) if m.__module__.startswith("codeplane.")
              and not m.__pydantic_complete__ and not issubclass(m, ToolResult)}))
from mcp import Client, ClientSession
from mcp.server import MCPServer, Server
import mcp
print(Client.__name__, ClientSession.__name__, MCPServer.__name__, Server.__name__, mcp.types.Tool.__name__)
try:
    mcp.no_such_name
except AttributeError as exc:
    print(type(exc).__name__)
"""


def test_the_boot_imports_no_client_side_and_the_warm_up_builds_every_deferred_model() -> None:
    proc = subprocess.run([sys.executable, "-c", _LEAN_IMPORTS], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:6] == [
        "[]", "False", "True 0", "[]", "Client ClientSession MCPServer Server Tool", "AttributeError"]


def test_a_status_section_that_fails_reports_its_error_and_the_others_still_answer(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    services = build_services(repo, load_config(repo), "r1")

    def broken() -> dict[str, object]:
        raise OSError("test_runs.db: disk I/O error")

    services.status_sections = {"tests": broken, "fine": lambda: {"ok": True}}
    assert services.status() == {"fine": {"ok": True}, "tests": {"error": "OSError: test_runs.db: disk I/O error"}}


_SDK_BUILDS = """
from pydantic import BaseModel, TypeAdapter
from codeplane.server.sdk_import import import_mcp_sdk, warm_mcp_sdk
import_mcp_sdk()
import mcp_types
params = mcp_types.CallToolRequestParams
print(params.__pydantic_complete__, mcp_types.client_request_adapter.pydantic_complete)
print(TypeAdapter(list[int]).pydantic_complete, "model_rebuild" in BaseModel.__dict__)
warm_mcp_sdk()
print(params.__pydantic_complete__, mcp_types.client_request_adapter.pydantic_complete,
      mcp_types.server_result_adapter.pydantic_complete)
print(params.model_validate({"name": "search", "arguments": {"query": "x"}}).arguments)
"""


def test_the_sdks_import_time_builds_wait_for_the_warm_up() -> None:
    # mcp_types rebuilds four models and builds a TypeAdapter per message union as it imports; the boot leaves them
    # for first use (or the warm-up after /ready), and nothing else is left unbuilt once the import is done.
    proc = subprocess.run([sys.executable, "-c", _SDK_BUILDS], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:4] == ["False False", "True True", "True True True", "{'query': 'x'}"]


def test_ready_with_wait_answers_once_the_server_is_ready_and_refuses_a_bad_wait(tmp_path: Path) -> None:
    """``/ready?wait=S`` holds its answer until the first build is published (one request, no polling); a wait
    that is not a number of seconds from 0 to 300 is a typed 400, before the boot and after it."""
    repo = make_repo(tmp_path / "repo", FILES)
    handle = start_server(repo)
    try:
        with httpx.Client(timeout=120) as http:
            early = http.get(f"{handle.base_url}/ready", params={"wait": "abc"})
            held = http.get(f"{handle.base_url}/ready", params={"wait": "90"})  # the boot takes a second or more
            assert held.status_code == 200 and held.json()["ready"] is True
            for bad in ("abc", "-1", "301", "nan"):
                refused = http.get(f"{handle.base_url}/ready", params={"wait": bad})
                assert refused.status_code == 400, bad
                assert refused.json()["code"] == 1003 and refused.json()["details"]["parameter"] == "wait"
            assert http.get(f"{handle.base_url}/ready", params={"wait": "0"}).status_code == 200
        assert early.status_code == 400 and early.json()["retryable"] is False
    finally:
        handle.stop()
