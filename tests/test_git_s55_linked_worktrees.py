"""QA55 F4/F5: a server on a linked worktree lists the main work tree as ``git worktree list`` does (it listed
itself as the main one, then again as linked, and left the main one out), and refuses to remove the worktree it serves
(git deleted it under the running server, which answered 8001 and kept serving a deleted directory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from tests.builders import call, call_error, make_repo, mcp_client, running_server
from tests.git_oracle import run_git

pytestmark = pytest.mark.anyio


def _main_and_linked(tmp: Path) -> tuple[Path, Path, Path]:
    main = make_repo(tmp / "main", {"a.py": "x = 1\n"})
    run_git(main, "worktree", "add", "-q", str(tmp / "wt"), "-b", "feature")
    run_git(main, "worktree", "add", "-q", str(tmp / "wt2"), "-b", "feature2")
    return main, tmp / "wt", tmp / "wt2"


def _git_list(root: Path) -> list[tuple[str, str]]:
    blocks = run_git(root, "worktree", "list", "--porcelain").decode().strip().split("\n\n")
    return [(str(Path(b.split("\n")[0].removeprefix("worktree ")).resolve()),
             next(line for line in b.split("\n") if line.startswith("branch ")).removeprefix("branch refs/heads/"))
            for b in blocks]


@pytest.mark.parametrize("served", ["main", "wt", "wt2"])
def test_worktree_list_names_the_main_work_tree_once_whichever_worktree_serves(tmp_path: Path, served: str) -> None:
    _main_and_linked(tmp_path)
    root = tmp_path / served
    listed = GitService(root).worktrees()
    assert [(str(Path(w.path).resolve()), w.branch) for w in listed] == _git_list(root)
    assert [w.is_main for w in listed] == [True, False, False]
    assert [w.name for w in listed] == [None, "wt", "wt2"]


def test_removing_the_served_worktree_is_refused_and_removes_nothing(tmp_path: Path) -> None:
    _, wt, _ = _main_and_linked(tmp_path)
    service = GitService(wt)
    for force in (False, True):
        with pytest.raises(CodePlaneError) as refused:
            service.worktree_change("remove", name="wt", force=force)
        assert refused.value.code == 8005 and "serves" in refused.value.message
    assert (wt / "a.py").is_file()
    assert len(_git_list(wt)) == 3
    assert service.worktree_change("remove", name="wt2").worktree is not None  # another one still goes
    assert not (tmp_path / "wt2").exists()


async def test_git_worktree_from_a_linked_worktree_server(tmp_path: Path) -> None:
    main, wt, _ = _main_and_linked(tmp_path)
    with running_server(wt) as server:
        async with mcp_client(server) as client:
            listed = await call(client, "git_worktree", {"action": "list"})
            error = await call_error(client, "git_worktree", {"action": "remove", "name": "wt"})
            status = await call(client, "git_status", {})
            # An argument the action does not use is 1003 (QA58 F4: `name` was taken by list and prune).
            unused = [await call_error(client, "git_worktree", {"action": a, "name": "wt"}) for a in ("list", "prune")]
    assert [e["code"] for e in unused] == [1003, 1003], unused
    assert [Path(w["path"]).resolve() for w in listed["worktrees"]] == [main.resolve(), wt.resolve(),
                                                                       (tmp_path / "wt2").resolve()]
    assert error["code"] == 8005, error
    assert (wt / "a.py").is_file() and status is not None
