"""What a commit is made from and which hooks check it, as with the git CLI (QA20 #4, #7, #8, #12; QA19 #5).

A conflict resolved by deleting the file could not be staged (9001); a server in a linked worktree ran none of the
repository's hooks; ``git_commit`` with paths ran ``pre-commit`` on the whole index; a commit refused for a missing
identity left its paths staged; a path restore stopped half-way by an unwritable file said neither what it had
restored nor where the lost changes were."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import ConfigLevel

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import GitService
from codeplane.server.tools.git_render import render_status
from tests.builders import git, install_hook, make_repo, write_files


def _modify_delete(tmp_path: Path) -> Path:
    """``md2`` modifies other.txt, ``md1`` deletes it; ``md2`` is checked out."""
    repo = make_repo(tmp_path / "repo", {"other.txt": "o\n", "f.txt": "base\n"})
    git(repo, "checkout", "-q", "-b", "md1")
    git(repo, "rm", "-q", "other.txt")
    git(repo, "commit", "-qm", "delete other")
    git(repo, "checkout", "-q", "-b", "md2", "main")
    write_files(repo, {"other.txt": "changed\n"})
    git(repo, "commit", "-qam", "modify other")
    return repo


def test_a_conflict_resolved_by_deleting_the_file_is_staged_and_the_merge_commits(tmp_path: Path) -> None:
    repo = _modify_delete(tmp_path)
    service = GitService(repo)
    assert [c.path for c in service.merge("md1").conflicts] == ["other.txt"]
    (repo / "other.txt").unlink()
    done = service.commit("", stage=["other.txt"])
    assert len(done.parents) == 2 and git(repo, "ls-files", "--stage").stdout.split()[-1] == "f.txt"
    assert git(repo, "status", "--porcelain").stdout == "" and not (repo / ".git" / "MERGE_HEAD").exists()


@pytest.mark.parametrize("how", ["paths", "all"])
def test_a_deleted_content_conflict_stages_like_git_add(tmp_path: Path, how: str) -> None:
    repo = _modify_delete(tmp_path)
    git(repo, "checkout", "-q", "-b", "f1", "main")
    write_files(repo, {"f.txt": "f1\n"})
    git(repo, "commit", "-qam", "f1")
    git(repo, "checkout", "-q", "-b", "f2", "main")
    write_files(repo, {"f.txt": "f2\n"})
    git(repo, "commit", "-qam", "f2")
    service = GitService(repo)
    assert service.merge("f1").conflicts
    (repo / "f.txt").unlink()
    staged = service.stage(["f.txt"] if how == "paths" else [])
    assert [(s.path, s.change) for s in staged.changed] == [("f.txt", "resolved")]
    # git add f.txt after rm: the deletion is staged (D in the index column), no conflict stage is left.
    assert git(repo, "status", "--porcelain").stdout == "D  f.txt\n"
    assert len(service.commit("drop f").parents) == 2


def _worktree(tmp_path: Path) -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    wt = tmp_path / "wt1"
    git(repo, "worktree", "add", "-q", str(wt), "-b", "wtbranch", "main")
    return repo, wt


def test_a_linked_worktree_runs_the_repositorys_hooks(tmp_path: Path) -> None:
    repo, wt = _worktree(tmp_path)
    install_hook(repo, "pre-commit", 'echo "HOOK RAN in $(pwd)"; exit 1\n')
    write_files(wt, {"w2.txt": "w\n"})
    with pytest.raises(CodePlaneError) as refused:
        GitService(wt).commit("cpl in wt", stage=["w2.txt"])
    assert refused.value.error is ErrorCode.GIT_HOOK_FAILED
    assert refused.value.details["hook"]["stdout"] == f"HOOK RAN in {wt}\n"
    assert git(wt, "rev-parse", "HEAD").stdout == git(repo, "rev-parse", "main").stdout
    assert git(wt, "status", "--porcelain").stdout == "?? w2.txt\n"


def test_a_relative_core_hookspath_is_taken_from_the_worktree_top(tmp_path: Path) -> None:
    repo, wt = _worktree(tmp_path)
    git(repo, "config", "core.hooksPath", ".githooks")
    for root, said in ((repo, "main tree"), (wt, "linked tree")):
        hook = root / ".githooks" / "pre-commit"
        hook.parent.mkdir()
        hook.write_text(f"#!/bin/sh\necho {said}\n")
        hook.chmod(0o755)
    write_files(wt, {"w.txt": "w\n"})
    made = GitService(wt).commit("hooked", stage=["w.txt"])
    assert [(h.hook, h.stdout) for h in made.hooks] == [("pre-commit", "linked tree\n")]


HOOK_REPORT = 'echo "staged: $(git diff --cached --name-only | tr "\\n" " ")idx=$GIT_INDEX_FILE"\n'


def test_pre_commit_of_a_paths_commit_sees_only_those_paths_as_git_does(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"hooked.txt": "h\n", "keep.txt": "k\n"})
    install_hook(repo, "pre-commit", HOOK_REPORT)
    install_hook(repo, "commit-msg", HOOK_REPORT)
    write_files(repo, {"n2.txt": "staged, not committed\n", "hooked.txt": "changed\n"})
    git(repo, "add", "n2.txt")
    made = GitService(repo).commit("paths only", only=["hooked.txt"])
    pre, msg = made.hooks
    assert pre.stdout.startswith("staged: hooked.txt idx=") and msg.stdout == pre.stdout, made.hooks
    temporary = Path(pre.stdout.strip().split("idx=", 1)[1])
    assert temporary.parent == repo / ".git" and temporary.name.startswith("next-index-")
    assert not temporary.exists()
    assert git(repo, "show", "--name-only", "--format=", "HEAD").stdout == "hooked.txt\n"
    assert git(repo, "status", "--porcelain").stdout == "A  n2.txt\n"
    # Staging for a commit goes into a copy of the index (as ``git commit -a`` stages into index.lock: s54); a commit
    # of what is staged already runs on the repository's index, as before.
    write_files(repo, {"keep.txt": "k2\n"})
    whole = GitService(repo).commit("all staged", stage=["keep.txt"])
    assert whole.hooks[0].stdout.startswith("staged: keep.txt n2.txt idx="), whole.hooks
    copy = Path(whole.hooks[0].stdout.strip().split("idx=", 1)[1])
    assert copy.parent == repo / ".git" and copy.name.startswith("codeplane-index-") and not copy.exists()
    write_files(repo, {"keep.txt": "k3\n"})
    git(repo, "add", "keep.txt")
    plain = GitService(repo).commit("staged before")
    assert plain.hooks[0].stdout == f"staged: keep.txt idx={repo / '.git' / 'index'}\n"


def test_a_pre_commit_fix_added_during_a_paths_commit_is_committed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"hooked.txt": "h\n"})
    install_hook(repo, "pre-commit", "echo fixed > hooked.txt && git add hooked.txt\n")
    write_files(repo, {"hooked.txt": "changed\n"})
    GitService(repo).commit("fixed by hook", only=["hooked.txt"])
    assert git(repo, "show", "HEAD:hooked.txt").stdout == "fixed\n"


@pytest.fixture
def no_identity(tmp_path: Path) -> Iterator[None]:
    """No user.name/email anywhere libgit2 looks (the machine's global config included)."""
    empty = tmp_path / "empty-home"
    empty.mkdir()
    levels = (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM)
    saved = {level: pygit2.settings.search_path[level] for level in levels}
    hidden = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_"))}
    for level in levels:
        pygit2.settings.search_path[level] = str(empty)
    try:
        yield
    finally:
        for level, path in saved.items():
            pygit2.settings.search_path[level] = path
        os.environ.update(hidden)


def test_a_commit_refused_for_a_missing_identity_leaves_the_index_as_it_was(tmp_path: Path,
                                                                             no_identity: None) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    write_files(repo, {"a.txt": "changed\n", "new.txt": "n\n"})
    index = (repo / ".git" / "index").read_bytes()
    for attempt in ({"stage": ["a.txt", "new.txt"]}, {"stage_all": True}, {"only": ["a.txt"]}):
        with pytest.raises(CodePlaneError) as refused:
            GitService(repo).commit("no identity", **attempt)
        assert refused.value.error is ErrorCode.GIT_ERROR and "identity" in refused.value.message
        assert (repo / ".git" / "index").read_bytes() == index, attempt


def _immutable(path: Path) -> bool:
    """``chattr +i``: even root cannot write the file (chmod does not stop root)."""
    try:
        subprocess.run(["chattr", "+i", str(path)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


def test_a_restore_stopped_by_an_unwritable_file_names_what_it_restored_and_the_recovery_point(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n", "sub/c.py": "c = 1\n", "z.py": "z = 1\n"})
    write_files(repo, {"a.py": "a = 1\n# dirty a\n", "sub/c.py": "c = 1\n# dirty c\n"})
    if not _immutable(repo / "sub" / "c.py"):
        pytest.skip("chattr +i is not available here")
    try:
        with pytest.raises(CodePlaneError) as stopped:
            GitService(repo).checkout(paths=["a.py", "sub/c.py", "z.py"], confirm=True)
    finally:
        subprocess.run(["chattr", "-i", str(repo / "sub" / "c.py")], check=True)
    error = stopped.value
    assert error.error is ErrorCode.STORAGE_PERMISSION_DENIED and error.code == 5012
    point = error.details["recovery_point"]
    assert point and point.startswith("refs/codeplane/recovery/") and point in error.message
    assert error.details["restored"] == ["a.py"] and error.details["not_restored"] == ["sub/c.py", "z.py"]
    assert error.details["field"] == "paths" and "1 of 3 path(s) were already restored: a.py" in error.message
    assert (repo / "a.py").read_text() == "a = 1\n"
    # The recovery point named gives the lost change back.
    GitService(repo).restore(point, confirm=True)
    assert (repo / "a.py").read_text() == "a = 1\n# dirty a\n"


@pytest.mark.parametrize(("checked_out", "merged", "letters"), [("md2", "md1", "UD"), ("md1", "md2", "DU")])
def test_status_text_names_a_modify_delete_conflict_as_git_status_does(tmp_path: Path, checked_out: str,
                                                                        merged: str, letters: str) -> None:
    repo = _modify_delete(tmp_path)
    git(repo, "checkout", "-q", checked_out)
    assert GitService(repo).merge(merged).conflicts
    assert git(repo, "status", "--short").stdout == f"{letters} other.txt\n"
    text = render_status(GitService(repo).status())
    assert any(line.startswith(f"{letters} other.txt ") for line in text.splitlines()), text


def test_status_text_shows_a_staged_rename_with_its_old_path(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"big.txt": "".join(f"line {i}\n" for i in range(40))})
    git(repo, "mv", "big.txt", "moved.txt")
    assert git(repo, "status", "--short").stdout == "R  big.txt -> moved.txt\n"
    assert "R  big.txt -> moved.txt" in render_status(GitService(repo).status()).splitlines()
