"""QA35 F2/F2c: a checkout (plain or forced) or hard reset to a commit without a submodule leaves the submodule's
directory as git does ("unable to rmdir"): its edits, untracked files and own ``.git`` with unpushed commits stay,
and the answer warns."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeplane.git import GitService
from tests.builders import answer_text, mcp_client, running_server
from tests.git_oracle import run_git

pytestmark = pytest.mark.anyio

_FILE_OK = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "protocol.file.allow", "GIT_CONFIG_VALUE_0": "always"}


def _super_with_own_gitdir(tmp: Path) -> Path:
    """A superproject whose submodule ``libs/sub`` was added from a clone (its ``.git`` a directory) holding a
    commit the submodule's origin never got; the submodule is then edited and given an untracked file."""
    src = tmp / "subsrc"
    src.mkdir()
    run_git(src, "init", "-q", "-b", "main")
    (src / "s.txt").write_text("s1\n")
    run_git(src, "add", ".")
    run_git(src, "commit", "-qm", "s1")
    top = tmp / "top"
    top.mkdir()
    run_git(top, "init", "-q", "-b", "main")
    (top / "top.txt").write_text("top\n")
    run_git(top, "add", ".")
    run_git(top, "commit", "-qm", "top")
    run_git(top, "clone", "-q", str(src), "libs/sub", env=_FILE_OK)
    sub = top / "libs/sub"
    (sub / "s.txt").write_text("s1\ns2\n")
    run_git(sub, "commit", "-qam", "unpushed s2")
    run_git(top, "submodule", "add", "-q", str(src), "libs/sub", env=_FILE_OK)
    run_git(top, "commit", "-qm", "add sub")
    return top


def _still_there(top: Path, unpushed: bytes) -> None:
    sub = top / "libs/sub"
    assert (sub / ".git").is_dir()
    assert run_git(sub, "rev-parse", "HEAD").strip() == unpushed
    assert (sub / "s.txt").read_text() == "s1\ns2\nedited\n"
    assert (sub / "notes.txt").read_text() == "mine\n"


def _dirty_sub(top: Path) -> bytes:
    sub = top / "libs/sub"
    with open(sub / "s.txt", "a") as f:
        f.write("edited\n")
    (sub / "notes.txt").write_text("mine\n")
    return run_git(sub, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("force", [False, True])
def test_checkout_to_a_commit_without_the_submodule_keeps_its_directory(tmp_path: Path, force: bool) -> None:
    top = _super_with_own_gitdir(tmp_path)
    unpushed = _dirty_sub(top)
    result = GitService(top).checkout("HEAD~1", force=force, confirm=force)
    _still_there(top, unpushed)
    assert any("unable to rmdir 'libs/sub'" in w for w in result.warnings), result.warnings
    assert run_git(top, "status", "--porcelain").decode() == "?? libs/\n"
    assert not any(p.name.startswith("codeplane-held") for p in (top / ".git").iterdir())


def test_hard_reset_to_a_commit_without_the_submodule_keeps_its_directory(tmp_path: Path) -> None:
    top = _super_with_own_gitdir(tmp_path)
    unpushed = _dirty_sub(top)
    result = GitService(top).reset("HEAD~1", "hard", confirm=True)
    _still_there(top, unpushed)
    assert any("unable to rmdir 'libs/sub'" in w for w in result.warnings), result.warnings
    assert not (top / ".gitmodules").exists()


async def test_the_checkout_answer_warns_that_the_submodule_directory_stays(tmp_path: Path) -> None:
    top = _super_with_own_gitdir(tmp_path)
    unpushed = run_git(top / "libs/sub", "rev-parse", "HEAD").strip()
    with running_server(top) as server:
        async with mcp_client(server) as client:
            text = answer_text(await client.call_tool("git_checkout", {"ref": "HEAD~1"}))
    assert "warning: unable to rmdir 'libs/sub'" in text, text
    assert run_git(top / "libs/sub", "rev-parse", "HEAD").strip() == unpushed
    assert os.path.isdir(top / "libs/sub/.git")


def test_fast_forward_merge_that_drops_the_submodule_keeps_its_directory(tmp_path: Path) -> None:
    top = _super_with_own_gitdir(tmp_path)
    run_git(top, "rm", "-q", "--cached", "libs/sub")
    run_git(top, "rm", "-q", ".gitmodules")
    run_git(top, "commit", "-qm", "drop sub")
    run_git(top, "branch", "drop")
    run_git(top, "reset", "-q", "--hard", "HEAD~1")
    unpushed = run_git(top / "libs/sub", "rev-parse", "HEAD").strip()
    result = GitService(top).merge("drop")
    assert result.success and run_git(top, "rev-parse", "HEAD") == run_git(top, "rev-parse", "drop")
    assert run_git(top / "libs/sub", "rev-parse", "HEAD").strip() == unpushed
    assert (top / "libs/sub/.git").is_dir()
