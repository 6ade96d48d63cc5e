"""Coverage evidence that adds the tests the graph did not reach (QA31 F1): the answer's hint no longer says that
no test reaches the change. The real server, the official MCP client, a real git repository and a coverage run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import call, cpl_env, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {
    "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n",
    "calc/__init__.py": "",
    # ``outer`` is called only by a name the test computes: the graph's walk ends there.
    "calc/dyn.py": "def inner():\n    return 1\n\n\ndef outer():\n    return inner()\n",   # 2: inner's body
    "tests/test_dyn.py": ("import calc.dyn\n\n\ndef test_dyn():\n    name = 'out' + 'er'\n"
                          "    assert getattr(calc.dyn, name)() == 1\n"),
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_evidence_that_adds_tests_takes_back_no_test_reaches(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo, "--set", "tests.retry_failed=false",
                        env=cpl_env({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})) as server:
        async with mcp_client(server) as client:
            graph = (await call(client, "inspect_affected_tests", {"changed_files": ["calc/dyn.py:2"]}))["impact"]
            assert not graph.get("matches") and "No test reaches" in graph["agentic_hint"], graph
            run = await call(client, "run_test_targets", {"coverage": True, "wait_sec": 120})
            assert run["state"] == "passed", run
            seen = (await call(client, "inspect_affected_tests", {"changed_files": ["calc/dyn.py:2"]}))["impact"]
    assert [m["test_file"] for m in seen["matches"]] == ["tests/test_dyn.py"], seen
    assert "added that the graph did not reach" in seen["agentic_hint"], seen
    assert "No test reaches" not in seen["agentic_hint"], seen
