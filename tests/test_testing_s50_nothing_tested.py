"""A run of an ``affected_by`` selection that holds no test (§11.9, QA s50): when the selection is ``partial`` nothing
proves that no test reaches the change, so the run must not end ``passed`` — it ends ``failed`` with the reason,
and selects nothing on its own (§11.9.7: no auto-broadening). A ``complete`` empty selection still passes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.builders import ServerHandle, answer_text, call, cpl_env, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {
    "pytest.ini": "[pytest]\npythonpath = .\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "NOTES.txt": "no test reads this\n",
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("s50nothing") / "repo", FILES)
    with running_server(repo, env=cpl_env({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})) as handle:
        yield handle


async def test_a_partial_selection_without_tests_ends_failed_not_passed(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        result = await client.call_tool("run_test_targets", {"affected_by": ["NOTES.txt"], "wait_sec": 30})
        run = result.structured_content["result"]
        text = answer_text(result)
        stored = await call(client, "get_test_run", {"run_id": run["run_id"]})
    assert run["state"] == "failed", run
    assert run["targets_total"] == 0 and run["counts"] == {"total": 0}, run  # nothing was added to compensate
    assert run["message"].startswith("nothing ran: the selection for NOTES.txt is partial"), run["message"]
    assert run["fingerprint"], run
    assert text.startswith(f"{run['run_id']} failed: no cases") and "passed" not in text.splitlines()[0], text
    assert stored["state"] == "failed" and stored["message"] == run["message"], stored


async def test_a_complete_empty_selection_still_passes(server: ServerHandle) -> None:
    """Nothing changed since HEAD: the selection is complete and empty, which proves there is nothing to test."""
    async with mcp_client(server) as client:
        run = await call(client, "run_test_targets", {"changed_since": "HEAD", "wait_sec": 30})
    assert run["state"] == "passed" and run["targets_total"] == 0, run
    assert run["message"].startswith("nothing ran: no file changed"), run
    assert not run.get("fingerprint"), run
