"""QA41 §3 through the real server and the official MCP client: ``lint_check`` on a ``--fix`` directory is a
read-only check, and ``run_test_targets`` reports a failing test under ``-k/`` as failed and a passing neighbour
of a ``-legacy/`` file as passed (not FLAKY)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import answer_text, call, call_error, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FAILING = "def test_fails():\n    assert 1 + 1 == 3\n"
FILES = {
    "pyproject.toml": "[project]\nname = 'x'\nversion = '0'\n\n[tool.ruff]\nline-length = 100\n",
    "-dash.py": "import os\n",
    "ok.py": "import json\n",
    "--fix/m.py": "import sys\n",
    "pytest.ini": "[pytest]\n",
    "-k/test_a.py": FAILING,
    "-legacy/test_c.py": FAILING,
    "test_b.py": "def test_passes():\n    assert True\n",
}


async def test_dash_paths_reach_linters_and_pytest_as_paths(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", FILES)
    with running_server(root) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("lint_check", {"paths": ["--fix"]})
            text = answer_text(res)
            assert not res.is_error and "--fix/m.py:1:8: F401" in text, text
            assert git(root, "status", "--porcelain").stdout == ""  # fix is false: nothing written
            res = await client.call_tool("lint_check", {"paths": ["-dash.py"]})
            assert "-dash.py:1:8: F401" in answer_text(res) and "failed" not in answer_text(res), answer_text(res)

            alone = await call(client, "run_test_targets", {"targets": ["-k/test_a.py"], "wait_sec": 120})
            assert alone["state"] == "failed", alone
            whole = await client.call_tool("run_test_targets", {"wait_sec": 120})
            text = answer_text(whole)
            assert "FLAKY" not in text and "2 failed" in text and "1 passed" in text, text

            (root / "node_modules").mkdir()
            (root / "node_modules" / "x.py").write_text("import os\n")
            err = await call_error(client, "lint_check", {"paths": ["node_modules/x.py"]})
            assert err["code"] == 5001, err
