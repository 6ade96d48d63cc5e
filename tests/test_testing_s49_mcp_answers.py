"""QA 33 §8 through the real server and the official MCP client: ten files failing to import one missing module
are one entry in ``run_test_targets``' text, and a case the file does not hold is answered with the cases of the
class asked for and the right count of the rest."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.builders import ServerHandle, answer_text, cpl_env, envelope, make_repo, mcp_client, running_server
from tests.test_testing_s49_folded_causes import _importing_files
from tests.test_testing_s49_unknown_case import _funcs_file

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("s49") / "repo", {**_importing_files(),
                                                              "tests/test_funcs.py": _funcs_file()})
    with running_server(repo, "--set", "tests.retry_failed=false",
                        env=cpl_env({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})) as handle:
        yield handle


async def test_a_missing_module_that_broke_ten_files_is_said_once(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("run_test_targets", {"targets": [f"tests/test_mod_{n}.py" for n in range(10)],
                                                          "wait_sec": 120})
    record, text = envelope(res)["result"], answer_text(res)
    assert record["finished"] and record["target_outcomes"] == {"error": 10}, record
    assert text.count("No module named 'absent_dep'") == 1 and len(text.encode()) < 2_000, text
    heads = [line for line in text.splitlines() if line.startswith("ERROR ")]
    named = [t for line in text.splitlines() if line.startswith(("  same: ", "  same cause: "))
             for t in line.split(": ", 1)[1].split()]
    assert len(heads) == 1 and len(named) == 9, text
    assert "next cursor" not in text, text


async def test_an_unknown_case_answers_with_its_class_cases_and_the_count_of_the_rest(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("run_test_targets", {"targets": ["tests/test_funcs.py::TestEvolve::nope"],
                                                          "wait_sec": 120})
    text = answer_text(res)
    assert "no test case TestEvolve::nope in tests/test_funcs.py; it holds TestEvolve::" in text, text
    assert "TestAsDict" not in text and "(+47 more)" in text, text
