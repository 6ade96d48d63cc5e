"""QA35 F3: a sparse checkout's files outside the cone (skip-worktree) are not deleted in status nor staged by
``all``, as git treats them; writers that would fill in the tree are refused (8005 naming the git CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from tests.builders import make_repo
from tests.git_oracle import run_git


def _sparse(tmp: Path) -> Path:
    seed = make_repo(tmp / "seed", {"keep/k.txt": "k\n", "other/o.txt": "o\n", "README": "r\n"})
    (seed / "other/o.txt").write_text("o\no2\n")
    run_git(seed, "commit", "-qam", "c2")
    clone = tmp / "clone"
    run_git(tmp, "clone", "-q", str(seed), str(clone))
    run_git(clone, "sparse-checkout", "set", "keep")
    assert not (clone / "other").exists()
    (clone / "keep/k.txt").write_text("k\nk2\n")
    return clone


def test_status_and_commit_all_leave_the_files_outside_the_cone_alone(tmp_path: Path) -> None:
    root = _sparse(tmp_path)
    git = GitService(root)
    report = git.status()
    assert [(e.path, e.status) for e in report.modified] == [("keep/k.txt", "modified")]
    assert not report.staged and not report.untracked
    git.commit("edit", stage_all=True)
    assert run_git(root, "show", "--name-status", "--format=", "HEAD").decode() == "M\tkeep/k.txt\n"
    assert run_git(root, "ls-files", "-t", "other").decode() == "S other/o.txt\n"


def test_a_switch_or_hard_reset_in_a_sparse_checkout_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    root = _sparse(tmp_path)
    git = GitService(root)
    for attempt in (lambda: git.checkout("HEAD~1", force=True, confirm=True),
                    lambda: git.reset("HEAD~1", "hard", confirm=True),
                    lambda: git.checkout(paths=["."], confirm=True)):
        with pytest.raises(CodePlaneError) as refused:
            attempt()
        assert refused.value.code == 8005 and "git CLI" in refused.value.message
    assert not (root / "other").exists()
    assert run_git(root, "ls-files", "-t", "other").decode() == "S other/o.txt\n"
    assert (root / "keep/k.txt").read_text() == "k\nk2\n"


def test_the_work_tree_diff_leaves_the_files_outside_the_cone_alone(tmp_path: Path) -> None:
    root = _sparse(tmp_path)
    assert [f.path for f in GitService(root).diff().files] == ["keep/k.txt"]
