"""A merge the git CLI started with ``--autostash`` (or ``merge.autoStash``) and CodePlane ended (QA63 leftover).

git sets the local changes aside in ``MERGE_AUTOSTASH`` before it merges. Ending that merge (an abort, a commit, a
reset) removed the merge's files and left the ref behind, where no list shows it and the next such merge overwrites
it: the changes looked lost. They are now a stash entry ``autostash``, as git's reset saves them (its own commit
and ``merge --abort`` apply them at once), and ``git stash pop`` brings them back.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codeplane.git import GitService
from tests.builders import make_repo, write_files
from tests.git_oracle import commit_all, run_git


def _merging_with_autostash(tmp_path: Path) -> Path:
    """``git merge --autostash topic`` stopped on f.txt's conflict, with notes.txt's local edit set aside."""
    root = make_repo(tmp_path / "r", {"f.txt": "l1\nl2\n", "notes.txt": "n1\n"})
    run_git(root, "checkout", "-q", "-b", "topic")
    commit_all(root, "t", {"f.txt": "l1\ntopic\n"})
    run_git(root, "checkout", "-q", "main")
    commit_all(root, "m", {"f.txt": "l1\nmain\n"})
    write_files(root, {"notes.txt": "n1\nmy local edit\n"})
    run_git(root, "merge", "--autostash", "topic", check=False)
    assert (root / ".git" / "MERGE_AUTOSTASH").is_file() and (root / ".git" / "MERGE_HEAD").is_file()
    assert (root / "notes.txt").read_text() == "n1\n"  # set aside
    return root


def _stash_list(root: Path) -> list[str]:
    return run_git(root, "stash", "list", "--format=%H %gs").decode().splitlines()


@pytest.mark.parametrize("ending", ["abort", "commit", "reset"])
def test_the_autostash_of_a_merge_codeplane_ends_is_kept_as_a_stash_entry(tmp_path: Path, ending: str) -> None:
    root = _merging_with_autostash(tmp_path)
    stashed = (root / ".git" / "MERGE_AUTOSTASH").read_text().strip()
    twin = root.parent / "twin"
    shutil.copytree(root, twin, symlinks=True)
    run_git(twin, "reset", "-q", "--merge")  # git's reset: "Autostash exists; creating a new stash entry."
    service = GitService(root)
    if ending == "abort":
        service.merge_abort()
    elif ending == "commit":
        write_files(root, {"f.txt": "l1\nboth\n"})
        service.commit("", stage=("f.txt",))
    else:
        service.reset("HEAD", "hard", confirm=True)
    assert not (root / ".git" / "MERGE_AUTOSTASH").exists() and not (root / ".git" / "MERGE_HEAD").exists()
    assert _stash_list(root) == _stash_list(twin) == [f"{stashed} autostash"]
    assert [entry.message for entry in service.stashes()] == ["autostash"]
    run_git(root, "stash", "pop", "-q")  # the local edit comes back, as the user left it
    assert (root / "notes.txt").read_text() == "n1\nmy local edit\n"
