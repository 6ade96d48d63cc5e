"""Every recovery point restores the exact prior state: files (bytes, modes, symlinks, untracked,
non-UTF-8 names), the index, HEAD and the branch; ignored files are never touched."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from tests.builders import make_repo, write_files
from tests.git_oracle import full_state, run_git


def _setup(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "r", {"a.txt": "a\n", "b.txt": "b\n", "dir/c.txt": "c\n", "gone.txt": "g\n",
                                      "run.sh": "echo\n", ".gitignore": "*.log\n"})
    run_git(root, "checkout", "-q", "-b", "other")
    write_files(root, {"a.txt": "other a\n", "o.txt": "o\n"})
    run_git(root, "add", "-A")
    run_git(root, "commit", "-qm", "other")
    run_git(root, "checkout", "-q", "main")
    write_files(root, {"b.txt": "second\n"})
    run_git(root, "commit", "-qam", "second")
    # Work in progress of every kind.
    write_files(root, {"a.txt": "staged a\n"})
    run_git(root, "add", "a.txt")
    write_files(root, {"a.txt": "unstaged over staged a\n", "dir/c.txt": "edited c\n", "new/deep.txt": "new\n",
                       "keep.log": "ignored, must survive\n", "staged-new.txt": "sn\n"})
    run_git(root, "add", "staged-new.txt")
    (root / "gone.txt").unlink()
    os.chmod(root / "run.sh", 0o755)
    os.symlink("a.txt", root / "link")
    (root / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin-1 name\n")
    return root


def _reset_hard(git: GitService, root: Path) -> str | None:
    return git.reset("HEAD~1", "hard", confirm=True).effect.recovery_point


def _checkout_force(git: GitService, root: Path) -> str | None:
    return git.checkout("other", force=True, confirm=True).effect.recovery_point


def _checkout_paths(git: GitService, root: Path) -> str | None:
    return git.checkout("other", paths=["a.txt", "dir"], confirm=True).effect.recovery_point


def _branch_delete(git: GitService, root: Path) -> str | None:
    return git.branch_delete("other", confirm=True).effect.recovery_point


def _stash_drop(git: GitService, root: Path) -> str | None:
    return git.stash_drop(0, confirm=True).effect.recovery_point


@pytest.mark.parametrize("operation", [_reset_hard, _checkout_force, _checkout_paths, _branch_delete, _stash_drop],
                         ids=["reset-hard", "checkout-force", "checkout-paths", "branch-delete", "stash-drop"])
def test_recovery_point_restores_the_exact_prior_state(tmp_path: Path,
                                                       operation: Callable[[GitService, Path], str | None]) -> None:
    root = _setup(tmp_path)
    git = GitService(root)
    if operation is _stash_drop:
        run_git(root, "stash", "push", "-q", "-m", "precious", "--", "dir/c.txt")
    before = full_state(root)
    branches = run_git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")
    stashes = run_git(root, "stash", "list", "--format=%H")
    point = operation(git, root)
    assert point and point.startswith("refs/codeplane/recovery/")
    assert (full_state(root), run_git(root, "for-each-ref", "refs/heads"), run_git(root, "stash", "list")) != \
        (before, branches, stashes)
    restored = git.restore(point, confirm=True)
    assert restored.restored and restored.restored.name == point
    assert full_state(root) == before
    assert run_git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads") == branches
    assert run_git(root, "stash", "list", "--format=%H") == stashes
    assert (root / "keep.log").read_text() == "ignored, must survive\n"


def test_rebase_recovery_point_restores_the_branch_and_untracked_files(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    run_git(root, "checkout", "-q", "-b", "topic")
    for i in range(3):
        write_files(root, {f"t{i}.txt": f"{i}\n"})
        run_git(root, "add", "-A")
        run_git(root, "commit", "-qm", f"t{i}")
    run_git(root, "checkout", "-q", "main")
    write_files(root, {"m.txt": "m\n"})
    run_git(root, "add", "-A")
    run_git(root, "commit", "-qm", "m")
    run_git(root, "checkout", "-q", "topic")
    write_files(root, {"scratch/notes.txt": "untracked\n"})
    before = full_state(root)
    git = GitService(root)
    result = git.rebase_start("main", confirm=True)
    assert result.success and full_state(root) != before
    git.restore(result.effect.recovery_point or "", confirm=True)
    assert full_state(root) == before


def test_restore_is_itself_undoable_and_listed(tmp_path: Path) -> None:
    root = _setup(tmp_path)
    git = GitService(root)
    point = _reset_hard(git, root)
    after_reset = full_state(root)
    restored = git.restore(point or "", confirm=True)
    undo = restored.effect.recovery_point
    assert undo and undo != point
    git.restore(undo, confirm=True)
    assert full_state(root) == after_reset
    listed = git.recovery_points()
    assert [p.name for p in listed[:3]] == sorted([p.name for p in listed[:3]], reverse=True)
    assert {p.op for p in listed} >= {"reset-hard", "restore"}
    with pytest.raises(CodePlaneError) as unconfirmed:
        git.restore(point or "")
    assert unconfirmed.value.code == 5009
    with pytest.raises(CodePlaneError) as missing:
        git.restore("refs/codeplane/recovery/nope", confirm=True)
    assert missing.value.code == 8002


def test_recovery_point_in_an_empty_repository(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "e")
    write_files(root, {"x.txt": "x\n", "y.txt": "y\n"})
    run_git(root, "add", "x.txt")
    before = full_state(root)
    git = GitService(root)
    from codeplane.git import recovery

    with git._s.writing(files=False, reconcile=False) as w:
        name = recovery.record(w.repo, "test")
    (root / "x.txt").unlink()
    run_git(root, "rm", "-q", "--cached", "x.txt")
    git.restore(name, confirm=True)
    assert full_state(root) == before


def test_a_point_taken_during_a_merge_brings_the_merge_back(tmp_path: Path) -> None:
    """A hard reset during a stopped merge, then restoring its point: the files came back with their conflict
    markers, but the conflicts were flattened to "ours" and MERGE_HEAD was gone (the next commit, no merge)."""
    root = make_repo(tmp_path / "r", {"a.txt": "1\n2\n3\n", "keep.txt": "k\n"})
    run_git(root, "checkout", "-q", "-b", "feat")
    write_files(root, {"a.txt": "1\n2\nfeat\n"})
    run_git(root, "commit", "-qam", "feat")
    run_git(root, "checkout", "-q", "main")
    write_files(root, {"a.txt": "1\n2\nmain\n"})
    run_git(root, "commit", "-qam", "main")
    git = GitService(root)
    assert git.merge("feat").conflicts
    before = full_state(root), run_git(root, "ls-files", "-u"), (root / ".git" / "MERGE_HEAD").read_text()
    point = git.reset(mode="hard", confirm=True).effect.recovery_point
    assert point and not (root / ".git" / "MERGE_HEAD").exists()
    git.restore(point, confirm=True)
    assert (full_state(root), run_git(root, "ls-files", "-u"), (root / ".git" / "MERGE_HEAD").read_text()) == before
    assert git.status().state == "merge" and [c.path for c in git.status().conflicts] == ["a.txt"]
