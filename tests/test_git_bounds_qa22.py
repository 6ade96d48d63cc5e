"""QA22 leftovers: a worktree name, a recovery point name and a stash index the file system (or git) cannot hold
are refused with a typed 1003 naming the field, before anything is created; they were 9001 (OSError "File name
too long"), 8001 (ValueError) and an unbounded schema. Through the real server, as an agent calls them."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from codeplane.git.branches import MAX_NAME_PART_BYTES
from tests.builders import call_error, git, make_repo, mcp_client, running_server, write_files


def _branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)").stdout.split()


@pytest.mark.anyio
async def test_overlong_names_and_indexes_are_refused_with_the_field(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    write_files(repo, {"a.txt": "b\n"})
    git(repo, "stash", "-q")
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            worktree = await call_error(client, "git_worktree", {"action": "add", "name": "W" * 5000})
            worktree_300 = await call_error(client, "git_worktree", {"action": "add", "name": "W" * 300})
            point = await call_error(client, "git_reset", {"recovery_point": "A" * 100_000, "confirm": True})
            missing = await call_error(client, "git_reset", {"recovery_point": "B" * 250, "confirm": True})
            stash = await call_error(client, "git_stash", {"action": "pop", "index": 10**30})
            stash_missing = await call_error(client, "git_stash", {"action": "pop", "index": 5})
    assert (worktree["code"], worktree["details"]["field"]) == (1003, "name")
    assert worktree["details"]["limit"] == MAX_NAME_PART_BYTES
    assert len(worktree["message"]) < 200 and worktree_300["code"] == 1003
    assert (point["code"], point["details"]["field"]) == (1003, "recovery_point") and len(point["message"]) < 200
    assert missing["code"] == 8002
    assert stash["code"] == 1003 and stash["details"]["problems"][0]["field"] == "index"
    assert stash_missing["code"] == 8002
    assert _branches(repo) == ["main"] and not (repo / ".codeplane" / "worktrees").exists()
    assert git(repo, "stash", "list").stdout.count("\n") == 1


def test_a_worktree_name_with_a_slash_is_refused_before_its_branch_is_made(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    service = GitService(repo)
    with pytest.raises(CodePlaneError) as refused:
        service.worktree_change("add", name="a/b")
    assert refused.value.code == 1003 and refused.value.details["field"] == "name"
    assert _branches(repo) == ["main"]
    made = service.worktree_change("add", name="w" * MAX_NAME_PART_BYTES)
    assert made.worktree is not None and made.worktree.branch == "w" * MAX_NAME_PART_BYTES


def test_a_branch_name_too_long_for_a_file_name_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    service = GitService(repo)
    for name in ("b" * (MAX_NAME_PART_BYTES + 1), "ok/" + "é" * 200):
        with pytest.raises(CodePlaneError) as refused:
            service.branch_create(name)
        assert refused.value.code == 1003 and refused.value.details["limit"] == MAX_NAME_PART_BYTES
        with pytest.raises(CodePlaneError) as switch:
            service.checkout(name, create=True)
        assert switch.value.code == 1003
    made = service.branch_create("b" * MAX_NAME_PART_BYTES).branch
    assert made is not None and made.name == "b" * MAX_NAME_PART_BYTES
    assert sorted(_branches(repo)) == ["b" * MAX_NAME_PART_BYTES, "main"]
