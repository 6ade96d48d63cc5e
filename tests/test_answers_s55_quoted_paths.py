"""QA55 F6: a path holding a control character was printed raw by every text that is not search's, list_files' or
git's: with a file named ``evil\\nM other.py``, write_source answered ``evil`` and then ``M other.py df429e204679``,
a line reading as a write to ``other.py``. Every tool's text now quotes such a path as git's ``core.quotePath``
does (``"evil\\nM other.py"``), a qualified name or a test id holding it too; the record keeps the path itself, and
every input takes it as it is (the quoted form names no file). Through the real server and the official client."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    call_error,
    envelope,
    git,
    make_repo,
    mcp_client,
    running_server,
)

pytestmark = pytest.mark.anyio

_SOURCE = "evil\nM other.py"
_TEST = "tests/test_evil\nM x.py"
#: How the texts show them, as ``git status --short`` does.
_SOURCE_SHOWN = '"evil\\nM other.py"'
_TEST_SHOWN = '"tests/test_evil\\nM x.py"'

_FILES = {
    "pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.ruff.lint]\nselect = ['F']\n\n"
                      "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
    ".gitignore": ".venv/\n",
    _SOURCE: "import os\n\n\ndef nlthing():\n    return 1\n\n\nVALUE = nlthing()\n",
    _TEST: "def test_bad():\n    assert False\n",
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("s55_quoted") / "repo", _FILES)
    # The repository's own virtualenv (ignored): pytest and ruff run from it.
    venv = repo / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to(sys.executable)
    (venv / "ruff").symlink_to(shutil.which("ruff") or str(Path(sys.executable).parent / "ruff"))
    with running_server(repo) as handle:
        yield handle


async def _text(client: Client, tool: str, args: dict[str, Any]) -> str:
    res = await client.call_tool(tool, args)
    assert not res.is_error, (tool, envelope(res))
    return answer_text(res)


async def test_every_text_quotes_a_path_holding_a_newline(server: ServerHandle) -> None:
    texts: dict[str, str] = {}
    async with mcp_client(server) as client:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("discover_test_targets", {}), ("read_source", {"targets": [{"path": _SOURCE}]}),
            ("read_file_full", {"path": _SOURCE}), ("lint_check", {}), ("map_repo", {}),
            ("search", {"query": "nlthing", "mode": "symbol"}),
            ("references", {"query": "nlthing", "mode": "references"}), ("refactor_impact", {"target": "nlthing"})]
        for tool, args in calls:
            texts[tool] = await _text(client, "search" if tool == "references" else tool, args)
        run = await client.call_tool("run_test_targets", {"targets": [_TEST]})
        texts["run_test_targets"] = answer_text(run)
        preview = await client.call_tool("refactor_rename", {"symbol": "nlthing", "new_name": "nl2"})
        texts["refactor_rename"] = answer_text(preview)
        refactor_id = envelope(preview)["result"]["refactor_id"]
        texts["refactor_inspect"] = await _text(client, "refactor_inspect", {"refactor_id": refactor_id,
                                                                             "certainty": ["high"]})
        texts["refactor_apply"] = await _text(client, "refactor_apply", {"refactor_id": refactor_id})
        texts["write_source"] = await _text(client, "write_source", {"edits": [
            {"path": _SOURCE, "old_text": "return 1", "new_text": "return 2"}]})
        texts["semantic_diff"] = await _text(client, "semantic_diff", {})
        texts["get_task"] = await _text(client, "get_task", {})
        texts["move"] = await _text(client, "write_source", {"edits": [{"path": _SOURCE, "to": "plain.py"}]})
        texts["git_status"] = await _text(client, "git_status", {})
        record = await call(client, "read_source", {"targets": [{"path": "plain.py"}]})
        # The quoted form is how a text shows the name, not a name: an input takes the path as it is.
        unknown = await call_error(client, "read_source", {"targets": [{"path": _SOURCE_SHOWN}]})
    lines = {tool: text.splitlines() for tool, text in texts.items()}
    for tool, text in texts.items():
        if tool != "run_test_targets":
            assert _SOURCE not in text and _TEST not in text and "\nM other" not in text, (tool, text)
    assert f"  {_TEST_SHOWN} ~" in texts["discover_test_targets"], texts["discover_test_targets"]
    # pytest's own traceback under it names the file as pytest prints it (a program's output, like a file's text).
    assert lines["run_test_targets"][1] == 'FAILED "tests/test_evil\\nM x.py::test_bad": assert False', lines
    assert lines["read_source"][0].startswith(f"== {_SOURCE_SHOWN} 1-8/8 "), lines["read_source"]
    assert lines["read_file_full"][0].startswith(f"== {_SOURCE_SHOWN} 8 lines 60 bytes "), lines["read_file_full"]
    assert f"{_SOURCE_SHOWN}:1:8: F401 `os` imported but unused [*]" in lines["lint_check"], lines["lint_check"]
    assert f"{_SOURCE_SHOWN} 8L" in lines["map_repo"] and '  "test_evil\\nM x.py" 2L' in lines["map_repo"]
    assert lines["search"][0] == _SOURCE_SHOWN, lines["search"]
    # A qualified name holds its module's, which is the file's path.
    assert lines["references"][0].startswith('function "evil\\nM other.nlthing" #'), lines["references"]
    assert lines["references"][1] == _SOURCE_SHOWN, lines["references"]
    assert lines["refactor_impact"][0].startswith('function "evil\\nM other.nlthing" #'), lines["refactor_impact"]
    assert f"({_SOURCE_SHOWN}:4): 1 references" in lines["refactor_impact"][0], lines["refactor_impact"]
    assert lines["refactor_impact"][1] == _SOURCE_SHOWN, lines["refactor_impact"]
    assert lines["refactor_rename"][0].startswith('rename function "evil\\nM other.nlthing" #'), lines
    assert f"  {_SOURCE_SHOWN} e1:4 e2:8" in lines["refactor_rename"], lines["refactor_rename"]
    assert lines["refactor_inspect"][1] == _SOURCE_SHOWN, lines["refactor_inspect"]
    assert any(line.startswith(f"{_SOURCE_SHOWN} ") for line in lines["refactor_apply"]), lines["refactor_apply"]
    assert len(lines["write_source"]) == 1 and lines["write_source"][0].startswith(f"{_SOURCE_SHOWN} "), lines
    renamed = f"> {_SOURCE_SHOWN}  function nlthing -> nl2() "
    assert any(line.startswith(renamed) for line in lines["semantic_diff"]), texts["semantic_diff"]
    assert any(line.endswith(f"paths: {_SOURCE_SHOWN}") for line in lines["get_task"]), lines["get_task"]
    assert lines["move"][0].startswith(f"R {_SOURCE_SHOWN} -> plain.py "), lines["move"]
    assert f"?? {_TEST_SHOWN}" not in lines["git_status"] and f" D {_SOURCE_SHOWN}" in lines["git_status"]
    # The records keep the names themselves.
    assert envelope(run)["result"]["targets_total"] == 1
    assert envelope(preview)["result"]["edits"][0]["path"] == _SOURCE
    assert "    return 2\n\n\nVALUE = nl2()\n" in record["files"][0]["content"]
    assert unknown["code"] == 5004 and unknown["details"]["path"] == _SOURCE_SHOWN
    assert git(server.root, "status", "--short").stdout.splitlines()[0] == f" D {_SOURCE_SHOWN}"


async def test_a_commit_says_a_rename_as_git_commit_does(tmp_path: Path) -> None:
    """QA55 F9: a case-only move committed answered ``2 files changed, +2 -2 / Foo.py / foo.py``, the effect's
    delete and add; git says ``Foo.py => foo.py | 0, 1 file changed``. The stat is now git's, the rename one
    ``R old -> new`` line; a commit without one answers as before."""
    repo = make_repo(tmp_path / "repo", {"Foo.py": "def f():\n    return 1\n", "bar.py": "B = 1\n",
                                         "gone.py": "G = 1\n"})
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            await call(client, "write_source", {"edits": [{"path": "Foo.py", "to": "foo.py"},
                                                          {"path": "bar.py", "old_text": "1", "new_text": "2"}]})
            renamed = await client.call_tool("git_stage_and_commit", {"all": True, "message": "case rename"})
            await call(client, "write_source", {"edits": [{"path": "gone.py", "action": "delete"},
                                                          {"path": "new.py", "content": "N = [1, 2]\n"}]})
            plain = await client.call_tool("git_stage_and_commit", {"all": True, "message": "delete and add"})
    assert git(repo, "show", "--stat", "--format=", "HEAD~1").stdout.splitlines()[-1] == \
        " 2 files changed, 1 insertion(+), 1 deletion(-)"
    assert answer_text(renamed).splitlines()[1:] == ["2 files changed, +1 -1", "M bar.py", "R Foo.py -> foo.py"]
    # git pairs no file of unlike content: a delete and an add, as the effect has them.
    assert answer_text(plain).splitlines()[1:] == ["2 files changed, +1 -1", "D gone.py", "A new.py"]
    effect = envelope(renamed)["result"]["effect"]
    assert [p.get("change", "modified") for p in effect["paths"]] == ["deleted", "modified", "added"]
