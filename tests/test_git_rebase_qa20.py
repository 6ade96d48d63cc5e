"""QA20 #9: a rebase keeps commits that were empty to begin with, and a squash keeps its message.

git's rebase (2.39) drops only commits that *become* empty because their changes are already upstream; a commit
made with ``--allow-empty`` is replayed. ``git rebase -i`` squash combines the messages, or takes the edited one,
even when the squashed commit changes no file. Both are checked against the git CLI on the same history."""

from __future__ import annotations

import shutil
from pathlib import Path

from codeplane.git import GitService
from codeplane.git.rebase_state import RebasePlan, RebaseStep
from tests.builders import git, make_repo, write_files


def _forked(tmp_path: Path) -> Path:
    """``up`` moves after the fork; ``e1`` has an intentionally empty commit, then ``q``, then a commit whose
    change is already on ``up`` (it becomes empty and is dropped, by git too)."""
    repo = make_repo(tmp_path / "repo", {"base.txt": "base\n"})
    git(repo, "checkout", "-q", "-b", "e1")
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty one")
    write_files(repo, {"q.txt": "q\n"})
    git(repo, "add", "q.txt")
    git(repo, "commit", "-q", "-m", "q")
    write_files(repo, {"same.txt": "same\n"})
    git(repo, "add", "same.txt")
    git(repo, "commit", "-q", "-m", "already upstream")
    git(repo, "checkout", "-q", "-b", "up", "main")
    write_files(repo, {"same.txt": "same\n", "u.txt": "u\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "up moves")
    git(repo, "checkout", "-q", "e1")
    return repo


def _subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s", "HEAD").stdout.split("\n")[:-1]


def test_a_rebase_keeps_an_intentionally_empty_commit_like_git(tmp_path: Path) -> None:
    repo = _forked(tmp_path)
    oracle = tmp_path / "oracle"
    shutil.copytree(repo, oracle)
    git(oracle, "rebase", "-q", "up")
    result = GitService(repo).rebase_start("up", confirm=True)
    assert result.state == "done"
    assert _subjects(repo) == _subjects(oracle) == ["q", "empty one", "up moves", "initial"]
    dropped = git(repo, "rev-parse", "e1@{1}").stdout.strip()  # the branch before the rebase
    assert result.skipped_empty == [dropped]


def _two_commits(tmp_path: Path) -> Path:
    """On ``t``: A adds A.txt; B is an empty commit with a message and a body."""
    repo = make_repo(tmp_path / "repo", {"base.txt": "base\n"})
    git(repo, "checkout", "-q", "-b", "t")
    write_files(repo, {"A.txt": "a\n"})
    git(repo, "add", "A.txt")
    git(repo, "commit", "-q", "-m", "A msg")
    git(repo, "commit", "-q", "--allow-empty", "-m", "B msg", "-m", "B body")
    return repo


def _squash_plan(git_: GitService, message: str | None) -> RebasePlan:
    plan = git_.rebase_plan("main")
    a, b = plan.steps
    return RebasePlan(upstream=plan.upstream, onto=plan.onto,
                      steps=[a, RebaseStep(action="squash", commit_sha=b.commit_sha, message=message)])


def test_a_squash_of_an_empty_commit_takes_the_given_message(tmp_path: Path) -> None:
    repo = _two_commits(tmp_path)
    result = GitService(repo).rebase_execute(_squash_plan(GitService(repo), "A+B combined\n"), confirm=True)
    assert result.state == "done"
    assert git(repo, "log", "--format=%B", "-1").stdout == "A+B combined\n\n"
    assert _subjects(repo) == ["A+B combined", "initial"]
    assert git(repo, "ls-tree", "--name-only", "HEAD").stdout.split() == ["A.txt", "base.txt"]


def test_a_squash_without_a_message_combines_both_like_git(tmp_path: Path) -> None:
    repo = _two_commits(tmp_path)
    oracle = tmp_path / "oracle"
    shutil.copytree(repo, oracle)
    # GIT_EDITOR=true keeps the combined message git proposes, minus its comment lines.
    git(oracle, "-c", "core.editor=true", "-c", "sequence.editor=sed -i 2s/^pick/squash/",
        "rebase", "-q", "-i", "main")
    git_ = GitService(repo)
    summary = git_.rebase_plan("main").steps[1].message  # the plan's summary handed back means "no new message"
    git_.rebase_execute(_squash_plan(git_, summary), confirm=True)
    ours = git(repo, "log", "--format=%B", "-1").stdout
    assert ours == git(oracle, "log", "--format=%B", "-1").stdout
    assert "A msg" in ours and "B msg\n\nB body" in ours
