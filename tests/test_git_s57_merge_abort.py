"""``git_merge action=abort`` as git's aborts do it (QA61 defects 2 and 5).

It wrote HEAD's version over every path the operation had touched, an unstaged edit to a file the merge brought in
included (``git merge --abort`` refuses: "Entry 'd.txt' not uptodate"), and on a ``git cherry-pick A B`` stopped
on B it reset B's paths only, kept A on the branch and deleted ``.git/sequencer`` (``git cherry-pick --abort``
returns the branch to where it was before A). Each case is checked against the git CLI on a copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from tests.builders import GIT_ENV, make_repo, write_files
from tests.git_oracle import commit_all, picks_stopped_on_b, run_git


def _twin(root: Path) -> Path:
    twin = root.parent / f"{root.name}-git"
    shutil.copytree(root, twin, symlinks=True)
    run_git(twin, "update-index", "-q", "--refresh", check=False)  # a copy's stat data differs: git's check needs it
    return twin


def _head(root: Path) -> str:
    return run_git(root, "rev-parse", "HEAD").decode().strip()


def _short_status(root: Path) -> str:
    return run_git(root, "status", "--porcelain=v1", "--untracked-files=all").decode()


def _points(root: Path) -> list[str]:
    return run_git(root, "for-each-ref", "--format=%(refname)", "refs/codeplane/recovery/").decode().split()


@pytest.fixture
def merging(tmp_path: Path) -> Path:
    """A merge stopped on a conflict in ``a.py`` that also brought in ``d.txt`` (``AM d.txt`` once edited)."""
    root = make_repo(tmp_path / "r", {"a.py": "def a():\n    return 1\n"})
    run_git(root, "checkout", "-q", "-b", "feat")
    commit_all(root, "feat", {"a.py": "def a():\n    return 2\n", "d.txt": "new\n"})
    run_git(root, "checkout", "-q", "main")
    commit_all(root, "main", {"a.py": "def a():\n    return 3\n"})
    run_git(root, "merge", "feat", check=False)
    assert (root / ".git" / "MERGE_HEAD").exists()
    return root


def test_an_unstaged_edit_to_a_file_the_merge_brought_blocks_the_abort_as_in_git(merging: Path) -> None:
    write_files(merging, {"d.txt": "new\nmy local work\n"})
    twin = _twin(merging)
    assert b"not uptodate" in _refused(twin, "merge", "--abort")
    before = _short_status(merging)
    with pytest.raises(CodePlaneError) as refused:
        GitService(merging).merge_abort()
    assert refused.value.code == 8004 and refused.value.details["paths"] == ["d.txt"], refused.value
    assert "d.txt" in refused.value.message and "git_checkout" in refused.value.message
    assert (merging / "d.txt").read_text() == "new\nmy local work\n" and _short_status(merging) == before
    assert (merging / ".git" / "MERGE_HEAD").exists() and _points(merging) == []  # refused before any point
    # Staged, the edit is the merge's result to git too: the abort goes ahead, as git's does.
    run_git(merging, "add", "d.txt")
    run_git(twin, "add", "d.txt")
    run_git(twin, "merge", "--abort")
    GitService(merging).merge_abort()
    assert _short_status(merging) == _short_status(twin) == "" and not (merging / "d.txt").exists()


def _refused(root: Path, *args: str) -> bytes:
    """git's message when it refuses ``git <args>``."""
    proc = subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, capture_output=True, check=False)
    assert proc.returncode != 0, proc
    return proc.stderr


def _picks(tmp_path: Path, *picks: str) -> Path:
    """main with ``M``; ``src`` with A (adds a.txt), B (conflicts with M on f.txt) and C; ``git cherry-pick`` of
    ``picks`` stopped on B."""
    root = picks_stopped_on_b(tmp_path / "r", *picks)
    assert (root / ".git" / "CHERRY_PICK_HEAD").exists()
    return root


def test_aborting_a_cli_pick_sequence_returns_to_before_it_as_git_does(tmp_path: Path) -> None:
    root = _picks(tmp_path, "src~2", "src~1")
    before = run_git(root, "rev-parse", "main@{1}").decode().strip()  # M, where the branch was before the picks
    twin = _twin(root)
    run_git(twin, "cherry-pick", "--abort")
    result = GitService(root).merge_abort()
    assert result.aborted and result.commit == before == _head(twin)
    assert run_git(root, "rev-parse", "refs/heads/main").decode().strip() == before
    assert _short_status(root) == _short_status(twin) == "" and not (root / "a.txt").exists()
    assert not (root / ".git" / "sequencer").exists() and not (root / ".git" / "CHERRY_PICK_HEAD").exists()
    assert result.effect.recovery_point is not None


def test_a_sequence_whose_head_moved_is_forgotten_not_rewound_as_git_does(tmp_path: Path) -> None:
    root = _picks(tmp_path, "src~2", "src~1", "src")
    write_files(root, {"f.txt": "l1\nboth\n"})
    run_git(root, "add", "f.txt")
    run_git(root, "commit", "-q", "--no-edit")  # B concluded by hand: HEAD moved past abort-safety
    twin = _twin(root)
    run_git(twin, "cherry-pick", "--abort")
    result = GitService(root).merge_abort()
    assert _head(root) == _head(twin) and not (root / ".git" / "sequencer").exists()
    assert any("not rewound" in w for w in result.warnings), result.warnings


def test_a_sequence_left_between_picks_by_a_reset_is_rewound_as_git_does(tmp_path: Path) -> None:
    root = _picks(tmp_path, "src~2", "src~1", "src")
    git = GitService(root)
    git.reset("HEAD", "hard", confirm=True)  # keeps the sequence, as git's reset does
    twin = _twin(root)
    run_git(twin, "cherry-pick", "--abort")
    git.merge_abort()
    assert _head(root) == _head(twin) and _short_status(root) == _short_status(twin) == ""
    assert not (root / ".git" / "sequencer").exists()


def test_a_staged_change_between_picks_blocks_the_rewind(tmp_path: Path) -> None:
    """No pick is in progress to have staged it: it is the user's, and the rewind would drop it."""
    root = _picks(tmp_path, "src~2", "src~1", "src")
    git = GitService(root)
    git.reset("HEAD", "hard", confirm=True)
    write_files(root, {"a.txt": "mine\n"})
    run_git(root, "add", "a.txt")
    with pytest.raises(CodePlaneError) as refused:
        git.merge_abort()
    assert refused.value.code == 8004 and refused.value.details["paths"] == ["a.txt"]
    assert (root / "a.txt").read_text() == "mine\n" and (root / ".git" / "sequencer").exists()


def test_a_step_of_a_cli_sequence_names_git_cherry_pick_continue(tmp_path: Path) -> None:
    """git_commit would conclude B alone and leave C to a ``--continue`` nothing said was needed."""
    root = _picks(tmp_path, "src~2", "src~1", "src")
    with pytest.raises(CodePlaneError) as refused:
        GitService(root).checkout("src")
    assert refused.value.code == 8005 and "`git cherry-pick --continue`" in refused.value.message, refused.value
    assert "git_merge action=abort" in refused.value.message
