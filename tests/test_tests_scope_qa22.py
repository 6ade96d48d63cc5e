"""Changed paths given to test selection stay inside the repository: a path through a symlink that leaves it, or
into ``.git``, is refused (5001) by every tool that selects by changes. They were read to count their lines:
``inspect_affected_tests(["outlink/passwd:99999"])`` answered how many lines a file outside the repo has."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.builders import ServerHandle, call, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {
    "pkg/__init__.py": "",
    "pkg/mod.py": "def a():\n    return 1\n",
    "tests/test_mod.py": "from pkg.mod import a\n\n\ndef test_a():\n    assert a() == 1\n",
    "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    base = tmp_path_factory.mktemp("scope")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("one\ntwo\nthree\n")
    repo = make_repo(base / "repo", FILES)
    (repo / "outlink").symlink_to(outside, target_is_directory=True)
    with running_server(repo) as handle:
        yield handle


@pytest.mark.parametrize("item", ["outlink/secret.txt:99", "outlink/secret.txt", ".git/config:99", ".git/HEAD"])
async def test_a_changed_path_out_of_the_repository_is_refused_by_every_selecting_tool(server: ServerHandle,
                                                                                        item: str) -> None:
    async with mcp_client(server) as client:
        for tool, args in (("inspect_affected_tests", {"changed_files": [item]}),
                           ("discover_test_targets", {"affected_by": [item]}),
                           ("run_test_targets", {"affected_by": [item]})):
            err = await call_error(client, tool, args)
            assert err["code"] == 5001, (tool, err)
            assert "lines" not in err["message"] and "secret" not in str(err.get("details", {}).get("line_count"))


async def test_a_path_inside_the_repository_is_still_selected_by(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        impact = (await call(client, "inspect_affected_tests", {"changed_files": ["pkg/mod.py:2"]}))["impact"]
    assert [m["test_file"] for m in impact["matches"]] == ["tests/test_mod.py"]


async def test_a_bad_changed_since_is_named_as_the_caller_named_it(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        err = await call_error(client, "discover_test_targets", {"changed_since": "-x"})
    assert err["code"] == 1003 and err["details"]["field"] == "changed_since", err
