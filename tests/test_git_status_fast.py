"""The fast status flags (stat scan + cached directory listings) against libgit2's own status, step by step.

Every step mutates a real repository and then checks that :func:`status_flags` took the fast path (or
fell back where it must) and that its flags equal ``Repository.status(untracked_files="all")``. The
caches persist across steps, so each step also checks that no stale listing or verdict survives.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileStatus

from codeplane.git import status_flags as flags_module
from codeplane.git.status_flags import status_flags
from tests.builders import make_repo, write_files
from tests.git_oracle import porcelain_v2, run_git, status_sets

OLD = time.time() - 3600


def _libgit2(repo: pygit2.Repository) -> dict[str, FileStatus]:
    return {p: FileStatus(f) for p, f in repo.status(untracked_files="all").items() if f != FileStatus.IGNORED}


def _age(root: Path) -> None:
    """Make every directory's mtime an hour old, so cached listings are trusted (not racily re-read)."""
    for current, dirs, _ in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        os.utime(current, (OLD, OLD))


def _check(root: Path, *, fast: bool = True) -> dict[str, FileStatus]:
    repo = pygit2.Repository(str(root))
    got = flags_module._fast_flags(repo)
    expected = _libgit2(repo)
    if fast:
        assert got is not None, "expected the fast path"
        assert got == expected
    else:
        assert got is None, "expected a fallback to libgit2"
    assert status_flags(repo) == expected
    return expected


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "tree", {
        "README.md": "hello\n", "pkg/__init__.py": "", "pkg/core.py": "x = 1\n", "pkg/sub/deep.py": "y = 2\n",
        "docs/guide.txt": "guide\n", "run.sh": "echo hi\n", ".gitignore": "*.log\nbuild/\n",
        "pkg/.gitignore": "*.tmp\n", "only/dirs/here/leaf.txt": "leaf\n",
    })
    _age(root)
    _check(root)  # warm the caches on the clean tree
    return root


def _force_track_then_add_beside(r: Path) -> None:
    run_git(r, "add", "-f", "build/out.bin")
    write_files(r, {"build/more.bin": "m\n"})


def _replace_with_symlink(r: Path) -> None:
    (r / "README.md").unlink()
    os.symlink("run.sh", r / "README.md")


def _delete_tracked_directory(r: Path) -> None:
    for p in (r / "only/dirs/here").iterdir():
        p.unlink()


def _nested_repository(r: Path) -> None:
    write_files(r, {"nested/inner.txt": "i\n"})
    run_git(r / "nested", "init", "-q")


STEPS: list[tuple[str, Callable[[Path], object]]] = [
    ("same-size edit right after a scan", lambda r: (r / "pkg/core.py").write_text("x = 2\n")),
    ("untracked file in a cached directory", lambda r: (r / "pkg/new.py").write_text("new\n")),
    ("untracked nested directory", lambda r: write_files(r, {"fresh/a/b.txt": "b\n", "fresh/c.txt": "c\n"})),
    ("ignored files and directories", lambda r: write_files(r, {
        "x.log": "log\n", "build/out.bin": "bin\n", "pkg/s.tmp": "tmp\n", "fresh/a/skip.log": "s\n"})),
    ("force-tracked file in an ignored directory", _force_track_then_add_beside),
    ("directory holding only ignored files", lambda r: write_files(r, {"logs/one.log": "1\n"})),
    ("empty untracked directory", lambda r: (r / "emptydir").mkdir()),
    ("a .gitignore edited in place", lambda r: (r / ".gitignore").write_text("*.log\n")),
    ("a nested .gitignore added", lambda r: (r / "fresh/.gitignore").write_text("a/\n")),
    ("stage a new file", lambda r: run_git(r, "add", "pkg/new.py")),
    ("stage then edit again", lambda r: (run_git(r, "add", "pkg/core.py"),
                                         (r / "pkg/core.py").write_text("x = 3  # again\n"))),
    ("untrack a file (rm --cached)", lambda r: run_git(r, "rm", "-q", "--cached", "docs/guide.txt")),
    ("executable bit", lambda r: os.chmod(r / "run.sh", 0o755)),
    ("file replaced by a symlink", _replace_with_symlink),
    ("stage the typechange", lambda r: run_git(r, "add", "README.md")),
    ("tracked file deleted", lambda r: (r / "pkg/sub/deep.py").unlink()),
    ("whole tracked directory deleted", _delete_tracked_directory),
    ("staged rename", lambda r: run_git(r, "mv", "pkg/__init__.py", "pkg/init_renamed.py")),
    ("untracked symlink to a directory", lambda r: os.symlink("pkg", r / "pkglink")),
    ("commit everything", lambda r: (run_git(r, "add", "-A"), run_git(r, "commit", "-q", "-m", "all"))),
]


def test_fast_flags_equal_libgit2_after_every_step(tree: Path) -> None:
    seen_kinds: set[FileStatus] = set()
    for name, step in STEPS:
        step(tree)
        try:
            flags = _check(tree)
        except AssertionError as exc:
            raise AssertionError(f"after step {name!r}: {exc}") from exc
        for flag in flags.values():
            seen_kinds.update(bit for bit in FileStatus if bit and flag & bit)
        # Again with every directory aged: the trusted-cache path must agree too.
        _age(tree)
        _check(tree)
    # The scenario really produced every kind of flag the fast path computes.
    assert {FileStatus.INDEX_NEW, FileStatus.INDEX_MODIFIED, FileStatus.INDEX_DELETED, FileStatus.INDEX_TYPECHANGE,
            FileStatus.WT_NEW,
            FileStatus.WT_MODIFIED, FileStatus.WT_DELETED, FileStatus.WT_TYPECHANGE} <= seen_kinds


def test_new_entry_in_an_aged_cached_directory_is_seen(tree: Path) -> None:
    # The listing of pkg/ is trusted (its mtime is an hour old); adding an entry moves the mtime.
    (tree / "pkg/late.py").write_text("late\n")
    assert _check(tree)["pkg/late.py"] == FileStatus.WT_NEW
    (tree / "pkg/late.py").unlink()
    assert "pkg/late.py" not in _check(tree)


def test_status_report_matches_porcelain_on_the_fast_path(tree: Path) -> None:
    from codeplane.git import GitService

    for _, step in STEPS[:12]:
        step(tree)
    assert flags_module._fast_flags(pygit2.Repository(str(tree))) is not None
    assert status_sets(GitService(tree).status()) == porcelain_v2(tree)


@pytest.mark.parametrize("setup", [
    pytest.param(_nested_repository, id="nested-repository"),
    pytest.param(lambda r: run_git(r, "config", "core.filemode", "false"), id="filemode-off"),
    pytest.param(lambda r: run_git(r, "config", "core.ignorecase", "true"), id="ignorecase"),
    pytest.param(lambda r: ((r / "run.sh").unlink(), (r / "run.sh").mkdir(), (r / "run.sh/x").write_text("x\n")),
                 id="file-became-directory"),
    pytest.param(lambda r: (r / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"x\n"), id="non-utf8-name"),
    pytest.param(lambda r: os.mkfifo(r / "pkg/pipe"), id="special-file"),
    pytest.param(lambda r: (r / "pkg/.gitattributes").write_text("* text\n"), id="untracked-gitattributes"),
    pytest.param(lambda r: ((r / ".gitattributes").write_text("* text\n"), run_git(r, "add", ".gitattributes")),
                 id="tracked-gitattributes"),
])
def test_unusual_trees_fall_back_to_libgit2(tree: Path, setup: Callable[[Path], object]) -> None:
    setup(tree)
    _check(tree, fast=False)
    run_git(tree, "config", "core.filemode", "true")
    run_git(tree, "config", "core.ignorecase", "false")


def test_unborn_repository_with_staged_files(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "unborn", {"a.txt": "a\n", "d/b.txt": "b\n"}, commit=False)
    run_git(root, "add", "a.txt")
    flags = _check(root)
    assert flags == {"a.txt": FileStatus.INDEX_NEW, "d/b.txt": FileStatus.WT_NEW}
