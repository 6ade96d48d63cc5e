"""QA52 F5, F9, F10: answers that said a thing twice or padded it. Through the real server with the official
client: an unknown tool's name answers its "did you mean" without every tool's name; a paged lint answer counts
once, without zero counts; describe leaves out zero fields; semantic_diff says no "nothing to act on" hint; a
diff past max_files says once how many files it left out, and the max_files that lists them all. And (a side
observation) a symbol search lists one file's hits in line order; git_history names a file's old name once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.builders import answer_text, envelope, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {
    "pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.ruff.lint]\nselect = ['F']\n",
    "pkg/__init__.py": "", "pkg/a.py": "import os\nimport sys\n", "pkg/c.py": "def f():\n    return 1\n",
    "README.md": "# pkg\n",
    # ``foo`` matches the second exactly and the first by prefix: rank order is line 5, then line 1.
    "pkg/names.py": "def foo_helper():\n    pass\n\n\ndef foo():\n    pass\n",
    **{f"docs/n{i}.txt": f"note {i}\n" for i in range(5)},
}


async def test_answers_say_each_count_and_name_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    for n in range(2):
        (repo / "pkg" / "old_name.py").write_text(f"V = {n}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"change {n}")
    git(repo, "mv", "pkg/old_name.py", "pkg/new_name.py")
    git(repo, "commit", "-q", "-m", "rename")
    with running_server(repo, "--profile", "full") as server:
        async with mcp_client(server) as client:
            typo = await client.call_tool("describe", {"action": "tool", "name": "git_stats"})
            text = answer_text(typo)
            assert typo.is_error and text.splitlines() == [
                "error 1004 UNKNOWN_TOOL: no tool named 'git_stats'; did you mean git_status or git_stash or "
                "git_stage?"], text

            history = answer_text(await client.call_tool("git_history", {"path": "pkg/new_name.py"}))
            # The old name once, on the first commit that had it (it was on each).
            assert [line.rsplit("[", 1)[1] for line in history.splitlines()] == [
                "renamed from pkg/old_name.py]", "modified as pkg/old_name.py]", "added]"], history

            found = await client.call_tool("search", {"query": "foo", "mode": "symbol"})
            text, record = answer_text(found), envelope(found)["result"]
            assert [h["line"] for h in record["results"] if h["path"] == "pkg/names.py"] == [5, 1], record
            numbers = [int(m[1]) for m in re.finditer(r"^(\d+):", text.split("pkg/names.py", 1)[1], re.M)]
            assert numbers == [1, 5], text

            paged = await client.call_tool("lint_check", {"tools": ["ruff"], "limit": 1, "paths": ["pkg/a.py"]})
            text, record = answer_text(paged), envelope(paged)["result"]
            assert record["total"] == 2 and record["next_cursor"], text
            assert text.splitlines()[-2:] == ["ruff: 2 diagnostics",
                                              f"2 fixable ([*]); showing 1-1; next cursor: {record['next_cursor']}"]

            described = answer_text(await client.call_tool("describe", {}))
            assert not re.search(r"=0\b| 0 pending", described), described

            (repo / "README.md").write_text("# pkg\n\nA line more.\n")
            for n in range(5):
                (repo / "docs" / f"n{n}.txt").write_text(f"note {n} changed\n")
            (repo / "pkg" / "c.py").write_text("# a comment\ndef f():\n    return 1\n")
            semantic = answer_text(await client.call_tool("semantic_diff", {}))
            assert "no structural changes" in semantic.splitlines()[0] and "hint:" not in semantic, semantic

            diff = await client.call_tool("git_diff", {"include_hunks": False, "max_files": 2})
            text = answer_text(diff)
    assert envelope(diff)["result"]["files_omitted"] == 5, text
    assert [line for line in text.splitlines() if "omitted" in line or "more files" in line] == [
        "… 5 files omitted: max_files=7 lists all"], text
