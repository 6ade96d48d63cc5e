"""QA20 #12 (cosmetic): a stopped cherry-pick, revert, rebase step or merge labels its conflict markers and
comments ``MERGE_MSG`` as the git CLI does (``>>>>>>> a93fcf8 (t1)``, ``# Conflicts:``), compared on copies of
one repository."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from codeplane.git import GitService
from tests.builders import git, make_repo, write_files


def _diverged(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {"f.txt": "base\n"})
    git(repo, "checkout", "-q", "-b", "other")
    write_files(repo, {"f.txt": "other\n"})
    git(repo, "commit", "-qam", "t1")
    git(repo, "checkout", "-q", "main")
    write_files(repo, {"f.txt": "main\n"})
    git(repo, "commit", "-qam", "main")
    return repo


def _same_as_git(tmp_path: Path, ours: Callable[[GitService], object], *cli: str) -> str:
    repo = _diverged(tmp_path)
    oracle = tmp_path / "oracle"
    shutil.copytree(repo, oracle)
    assert git(oracle, *cli, check=False).returncode != 0  # git stops on the conflict
    ours(GitService(repo))
    text = (repo / "f.txt").read_text()
    assert text == (oracle / "f.txt").read_text()
    assert (repo / ".git" / "MERGE_MSG").read_text() == (oracle / ".git" / "MERGE_MSG").read_text()
    return text


def test_a_cherry_pick_conflict_is_labelled_as_git_labels_it(tmp_path: Path) -> None:
    text = _same_as_git(tmp_path, lambda s: s.cherry_pick("other"), "cherry-pick", "other")
    assert text.endswith(" (t1)\n")


def test_a_revert_conflict_is_labelled_as_git_labels_it(tmp_path: Path) -> None:
    def ours(service: GitService) -> None:
        write_files(service.root, {"f.txt": "later\n"})
        git(service.root, "commit", "-qam", "later")
        service.revert("HEAD~1")

    repo = _diverged(tmp_path)
    oracle = tmp_path / "oracle"
    shutil.copytree(repo, oracle)
    ours(GitService(repo))
    write_files(oracle, {"f.txt": "later\n"})
    git(oracle, "commit", "-qam", "later")
    assert git(oracle, "revert", "HEAD~1", check=False).returncode != 0
    assert (repo / "f.txt").read_text() == (oracle / "f.txt").read_text()
    assert "parent of" in (repo / "f.txt").read_text()
    assert (repo / ".git" / "MERGE_MSG").read_text() == (oracle / ".git" / "MERGE_MSG").read_text()


def test_a_merge_conflict_comments_merge_msg_as_git_does(tmp_path: Path) -> None:
    _same_as_git(tmp_path, lambda s: s.merge("other"), "merge", "other")


def test_a_rebase_step_conflict_is_labelled_as_git_labels_it(tmp_path: Path) -> None:
    repo = _diverged(tmp_path)
    git(repo, "checkout", "-q", "other")
    oracle = tmp_path / "oracle"
    shutil.copytree(repo, oracle)
    assert git(oracle, "rebase", "main", check=False).returncode != 0
    result = GitService(repo).rebase_start("main", confirm=True)
    assert result.state == "conflict"
    assert (repo / "f.txt").read_text() == (oracle / "f.txt").read_text()
    assert (repo / "f.txt").read_text().endswith(" (t1)\n")
