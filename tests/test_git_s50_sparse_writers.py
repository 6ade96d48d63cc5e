"""S50: in a sparse checkout, stash, merge, cherry-pick, revert, rebase, pull and recovery-point restores keep the
cone as git does — files outside it are neither written to the work tree nor recorded as deleted, a clean change
outside it reaches only the index, a conflict outside it is written with its markers — or refuse up front (8005,
nothing written) where git would leave a file CodePlane would overwrite. Each is compared with the git CLI doing
the same on a twin clone."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from tests.builders import git as git_cli
from tests.builders import make_repo
from tests.git_oracle import run_git


def _seed(tmp: Path) -> Path:
    """``main`` plus ``feat`` (a change in the cone), ``out`` (a clean change outside it: ``other/o.txt`` edited,
    ``other/new.txt`` added), ``clash`` (a change outside it conflicting with ``out``) and ``readme`` (a change in
    the cone conflicting with the clone's own commit, and one outside it)."""
    seed = make_repo(tmp / "seed", {"keep/k.txt": "k\n", "other/o.txt": "o1\no2\no3\n", "README": "r\n"})
    for branch, files in (("feat", {"keep/f.txt": "f\n"}),
                          ("out", {"other/o.txt": "o1\no2\no3\nout\n", "other/new.txt": "n\n"}),
                          ("clash", {"other/o.txt": "o1\no2\no3\nclash\n"}),
                          ("readme", {"README": "r\ntheirs\n", "other/o.txt": "o1\no2\no3\nreadme\n"})):
        run_git(seed, "checkout", "-q", "-b", branch, "main")
        for rel, text in files.items():
            (seed / rel).write_text(text)
        run_git(seed, "add", "-A")
        run_git(seed, "commit", "-qm", branch)
    run_git(seed, "checkout", "-q", "main")
    return seed


def _sparse_clone(seed: Path, where: Path) -> Path:
    """A sparse clone (cone ``keep``) whose ``main`` has a commit of its own, at ``where``."""
    run_git(seed.parent, "clone", "-q", str(seed), str(where))
    for branch in ("feat", "out", "clash", "readme"):
        run_git(where, "branch", branch, f"origin/{branch}")
    run_git(where, "sparse-checkout", "set", "keep")
    (where / "README").write_text("r\nmine\n")
    run_git(where, "commit", "-qam", "mine")
    run_git(where, "update-ref", "refs/remotes/origin/main", "HEAD")  # the twins start identical
    return where


@pytest.fixture
def twins(tmp_path: Path) -> tuple[Path, Path]:
    """Two identical sparse clones: one for CodePlane, one for the git CLI."""
    seed = _seed(tmp_path)
    ours = _sparse_clone(seed, tmp_path / "ours")
    theirs = tmp_path / "theirs"
    shutil.copytree(ours, theirs, symlinks=True)
    return ours, theirs


def _tree_state(root: Path) -> tuple[str, str, list[str], str]:
    """What git says of the work tree: ``ls-files -t`` (S = outside the cone), the index, the files on disk and
    the status."""
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    return (run_git(root, "ls-files", "-t").decode(), run_git(root, "ls-files", "-s").decode(), files,
            run_git(root, "status", "--porcelain").decode())


def _same_as_git(ours: Path, theirs: Path) -> None:
    assert _tree_state(ours) == _tree_state(theirs)
    assert run_git(ours, "rev-parse", "HEAD^{tree}") == run_git(theirs, "rev-parse", "HEAD^{tree}")


@pytest.mark.parametrize(("ref", "git_args"), [("feat", ("merge", "-q", "--no-edit", "feat")),
                                               ("out", ("merge", "-q", "--no-edit", "out"))])
def test_a_merge_commit_keeps_the_cone_as_git_does(twins: tuple[Path, Path], ref: str,
                                                    git_args: tuple[str, ...]) -> None:
    ours, theirs = twins
    result = GitService(ours).merge(ref)
    run_git(theirs, *git_args)
    assert result.success and result.commit
    _same_as_git(ours, theirs)
    assert not (ours / "other").exists()
    assert "S other/o.txt" in run_git(ours, "ls-files", "-t").decode()


def test_a_fast_forward_outside_the_cone_changes_only_the_index(twins: tuple[Path, Path]) -> None:
    ours, theirs = twins
    for root in (ours, theirs):
        run_git(root, "reset", "-q", "--hard", "HEAD~1")  # ``out`` is now a fast-forward of ``main``
    result = GitService(ours).merge("out")
    run_git(theirs, "merge", "-q", "out")
    assert result.success and result.fastforward
    _same_as_git(ours, theirs)
    assert not (ours / "other").exists()


@pytest.mark.parametrize("operation", ["cherry_pick", "revert"])
def test_a_pick_or_revert_outside_the_cone_keeps_it(twins: tuple[Path, Path], operation: str) -> None:
    ours, theirs = twins
    git = GitService(ours)
    if operation == "cherry_pick":
        result = git.cherry_pick("out")
        run_git(theirs, "cherry-pick", "out")
    else:
        for root in (ours, theirs):
            run_git(root, "merge", "-q", "--no-edit", "out")
        result = GitService(ours).revert("HEAD^2")
        run_git(theirs, "revert", "--no-edit", "HEAD^2")
    assert result.success
    _same_as_git(ours, theirs)
    assert not (ours / "other").exists()


def test_a_conflict_outside_the_cone_is_written_with_its_markers_as_git_writes_it(
        twins: tuple[Path, Path]) -> None:
    ours, theirs = twins
    for root in (ours, theirs):  # ours changes other/o.txt too (outside the cone, committed from the index)
        run_git(root, "merge", "-q", "--no-edit", "out")
    result = GitService(ours).merge("clash")
    run_git(theirs, "merge", "clash", check=False)
    assert not result.success and [c.path for c in result.conflicts] == ["other/o.txt"]
    assert (ours / "other/o.txt").read_text() == (theirs / "other/o.txt").read_text()
    assert run_git(ours, "ls-files", "-s", "other/o.txt") == run_git(theirs, "ls-files", "-s", "other/o.txt")
    assert not (ours / "other/new.txt").exists()


def test_stash_push_and_pop_keep_the_cone(twins: tuple[Path, Path]) -> None:
    ours, theirs = twins
    git = GitService(ours)
    for root in (ours, theirs):
        (root / "keep/k.txt").write_text("k\nedited\n")
    git.stash_push()
    run_git(theirs, "stash", "-q")
    # git stashes no deletion of the files outside the cone, and does not write them back.
    assert run_git(ours, "show", "--name-status", "--format=", "stash@{0}") == \
        run_git(theirs, "show", "--name-status", "--format=", "stash@{0}")
    assert run_git(ours, "rev-parse", "stash@{0}^{tree}") == run_git(theirs, "rev-parse", "stash@{0}^{tree}")
    _same_as_git(ours, theirs)
    popped = git.stash_apply(pop=True)
    run_git(theirs, "stash", "pop", "-q")
    assert popped.dropped and not popped.conflicts
    _same_as_git(ours, theirs)
    assert not (ours / "other").exists()


def test_a_rebase_over_changes_outside_the_cone_keeps_it(twins: tuple[Path, Path]) -> None:
    ours, theirs = twins
    result = GitService(ours).rebase_start("out", confirm=True)
    run_git(theirs, "rebase", "-q", "out")
    assert result.success
    _same_as_git(ours, theirs)
    assert not (ours / "other").exists()


def test_a_merge_abort_keeps_the_cone_as_git_merge_abort_does(twins: tuple[Path, Path]) -> None:
    ours, theirs = twins
    git = GitService(ours)
    merged = git.merge("readme")  # README conflicts, other/o.txt merges cleanly outside the cone
    git_cli(theirs, "merge", "readme", check=False)
    assert [c.path for c in merged.conflicts] == ["README"]
    _same_as_git(ours, theirs)
    assert not (ours / "other").exists()
    git.merge_abort()
    run_git(theirs, "merge", "--abort")
    _same_as_git(ours, theirs)
    assert not (ours / "other").exists()


@pytest.mark.parametrize("how", ["abort", "skip"])
def test_a_rebase_paused_on_a_conflict_then_aborted_or_skipped_keeps_the_cone(twins: tuple[Path, Path],
                                                                               how: str) -> None:
    ours, theirs = twins
    git = GitService(ours)
    paused = git.rebase_start("readme", confirm=True)
    git_cli(theirs, "rebase", "readme", check=False)
    assert paused.state == "conflict" and [c.path for c in paused.conflicts] == ["README"]
    assert (ours / "README").read_text() == (theirs / "README").read_text()
    assert not (ours / "other").exists()
    done = git.rebase_abort(confirm=True) if how == "abort" else git.rebase_skip(confirm=True)
    run_git(theirs, "rebase", f"--{how}")
    assert done.success
    _same_as_git(ours, theirs)
    assert not (ours / "other").exists()


@pytest.mark.parametrize("rebase", [False, True])
def test_a_pull_of_changes_outside_the_cone_keeps_it(tmp_path: Path, rebase: bool) -> None:
    seed = _seed(tmp_path)
    bare = tmp_path / "remote.git"
    run_git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    clones = []
    for name in ("ours", "theirs"):
        clone = tmp_path / name
        run_git(tmp_path, "clone", "-q", str(bare), str(clone))
        run_git(clone, "sparse-checkout", "set", "keep")
        (clone / "README").write_text("r\nmine\n")
        run_git(clone, "commit", "-qam", "mine")
        clones.append(clone)
    ours, theirs = clones
    run_git(seed, "push", "-q", str(bare), "out:main", "--force")
    result = GitService(ours).pull(rebase=rebase)
    run_git(theirs, "pull", "-q", "--rebase" if rebase else "--no-rebase", "--no-edit")
    assert result.success
    assert _tree_state(ours) == _tree_state(theirs)
    assert run_git(ours, "rev-parse", "HEAD^{tree}") == run_git(theirs, "rev-parse", "HEAD^{tree}")
    assert not (ours / "other").exists()


def test_a_recovery_point_neither_records_nor_restores_the_outside_as_deleted(twins: tuple[Path, Path]) -> None:
    ours, _ = twins
    git = GitService(ours)
    (ours / "keep/k.txt").write_text("k\nbefore\n")
    saved = git.stash_push()
    dropped = git.stash_drop(confirm=True)
    assert saved.stash and dropped.effect.recovery_point
    name = dropped.effect.recovery_point
    assert "other/o.txt" in run_git(ours, "ls-tree", "-r", "--name-only", name).decode()
    (ours / "keep/k.txt").write_text("k\nafter\n")
    git.restore(name, confirm=True)
    assert (ours / "keep/k.txt").read_text() == "k\n"
    assert not (ours / "other").exists()
    assert run_git(ours, "ls-files", "-t", "other").decode() == "S other/o.txt\n"
    assert run_git(ours, "status", "--porcelain").decode() == ""


def _untouched(root: Path) -> Callable[[], None]:
    """A check that the index (its bytes: no git command runs, as git clears the skip-worktree bit of a file it
    finds present), HEAD and every ref are as they are now."""
    index = (root / ".git/index").read_bytes()
    refs = sorted(run_git(root, "for-each-ref").split())
    head = run_git(root, "rev-parse", "HEAD")

    def check() -> None:
        assert (root / ".git/index").read_bytes() == index
        assert (sorted(run_git(root, "for-each-ref").split()), run_git(root, "rev-parse", "HEAD")) == (refs, head)
    return check


def _present_outside(root: Path) -> None:
    (root / "other").mkdir()
    (root / "other/o.txt").write_text("mine, git ignores it\n")


@pytest.mark.parametrize("operation", ["merge", "cherry_pick", "rebase"])
def test_a_file_present_outside_the_cone_where_a_writer_writes_refuses_it_with_nothing_written(
        twins: tuple[Path, Path], operation: str) -> None:
    ours, _ = twins
    git = GitService(ours)
    attempts: dict[str, Callable[[], object]] = {
        "merge": lambda: git.merge("out"), "cherry_pick": lambda: git.cherry_pick("out"),
        "rebase": lambda: git.rebase_start("out", confirm=True)}
    attempt = attempts[operation]
    check = _untouched(ours)
    _present_outside(ours)
    with pytest.raises(CodePlaneError) as refused:
        attempt()
    assert refused.value.code == 8005 and "git CLI" in refused.value.message
    assert refused.value.details["paths"] == ["other/o.txt"]
    check()
    assert (ours / "other/o.txt").read_text() == "mine, git ignores it\n"


def test_once_git_has_seen_a_file_outside_the_cone_a_merge_over_it_is_refused_as_git_refuses(
        twins: tuple[Path, Path]) -> None:
    ours, theirs = twins
    for root in (ours, theirs):
        _present_outside(root)
        run_git(root, "status")  # git clears the bit of a file present outside the cone: a local change now
    with pytest.raises(CodePlaneError) as refused:
        GitService(ours).merge("out")
    assert refused.value.code == 8004 and refused.value.details["paths"] == ["other/o.txt"]
    by_git = git_cli(theirs, "merge", "out", check=False)
    assert by_git.returncode != 0 and "would be overwritten by merge" in by_git.stderr  # git refuses the same
    assert (ours / "other/o.txt").read_text() == "mine, git ignores it\n"


def test_a_restore_with_a_file_present_outside_the_cone_is_refused_before_any_point(
        twins: tuple[Path, Path]) -> None:
    ours, _ = twins
    git = GitService(ours)
    (ours / "keep/k.txt").write_text("k\nx\n")
    git.stash_push()
    point = git.stash_drop(confirm=True).effect.recovery_point
    assert point
    check = _untouched(ours)
    _present_outside(ours)
    with pytest.raises(CodePlaneError) as refused:
        git.restore(point, confirm=True)
    assert refused.value.code == 8005 and refused.value.details["paths"] == ["other/o.txt"]
    check()
    assert (ours / "other/o.txt").read_text() == "mine, git ignores it\n"
