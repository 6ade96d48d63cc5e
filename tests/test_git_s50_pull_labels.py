"""S50: a pull that conflicts writes what ``git pull`` writes — markers naming the fetched commit by its full id
(``>>>>>>> <40 hex>``, where CodePlane wrote the branch name), ``MERGE_MSG`` with the remote's URL as git names it
(no final ``.git``) and a blank line before the conflicts comment — and a clean pull's merge commit has git's
message. Each compared with the git CLI on a twin clone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codeplane.git import GitService
from tests.builders import git as git_cli
from tests.git_oracle import run_git


@pytest.fixture
def twins(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare remote ``remote.git``, a pusher, and two identical clones with a commit of their own."""
    bare = tmp_path / "remote.git"
    run_git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    pusher = tmp_path / "pusher"
    run_git(tmp_path, "clone", "-q", str(bare), str(pusher))
    (pusher / "f.txt").write_text("1\n")
    (pusher / "g.txt").write_text("g\n")
    run_git(pusher, "add", ".")
    run_git(pusher, "commit", "-qm", "one")
    run_git(pusher, "push", "-q", "origin", "main")
    ours = tmp_path / "ours"
    run_git(tmp_path, "clone", "-q", str(bare), str(ours))
    theirs = tmp_path / "theirs"
    shutil.copytree(ours, theirs, symlinks=True)
    return pusher, ours, theirs


def _diverge(pusher: Path, ours: Path, theirs: Path, *, same_file: bool) -> None:
    (pusher / "f.txt").write_text("remote\n")
    run_git(pusher, "commit", "-qam", "remote")
    run_git(pusher, "push", "-q", "origin", "main")
    # One date for both twins' commits: a second ticking between them gives them other ids, and a rebase's markers
    # name the local commit by its id (a failure seen under load).
    dated = {"GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z"}
    for root in (ours, theirs):
        (root / ("f.txt" if same_file else "g.txt")).write_text("local\n")
        run_git(root, "commit", "-qam", "local", env=dated)


def test_a_conflicting_pull_writes_the_markers_and_message_git_pull_writes(twins: tuple[Path, Path, Path]) -> None:
    pusher, ours, theirs = twins
    _diverge(pusher, ours, theirs, same_file=True)
    result = GitService(ours).pull()
    git_cli(theirs, "pull", "--no-rebase", "--no-edit", check=False)
    assert not result.success and [c.path for c in result.conflicts] == ["f.txt"]
    fetched = run_git(ours, "rev-parse", "origin/main").decode().strip()
    assert (ours / "f.txt").read_text() == f"<<<<<<< HEAD\nlocal\n=======\nremote\n>>>>>>> {fetched}\n"
    assert (ours / "f.txt").read_bytes() == (theirs / "f.txt").read_bytes()
    assert (ours / ".git/MERGE_MSG").read_bytes() == (theirs / ".git/MERGE_MSG").read_bytes()


def test_a_conflicting_pull_with_rebase_writes_the_markers_git_writes(twins: tuple[Path, Path, Path]) -> None:
    pusher, ours, theirs = twins
    _diverge(pusher, ours, theirs, same_file=True)
    result = GitService(ours).pull(rebase=True)
    git_cli(theirs, "pull", "--rebase", check=False)
    assert not result.success
    assert (ours / "f.txt").read_bytes() == (theirs / "f.txt").read_bytes()


def test_a_clean_pull_commits_git_pulls_message(twins: tuple[Path, Path, Path]) -> None:
    pusher, ours, theirs = twins
    _diverge(pusher, ours, theirs, same_file=False)
    result = GitService(ours).pull()
    run_git(theirs, "pull", "-q", "--no-rebase", "--no-edit")
    assert result.success
    assert run_git(ours, "log", "-1", "--format=%B") == run_git(theirs, "log", "-1", "--format=%B")
    assert run_git(ours, "rev-parse", "HEAD^{tree}") == run_git(theirs, "rev-parse", "HEAD^{tree}")
