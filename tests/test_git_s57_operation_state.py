"""A reset, a commit or a restore ends only what git's own reset or commit ends (QA61 defect 1).

libgit2's ``state_cleanup`` (run by its reset too) removed ``rebase-merge/``, ``rebase-apply/``, ``sequencer/`` and
``BISECT_LOG``: ``git_reset`` in the middle of a rebase the git CLI started left HEAD detached with no rebase to
abort, a bisect half-gone (``git bisect log``: "We are not bisecting"), and a ``git cherry-pick A B C`` sequence
forgotten. Each case is checked against the git CLI run on a copy of the same repository.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codeplane.git import GitService
from tests.builders import make_repo, write_files
from tests.git_oracle import commit_all, picks_stopped_on_b, run_git

#: The files and directories that say an operation is in progress (``.git/<name>``).
_MARKERS = ("MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
            "BISECT_LOG", "BISECT_START", "rebase-merge", "rebase-apply", "sequencer")


def _markers(root: Path) -> list[str]:
    return [name for name in _MARKERS if (root / ".git" / name).exists()]


def _twin(root: Path) -> Path:
    """The same repository, state files and all, for the git CLI to act on."""
    twin = root.parent / f"{root.name}-git"
    shutil.copytree(root, twin, symlinks=True)
    return twin


def _head(root: Path) -> str:
    return run_git(root, "rev-parse", "HEAD").decode().strip()


def _status_line(root: Path) -> str:
    """What ``git status`` says is in progress (its second paragraph's first line)."""
    lines = run_git(root, "status").decode().splitlines()
    return next((ln for ln in lines if "progress" in ln or "bisecting" in ln), "")


@pytest.fixture
def rebasing(tmp_path: Path) -> Path:
    """``git rebase main`` stopped on a conflict (``.git/rebase-merge``), topic's second commit still to do."""
    root = make_repo(tmp_path / "r", {"f.txt": "l1\nl2\nl3\n"})
    run_git(root, "checkout", "-q", "-b", "topic")
    commit_all(root, "t1", {"f.txt": "l1\ntopic\nl3\n"})
    commit_all(root, "t2", {"x.txt": "x\n"})
    run_git(root, "checkout", "-q", "main")
    commit_all(root, "m1", {"f.txt": "l1\nmain\nl3\n"})
    run_git(root, "checkout", "-q", "topic")
    run_git(root, "rebase", "main", check=False)
    assert (root / ".git" / "rebase-merge").is_dir()
    return root


@pytest.mark.parametrize("mode", ["mixed", "hard"])
def test_a_reset_keeps_the_git_clis_rebase_as_git_reset_does(rebasing: Path, mode: str) -> None:
    twin = _twin(rebasing)
    run_git(twin, "reset", "-q", f"--{mode}", "HEAD")
    result = GitService(rebasing).reset("HEAD", mode, confirm=True)  # type: ignore[arg-type]
    assert _markers(rebasing) == _markers(twin) and "rebase-merge" in _markers(rebasing)
    assert result.effect.recovery_point or mode == "mixed"
    assert GitService(rebasing).status().state == "rebase"
    # The way back the user had before the reset is still there: git's abort returns to the branch.
    run_git(rebasing, "rebase", "--abort")
    assert run_git(rebasing, "symbolic-ref", "HEAD").decode().strip() == "refs/heads/topic"


def test_a_hard_reset_and_a_restore_keep_a_bisect(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"f.txt": "1\n"})
    for i in (2, 3):
        commit_all(root, f"c{i}", {"f.txt": f"{i}\n"})
    run_git(root, "bisect", "start")
    run_git(root, "bisect", "bad", "HEAD")
    run_git(root, "bisect", "good", "HEAD~2")
    log = run_git(root, "bisect", "log")
    (root / "f.txt").write_text("edited\n")
    git = GitService(root)
    reset = git.reset("HEAD", "hard", confirm=True)
    assert git.status().state == "bisect" and run_git(root, "bisect", "log") == log
    assert reset.effect.recovery_point is not None
    git.restore(reset.effect.recovery_point, confirm=True)
    assert (root / "f.txt").read_text() == "edited\n"
    assert git.status().state == "bisect" and run_git(root, "bisect", "log") == log


@pytest.fixture
def picking(tmp_path: Path) -> Path:
    """``git cherry-pick A B C`` stopped on B's conflict: A is committed, B and C in ``sequencer/todo``."""
    root = picks_stopped_on_b(tmp_path / "r", "src~2", "src~1", "src")
    assert _markers(root) == ["MERGE_MSG", "AUTO_MERGE", "CHERRY_PICK_HEAD", "sequencer"]
    return root


def test_a_reset_between_picks_keeps_the_rest_of_the_sequence(picking: Path) -> None:
    twin = _twin(picking)
    run_git(twin, "reset", "-q", "--hard", "HEAD")
    result = GitService(picking).reset("HEAD", "hard", confirm=True)
    assert _markers(picking) == _markers(twin) == ["sequencer"]
    assert _status_line(picking) == _status_line(twin) == "Cherry-pick currently in progress."
    assert any("git cherry-pick --continue" in w for w in result.warnings), result.warnings
    # git goes on from there: B, whose changes the reset dropped, counts as done, and C is picked.
    run_git(picking, "cherry-pick", "--continue")
    assert (picking / "c.txt").read_text() == "c\n" and not (picking / ".git" / "sequencer").exists()


def test_a_reset_on_the_last_pick_ends_the_sequence_as_git_does(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"f.txt": "l1\nl2\n"})
    run_git(root, "checkout", "-q", "-b", "src")
    commit_all(root, "A", {"a.txt": "a\n"})
    commit_all(root, "B", {"f.txt": "l1\nsrc\n"})
    run_git(root, "checkout", "-q", "main")
    commit_all(root, "M", {"f.txt": "l1\nmain\n"})
    run_git(root, "cherry-pick", "src~1", "src", check=False)
    twin = _twin(root)
    run_git(twin, "reset", "-q", "--mixed", "HEAD")
    result = GitService(root).reset("HEAD", "mixed")
    assert _markers(root) == _markers(twin) == [] and not result.warnings


def test_committing_one_pick_leaves_the_rest_to_git_cherry_pick_continue(picking: Path) -> None:
    write_files(picking, {"f.txt": "l1\nboth\n"})
    twin = _twin(picking)
    run_git(twin, "add", "f.txt")
    run_git(twin, "commit", "-q", "--no-edit")
    GitService(picking).commit("", stage=("f.txt",))
    assert _markers(picking) == _markers(twin) == ["sequencer"]
    run_git(picking, "cherry-pick", "--continue")
    subjects = run_git(picking, "log", "--format=%s", "-4").decode().split("\n")[:-1]
    assert subjects == ["C", "B", "A", "M"] and not (picking / ".git" / "sequencer").exists()


def test_a_restore_puts_back_the_sequence_it_recorded(picking: Path) -> None:
    git = GitService(picking)
    before = _head(picking)
    reset = git.reset("main~1", "hard", confirm=True)
    assert reset.effect.recovery_point is not None
    run_git(picking, "cherry-pick", "--quit")  # the sequence forgotten since, by the git CLI
    assert not (picking / ".git" / "sequencer").exists()
    git.restore(reset.effect.recovery_point, confirm=True)
    assert _head(picking) == before and _markers(picking) == ["MERGE_MSG", "AUTO_MERGE", "CHERRY_PICK_HEAD",
                                                              "sequencer"]
    # The whole sequence is git's again: its abort returns to before A. (The index the point kept has the stat data
    # of files the restore rewrote since: refreshed first, as `git status` would, or git's check calls them changed.)
    run_git(picking, "update-index", "-q", "--refresh", check=False)
    run_git(picking, "cherry-pick", "--abort")
    assert run_git(picking, "log", "--format=%s", "-1").decode().strip() == "M"
