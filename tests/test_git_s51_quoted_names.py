"""QA41 #8: git_status, git_diff and git_stage_and_commit printed a file name holding a newline as it is, so
``notes\\nM evil.py`` read as an untracked ``notes`` plus a modified ``evil.py``. Such names are now quoted as
git quotes them (``core.quotePath``: ``"notes\\nM evil.py"``), as search and list_files show them; the record
keeps the name itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import answer_text, call, envelope, git, make_repo, mcp_client, running_server, write_files

pytestmark = pytest.mark.anyio

_NEW = "notes\nM evil.py"
_TRACKED = "nl\tM injected.py"


async def test_names_with_control_characters_are_quoted_as_git_quotes_them(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {_TRACKED: "a\n", "plain.py": "p\n"})
    write_files(repo, {_NEW: "x\n", _TRACKED: "a\nb\n"})
    git_short = git(repo, "status", "--short").stdout.splitlines()
    assert '?? "notes\\nM evil.py"' in git_short and ' M "nl\\tM injected.py"' in git_short
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            status = await client.call_tool("git_status", {})
            diff = await client.call_tool("git_diff", {})
            commit = await client.call_tool("git_stage_and_commit", {"message": "n", "paths": [_NEW, _TRACKED]})
            after = await call(client, "git_status", {})
    assert not after.get("untracked") and not after.get("modified")
    status_lines = answer_text(status).splitlines()
    # Each git_status line is git status --short's line for the same file.
    assert set(git_short) <= set(status_lines), status_lines
    assert not any(line in ("M evil.py", "?? notes") for line in status_lines)
    assert '--- modified "nl\\tM injected.py" +1 -0' in answer_text(diff).splitlines()
    commit_lines = answer_text(commit).splitlines()
    assert any(line == 'A "notes\\nM evil.py"' for line in commit_lines), commit_lines
    assert any(line == 'M "nl\\tM injected.py"' for line in commit_lines), commit_lines
    assert not any(line.startswith("M evil.py") for line in commit_lines)
    # The structured answers keep the names as they are.
    assert envelope(status)["result"]["untracked"] == [_NEW]
    assert [f["path"] for f in envelope(diff)["result"]["files"]] == [_TRACKED]
    assert git(repo, "show", "--format=", "--name-only", "-z", "HEAD").stdout.split("\0")[:2] == sorted(
        [_NEW, _TRACKED])
