"""QA20 #12: checkout and branch refusals that git does not make, and one it does.

``git checkout -- m.py`` refuses an unmerged path (CodePlane rewrote its conflict markers and said nothing was
restored); ``git checkout -b dev`` works before the first commit (CodePlane answered 8005); ``git branch`` does not
need the index, so another process's ``index.lock`` does not stop it (CodePlane refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import GitService
from tests.builders import answer_text, call, call_error, git, make_repo, mcp_client, running_server, write_files


def _conflicted(tmp_path: Path) -> tuple[Path, str]:
    """A merge stopped on m.py; returns the repo and the file's text with git's markers."""
    repo = make_repo(tmp_path / "repo", {"m.py": "base\n", "n.py": "n\n"})
    git(repo, "checkout", "-q", "-b", "other")
    write_files(repo, {"m.py": "other\n"})
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    write_files(repo, {"m.py": "main\n"})
    git(repo, "commit", "-qam", "main")
    assert git(repo, "merge", "other", check=False).returncode != 0
    return repo, (repo / "m.py").read_text()


def test_restoring_an_unmerged_path_from_the_index_is_refused_like_git(tmp_path: Path) -> None:
    repo, markers = _conflicted(tmp_path)
    assert "unmerged" in git(repo, "checkout", "--", "m.py", check=False).stderr  # the oracle
    write_files(repo, {"n.py": "local\n"})
    service = GitService(repo)
    for paths in (["m.py"], ["."], ["m.py", "n.py"]):
        with pytest.raises(CodePlaneError) as refused:
            service.checkout(paths=paths, confirm=True)
        assert refused.value.error is ErrorCode.GIT_INVALID_STATE, paths
        assert refused.value.details["paths"] == ["m.py"] and "'m.py' is unmerged" in refused.value.message
    assert (repo / "m.py").read_text() == markers and (repo / "n.py").read_text() == "local\n"
    # Paths without a conflict, and an unmerged path taken from a commit (as git checkout HEAD -- m.py), still work.
    assert service.checkout(paths=["n.py"], confirm=True).restored_paths == ["n.py"]
    service.checkout("HEAD", paths=["m.py"], confirm=True)
    assert (repo / "m.py").read_text() == "main\n"


@pytest.mark.anyio
async def test_create_in_an_empty_repository_names_the_unborn_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"}, commit=False)
    git(repo, "add", "a.txt")
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            switched = await call(client, "git_checkout", {"ref": "dev", "create": True})
            answer = await client.call_tool("git_checkout", {"ref": "main", "create": True})
            bad = await call_error(client, "git_checkout", {"ref": "a..b", "create": True})
    assert switched["branch"] == "dev" and switched["created_branch"] == "dev" and switched.get("head") is None
    assert "main" in answer_text(answer) and bad["code"] == 1003
    assert git(repo, "symbolic-ref", "HEAD").stdout.strip() == "refs/heads/main"
    assert git(repo, "status", "--porcelain").stdout == "A  a.txt\n"  # the index is kept, as git keeps it
    git(repo, "commit", "-qm", "first")
    assert git(repo, "branch", "--format=%(refname:short)").stdout.split() == ["main"]


def test_branch_and_tag_writes_go_ahead_while_another_process_holds_the_index(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    (repo / ".git" / "index.lock").write_bytes(b"")
    service = GitService(repo)
    service.branch_create("b1")
    service.branch_rename("b1", "b2")
    service.tag_create("t1")
    service.branch_delete("b2")
    assert git(repo, "tag").stdout.split() == ["t1"]
    # What writes the index is still refused, retryable.
    write_files(repo, {"a.txt": "changed\n"})
    with pytest.raises(CodePlaneError) as locked:
        service.stage(["a.txt"])
    assert locked.value.error is ErrorCode.GIT_ERROR and locked.value.retryable
