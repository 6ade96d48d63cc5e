"""The write delta names the definitions an edit touched and the tests that cover the changed file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import call, make_repo, mcp_client, running_server

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
    # sub() is used by no test: the symbol-level selection is empty (module level would pick test_ops.py)
    assert not delta.get("tests_affected")
    assert tested["delta"]["tests_affected"] == ["tests/test_ops.py::test_add"]
