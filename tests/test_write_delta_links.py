"""The write delta names the definitions an edit touched and the tests that cover the changed file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import answer_text, call, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {
    "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    "calc/other.py": "def unrelated():\n    return 0\n",
    "tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "tests/test_other.py": "from calc.other import unrelated\n\n\ndef test_unrelated():\n    assert unrelated() == 0\n",
}


async def test_delta_has_symbols_changed_and_tests_affected(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            answer = await call(client, "write_source", {"edits": [
                {"path": "calc/ops.py", "action": "update", "old_text": "return a - b",
                 "new_text": "return a - b - 0"}]})
            tested = await call(client, "write_source", {"edits": [
                {"path": "calc/ops.py", "action": "update", "old_text": "return a + b",
                 "new_text": "return a + b + 0"}]})
    delta = answer["delta"]
    assert delta["symbols_changed"] == ["calc/ops.py:function:calc.ops.sub"]
    # sub() is referenced nowhere: only a dynamic use (getattr(ops, name)) could reach it, so its module's importers
    # are selected (issue 22: what the graph cannot follow widens; QA31's property read by name selected nothing).
    assert delta.get("tests_affected") == ["tests/test_ops.py"]
    assert tested["delta"]["tests_affected"] == ["tests/test_ops.py::test_add"]


#: ``add`` is used by 12 tests in 6 files: more than a delta lists by name.
WIDE = {
    "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    **{f"tests/test_w{k}.py": ("from calc.ops import add\n\n\n"
                               + "".join(f"def test_{k}_{c}():\n    assert add({k}, 1) == {k + 1}\n\n\n" for c in "xy"))
       for k in range(6)},
}


async def test_many_affected_tests_are_named_by_file_with_the_exact_selection_that_finds_them_all(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", WIDE)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("write_source", {"edits": [
                {"path": "calc/ops.py", "action": "update", "old_text": "return a + b", "new_text": "return b + a"}]})
            delta = envelope(res)["result"]["delta"]
            found = await call(client, "discover_test_targets", {"affected_by": delta["tests_affected_by"]})
    assert delta["tests_affected"] == [f"tests/test_w{k}.py" for k in range(6)]
    assert delta["tests_affected_total"] == 12 and "tests_affected_files" not in delta, "all 6 files are listed"
    assert delta["tests_affected_by"] == ["calc/ops.py:2-2"]
    # The selection the delta names reselects exactly its tests.
    selected = sorted(f"{t['target_id']}::{c}" for t in found["targets"] for c in t.get("cases", []))
    assert selected == sorted(f"tests/test_w{k}.py::test_{k}_{c}" for k in range(6) for c in "xy")
    assert {t["target_id"] for t in found["targets"]} == set(delta["tests_affected"])
    # Too many to run by name: the text counts them (the record names the files and the selection).
    assert answer_text(res) == (f"calc/ops.py {delta['files'][0]['file_sha256'][:12]}\n"
                                "tests affected: 12 in 6 files")
