"""QA55 F3: ``semantic_diff`` against the work tree lists a changed submodule as modified (its checked-out commit
moved, or its files changed), as commit-to-commit does. The submodule's directory was skipped as a plain directory,
so its gitlink was left on the old side only and came out "deleted"."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from codeplane.analysis.sides import changed_files
from tests.builders import answer_text, make_repo, mcp_client, running_server
from tests.git_oracle import run_git

pytestmark = pytest.mark.anyio


def _superproject(tmp: Path) -> Path:
    origin = make_repo(tmp / "origin", {"subm.py": "def subfunc():\n    return 1\n"})
    top = make_repo(tmp / "top", {"a.py": "x = 1\n"})
    run_git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(origin), "sub")
    run_git(top, "commit", "-qm", "add sub")
    for key, value in (("user.name", "T"), ("user.email", "t@e")):
        run_git(top / "sub", "config", key, value)
    return top


def _sub_pairs(top: Path, base: str = "HEAD") -> list[tuple[str, str | None, str | None]]:
    sides = changed_files(pygit2.Repository(str(top)), base, None, None)
    return [(p.status, p.old_id, p.new_id) for p in sides.pairs if p.path == "sub"]


def test_a_submodule_is_unchanged_modified_or_moved_never_deleted(tmp_path: Path) -> None:
    top = _superproject(tmp_path)
    recorded = run_git(top, "rev-parse", "HEAD:sub").decode().strip()
    assert _sub_pairs(top) == []
    (top / "sub/subm.py").write_text("def subfunc():\n    return 2\n")
    assert _sub_pairs(top) == [("modified", recorded, recorded)]  # only its files changed (git: -dirty)
    run_git(top / "sub", "commit", "-qam", "sub moves on")
    moved = run_git(top / "sub", "rev-parse", "HEAD").decode().strip()
    assert _sub_pairs(top) == [("modified", recorded, moved)]
    run_git(top, "add", "sub")
    run_git(top, "commit", "-qm", "bump sub")
    assert _sub_pairs(top) == []
    assert _sub_pairs(top, "HEAD~1") == [("modified", recorded, moved)]


def test_a_submodule_directory_that_is_not_checked_out_is_no_change(tmp_path: Path) -> None:
    top = _superproject(tmp_path)
    run_git(top, "submodule", "deinit", "-q", "-f", "sub")
    assert (top / "sub").is_dir()
    assert _sub_pairs(top) == []


async def test_semantic_diff_says_the_submodule_was_modified(tmp_path: Path) -> None:
    top = _superproject(tmp_path)
    (top / "sub/subm.py").write_text("def subfunc():\n    return 2\n")
    run_git(top / "sub", "commit", "-qam", "sub moves on")
    with running_server(top) as server:
        async with mcp_client(server) as client:
            text = answer_text(await client.call_tool("semantic_diff", {}))
    assert "deleted" not in text and "modified" in text and "sub" in text, text
