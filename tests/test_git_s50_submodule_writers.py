"""S50: merges, cherry-picks, reverts, rebases (their steps and abort), hard resets and recovery-point restores never
delete a submodule's directory (its own ``.git`` with unpushed commits, its edits and untracked files), and the
commit they make drops the gitlink when the result drops it — as the git CLI does on a twin ("unable to rmdir").
libgit2 kept the gitlink in the index (so the merge commit still had the submodule), or deleted the directory
where a forced write brought the gitlink back over it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codeplane.git import GitService
from codeplane.git.rebase_state import RebasePlan, RebaseStep
from tests.builders import answer_text, mcp_client, running_server
from tests.builders import git as git_cli
from tests.git_oracle import run_git
from tests.test_git_s49_submodule_kept import _super_with_own_gitdir

pytestmark = pytest.mark.anyio



def _superproject(tmp: Path) -> Path:
    """``main``: ``top.txt``, then ``add sub`` (submodule ``libs/sub`` cloned with its own ``.git``, holding a commit
    its origin never got, then edited and given an untracked file); branch ``drop`` removes the submodule."""
    top = _super_with_own_gitdir(tmp)
    sub = top / "libs/sub"
    run_git(top, "checkout", "-q", "-b", "drop")
    run_git(top, "rm", "-q", "--cached", "libs/sub")
    run_git(top, "rm", "-q", ".gitmodules")
    run_git(top, "commit", "-qm", "drop sub")
    run_git(top, "checkout", "-q", "main")
    with open(sub / "s.txt", "a") as f:
        f.write("edited\n")
    (sub / "notes.txt").write_text("mine\n")
    return top


@pytest.fixture
def twins(tmp_path: Path) -> tuple[Path, Path]:
    ours = _superproject(tmp_path)
    theirs = tmp_path / "twin"
    shutil.copytree(ours, theirs, symlinks=True)
    return ours, theirs


def _still_there(top: Path) -> None:
    sub = top / "libs/sub"
    assert (sub / ".git").is_dir()
    assert run_git(sub, "log", "-1", "--format=%s").decode() == "unpushed s2\n"
    assert (sub / "s.txt").read_text() == "s1\ns2\nedited\n"
    assert (sub / "notes.txt").read_text() == "mine\n"


def _same_as_git(ours: Path, theirs: Path) -> None:
    for args in (("ls-files", "-s"), ("status", "--porcelain"), ("rev-parse", "HEAD^{tree}")):
        assert run_git(ours, *args) == run_git(theirs, *args), args


def _warned(warnings: list[str]) -> None:
    assert [w.split(":", 1)[0] for w in warnings] == ["unable to rmdir 'libs/sub'"], warnings


def _diverge(*roots: Path) -> None:
    for root in roots:
        (root / "top.txt").write_text("top\nmain 2\n")
        run_git(root, "commit", "-qam", "main 2")


def test_a_merge_commit_that_drops_the_submodule_drops_its_gitlink_and_keeps_its_directory(
        twins: tuple[Path, Path]) -> None:
    ours, theirs = twins
    _diverge(ours, theirs)
    result = GitService(ours).merge("drop")
    run_git(theirs, "merge", "-q", "--no-edit", "drop")
    assert result.success
    _warned(result.warnings)
    _same_as_git(ours, theirs)
    assert b"libs/sub" not in run_git(ours, "ls-tree", "-r", "--name-only", "HEAD")
    _still_there(ours)


@pytest.mark.parametrize("operation", ["cherry_pick", "revert"])
def test_a_pick_or_revert_that_drops_the_submodule_keeps_its_directory(twins: tuple[Path, Path],
                                                                        operation: str) -> None:
    ours, theirs = twins
    git = GitService(ours)
    if operation == "cherry_pick":
        result = git.cherry_pick("drop")
        run_git(theirs, "cherry-pick", "drop")
    else:
        result = git.revert("HEAD")  # reverts "add sub"
        run_git(theirs, "revert", "--no-edit", "HEAD")
    assert result.success
    _warned(result.warnings)
    _same_as_git(ours, theirs)
    _still_there(ours)


@pytest.mark.parametrize("diverged", [False, True])
def test_a_rebase_step_that_drops_the_submodule_keeps_its_directory(twins: tuple[Path, Path],
                                                                     diverged: bool) -> None:
    """``drop sub`` replayed onto ``main``: fast-forwarded (its parent is ``main``) or, ``diverged``, picked; git's
    CLI picks it on the twin."""
    ours, theirs = twins
    if diverged:
        _diverge(ours, theirs)
    main = run_git(ours, "rev-parse", "main").decode().strip()
    step = RebaseStep(action="pick", commit_sha=run_git(ours, "rev-parse", "drop").decode().strip(),
                      message="drop sub")
    result = GitService(ours).rebase_execute(RebasePlan(upstream=main, onto=main, steps=[step]), confirm=True)
    run_git(theirs, "cherry-pick", "drop")
    assert result.success
    _warned(result.warnings)
    _same_as_git(ours, theirs)
    _still_there(ours)


def test_a_rebase_abort_brings_the_submodule_back_without_deleting_its_directory(
        twins: tuple[Path, Path]) -> None:
    """The rebase goes onto ``drop`` (the submodule is left untracked), pauses on a conflict, and is aborted: HEAD
    has the gitlink again; libgit2's forced reset replaced the directory by an empty one."""
    ours, theirs = twins
    for root in (ours, theirs):
        (root / "top.txt").write_text("top\nmine\n")
        run_git(root, "commit", "-qam", "mine")
        run_git(root, "checkout", "-q", "drop")
        (root / "top.txt").write_text("top\ntheirs\n")
        run_git(root, "commit", "-qam", "theirs")
        run_git(root, "checkout", "-q", "main")
    git = GitService(ours)
    paused = git.rebase_start("drop", confirm=True)
    git_cli(theirs, "rebase", "drop", check=False)
    assert paused.state == "conflict"
    _warned(paused.warnings)
    _still_there(ours)
    aborted = git.rebase_abort(confirm=True)
    run_git(theirs, "rebase", "--abort")
    assert aborted.state == "aborted"
    _same_as_git(ours, theirs)
    _still_there(ours)


def test_a_hard_reset_back_to_the_submodule_keeps_the_directory_git_left(twins: tuple[Path, Path]) -> None:
    ours, theirs = twins
    git = GitService(ours)
    git.checkout("drop")
    run_git(theirs, "checkout", "-q", "drop")
    _still_there(ours)
    git.reset("main", "hard", confirm=True)
    run_git(theirs, "reset", "-q", "--hard", "main")
    _same_as_git(ours, theirs)
    _still_there(ours)


def test_restoring_a_point_without_the_submodule_keeps_its_directory(twins: tuple[Path, Path]) -> None:
    ours, _ = twins
    git = GitService(ours)
    git.checkout("drop")
    point = git.reset("drop", "hard", confirm=True).effect.recovery_point  # recorded without the submodule
    assert point
    git.checkout("main")
    _still_there(ours)
    restored = git.restore(point, confirm=True)
    _warned(restored.warnings)
    _still_there(ours)
    assert run_git(ours, "ls-files", "-s", "libs").decode() == ""
    assert run_git(ours, "status", "--porcelain").decode() == "?? libs/\n"


async def test_the_merge_answer_warns_that_the_submodule_directory_stays(twins: tuple[Path, Path]) -> None:
    ours, _ = twins
    _diverge(ours)
    with running_server(ours) as server:
        async with mcp_client(server) as client:
            text = answer_text(await client.call_tool("git_merge", {"ref": "drop"}))
    assert "warning: unable to rmdir 'libs/sub'" in text, text
    _still_there(ours)
    assert b"libs/sub" not in run_git(ours, "ls-tree", "-r", "--name-only", "HEAD")


@pytest.mark.parametrize("staged", ["added", "removed"])
def test_a_stash_of_a_staged_submodule_keeps_its_directory_and_pops_back_as_git_does(
        twins: tuple[Path, Path], staged: str) -> None:
    """libgit2 could not stash a staged submodule: an added one failed ("cannot create blob ... it is a directory",
    8001), a removed one was "no local changes" (8008); its apply refused the gitlink coming back over the
    directory the push left, and a dirty submodule blocked the apply as a local change."""
    ours, theirs = twins
    for root in (ours, theirs):
        if staged == "added":
            run_git(root, "reset", "-q", "--soft", "HEAD~1")  # the submodule is staged, not committed
        else:
            run_git(root, "rm", "-q", "--cached", "libs/sub")
        (root / "top.txt").write_text("top\nedited\n")
    git = GitService(ours)
    pushed = git.stash_push()
    run_git(theirs, "stash", "-q")
    if staged == "added":
        _warned(pushed.warnings)
    _same_as_git(ours, theirs)
    assert run_git(ours, "rev-parse", "stash@{0}^{tree}", "stash@{0}^2^{tree}") == \
        run_git(theirs, "rev-parse", "stash@{0}^{tree}", "stash@{0}^2^{tree}")
    _still_there(ours)
    popped = git.stash_apply(pop=True)
    run_git(theirs, "stash", "pop", "-q")
    assert popped.dropped and not popped.conflicts
    _same_as_git(ours, theirs)
    _still_there(ours)
