"""A semantic diff's affected tests follow coverage evidence recorded after the report was first built: the real
server, the official MCP client, a real pytest project. A repeated ``semantic_diff`` on an unchanged tree answers
from its cached report; that report must not outlive a coverage run that narrows the selection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.builders import call, cpl_env, make_repo, mcp_client, running_server
from tests.test_testing_coverage import ENV, SHAPES

pytestmark = pytest.mark.anyio

FILES = {
    "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n",
    "calc/__init__.py": "",
    "calc/shapes.py": SHAPES,
    # The parametrized receiver is unresolved: the graph reaches every ``area``, Square's included.
    "tests/test_circle.py": ("import pytest\n\nfrom calc.shapes import Circle\n\n\n"
                             "@pytest.mark.parametrize('shape', [Circle(1)])\n"
                             "def test_circle(shape):\n    assert shape.area() == 3\n"),
    "tests/test_square.py": ("from calc.shapes import Square\n\n\n"
                             "def test_square():\n    assert Square(2).area() == 4\n"),
}


def _tests_of(result: dict[str, Any]) -> list[str]:
    [change] = [c for c in result["structural_changes"] if c["qualified_name"] == "Square.area"]
    files: list[str] = change["impact"]["affected_test_files"]
    return files


async def test_a_coverage_run_after_a_report_narrows_its_affected_tests(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo, "--set", "tests.retry_failed=false", env=cpl_env(ENV)) as handle:
        async with mcp_client(handle) as client:
            await call(client, "write_source", {"edits": [{"path": "calc/shapes.py", "action": "update",
                                                           "old_text": "return self.side * self.side",
                                                           "new_text": "return self.side ** 2"}]})
            before = await call(client, "semantic_diff", {})
            assert _tests_of(before) == ["tests/test_circle.py", "tests/test_square.py"]
            run = await call(client, "run_test_targets", {"coverage": True, "wait_sec": 120})
            assert run["state"] == "passed" and run["coverage"]["tests"] == 2, run
            after = await call(client, "semantic_diff", {})
            assert _tests_of(after) == ["tests/test_square.py"]
