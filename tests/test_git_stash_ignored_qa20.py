"""``git_stash`` push with untracked files leaves ignored files alone, as ``git stash push -u`` does.

libgit2's whole-tree stash removed every untracked directory with what was in it: an ignored ``d/k.log`` beside
the stashed ``d/u.txt`` was deleted, in no stash and no recovery point. The same tree is stashed by the git CLI in
a twin repository and both work trees and stash commits compared."""

from __future__ import annotations

import shutil
from pathlib import Path

from codeplane.git import GitService
from tests.builders import make_repo, write_files
from tests.git_oracle import run_git

UNTRACKED = {"t.txt": "changed\n", "d/u.txt": "u\n", "d/k.log": "precious\n", "d/deep/keep.log": "kept\n",
             "e/f/x.txt": "x\n", "top.log": "ignored at the top\n"}


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def _dirs(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_dir() and ".git" not in p.relative_to(root).parts)


def _stashed_files(root: Path) -> list[str]:
    listed = run_git(root, "ls-tree", "-r", "--name-only", "stash@{0}^3").decode().split()
    return sorted(listed)


def test_a_stash_with_untracked_files_keeps_ignored_files_and_matches_git(tmp_path: Path) -> None:
    ours = make_repo(tmp_path / "ours", {".gitignore": "*.log\n", "t.txt": "t\n"})
    theirs = tmp_path / "theirs"
    shutil.copytree(ours, theirs, symlinks=True)
    for root in (ours, theirs):
        write_files(root, UNTRACKED)
    run_git(theirs, "stash", "push", "-u", "-q")
    pushed = GitService(ours).stash_push(message=None, include_untracked=True)
    assert pushed.stash is not None
    assert _tree(ours) == _tree(theirs) == {".gitignore": "*.log\n", "t.txt": "t\n", "d/k.log": "precious\n",
                                            "d/deep/keep.log": "kept\n", "top.log": "ignored at the top\n"}
    assert _dirs(ours) == _dirs(theirs) == ["d", "d/deep"]  # e/f emptied and removed, as git removes it
    assert _stashed_files(ours) == _stashed_files(theirs) == ["d/u.txt", "e/f/x.txt"]
    assert run_git(ours, "stash", "list", "--format=%gs").decode() == run_git(theirs, "stash", "list",
                                                                              "--format=%gs").decode()
    popped = GitService(ours).stash_apply(0, pop=True)
    assert popped.dropped
    run_git(theirs, "stash", "pop", "-q")
    assert _tree(ours) == _tree(theirs) == {".gitignore": "*.log\n", **UNTRACKED}


def test_an_untracked_nested_repository_is_left_where_it_is_as_git_leaves_it(tmp_path: Path) -> None:
    # It was read as a file: 9001 IsADirectoryError, nothing stashed.
    ours = make_repo(tmp_path / "ours", {"t.txt": "t\n"})
    make_repo(ours / "nested", {"n.txt": "n\n"})
    write_files(ours, {"u.txt": "u\n"})
    theirs = tmp_path / "theirs"
    shutil.copytree(ours, theirs, symlinks=True)
    run_git(theirs, "stash", "push", "-u", "-q")
    for paths in ((), ("nested", "u.txt")):
        if paths:
            GitService(ours).stash_apply(0, pop=True)
        GitService(ours).stash_push(message=None, include_untracked=True, paths=list(paths))
        assert _tree(ours) == _tree(theirs) and (ours / "nested" / "n.txt").exists()
        assert _stashed_files(ours) == _stashed_files(theirs) == ["u.txt"]
