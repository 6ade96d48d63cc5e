"""The stat-first working-tree scan gives the same unstaged diff as libgit2 and ``git diff``, and steps
aside (libgit2 fallback) whenever git's rules get complicated."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pygit2
import pytest

from codeplane.git import worktree_scan
from codeplane.git.diffs import DiffLimits, compute, diff, render, sources
from tests.builders import make_repo, write_files
from tests.git_oracle import numstat, run_git


def _libgit2(root: Path) -> object:
    repo = pygit2.Repository(str(root))
    raw, label = compute(repo, None, None, False)
    return render(sources(raw), label, (), DiffLimits())


def _fast(root: Path) -> object:
    return diff(pygit2.Repository(str(root)))


def _edits(root: Path) -> None:
    write_files(root, {"a.txt": "changed\n", "big.txt": "x" * 5000 + "\n"})
    (root / "gone.txt").unlink()
    os.chmod(root / "run.sh", 0o755)
    (root / "link").unlink()
    (root / "link").write_text("now a file\n")
    (root / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"changed too\n")
    same = root / "same_size.txt"
    info = same.stat()
    same.write_text("BBBB\n")  # same size, mtime put back: only ctime/content tell
    os.utime(same, ns=(info.st_atime_ns, info.st_mtime_ns))
    write_files(root, {"untracked.txt": "not in a diff\n"})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "r", {"a.txt": "a\n", "big.txt": "y" * 5000 + "\n", "gone.txt": "g\n",
                                      "run.sh": "echo\n", "same_size.txt": "AAAA\n", "keep/deep/x.txt": "x\n"})
    os.symlink("a.txt", root / "link")
    (root / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin\n")
    run_git(root, "add", "-A")
    run_git(root, "commit", "-qm", "more")
    return root


@pytest.mark.parametrize("index_version", ["2", "3", "4"])
def test_fast_scan_equals_libgit2_and_git_numstat(repo: Path, index_version: str) -> None:
    run_git(repo, "update-index", "--index-version", index_version)
    _edits(repo)
    assert worktree_scan.scan(pygit2.Repository(str(repo)), repo) is not None
    fast, slow = _fast(repo), _libgit2(repo)
    # libgit2 reports a typechange without its content (0/0); git (and the fast scan) show the lines.
    assert [f for f in fast.files if f.path != "link"] == [f for f in slow.files if f.path != "link"]  # type: ignore[attr-defined]
    got = {f.path: (None, None) if f.binary else (f.insertions, f.deletions)
           for f in fast.files}  # type: ignore[attr-defined]
    assert got == {k: v[:2] for k, v in numstat(repo).items()}
    kinds = {f.path: f.status for f in fast.files}  # type: ignore[attr-defined]
    assert kinds["gone.txt"] == "deleted" and kinds["link"] == "typechange" and kinds["run.sh"] == "modified"
    assert "same_size.txt" in kinds


def test_clean_tree_reads_no_file(repo: Path) -> None:
    run_git(repo, "update-index", "--refresh")
    assert worktree_scan.scan(pygit2.Repository(str(repo)), repo) == []


@pytest.mark.parametrize("setup", ["autocrlf", "attributes", "untracked-attributes", "conflict", "submodule",
                                   "intent-to-add"])
def test_fast_scan_steps_aside_when_git_rules_get_complicated(tmp_path: Path, setup: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    if setup == "autocrlf":
        run_git(root, "config", "core.autocrlf", "true")
    elif setup == "attributes":
        write_files(root, {".gitattributes": "*.txt text eol=crlf\n"})
        run_git(root, "add", ".gitattributes")
    elif setup == "untracked-attributes":
        # git applies an untracked attributes file too; only a changed file needs the comparison.
        write_files(root, {"sub/.gitattributes": "*.txt text eol=crlf\n", "sub/b.txt": "b\n"})
        run_git(root, "add", "sub/b.txt")
        write_files(root, {"sub/b.txt": "b changed\n"})
    elif setup == "conflict":
        run_git(root, "checkout", "-q", "-b", "side")
        write_files(root, {"a.txt": "side\n"})
        run_git(root, "commit", "-qam", "side")
        run_git(root, "checkout", "-q", "main")
        write_files(root, {"a.txt": "main\n"})
        run_git(root, "commit", "-qam", "main")
        run_git(root, "merge", "side", check=False)
    elif setup == "submodule":
        monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
        monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.file.allow")
        monkeypatch.setenv("GIT_CONFIG_VALUE_0", "always")
        lib = make_repo(tmp_path / "lib", {"l.txt": "l\n"})
        run_git(root, "submodule", "add", "-q", str(lib), "lib")
    else:
        write_files(root, {"later.txt": "l\n"})
        run_git(root, "add", "-N", "later.txt")
    assert worktree_scan.scan(pygit2.Repository(str(root)), root) is None
    if setup == "conflict":  # libgit2 reports an empty change; the diff shows our side against the disk
        assert [(f.path, f.status) for f in diff(pygit2.Repository(str(root))).files] == [("a.txt", "conflicted")]
        return
    assert _fast(root).model_dump() == _libgit2(root).model_dump()  # type: ignore[attr-defined]


def test_a_copied_tree_is_read_once_then_trusted_on_its_stat(tmp_path: Path) -> None:
    """A tree copied or restored (new inodes and ctimes) made every scan re-read and hash every tracked file
    (4 s per semantic_diff on a copied Django) until a git command refreshed the index; files found unchanged are
    now trusted on the stat they were seen with, and a later change of one is still seen."""
    files = {f"d{n % 5}/f{n}.txt": f"line {n}\n" for n in range(40)}
    origin = make_repo(tmp_path / "origin", files)
    past = (1_600_000_000, 1_600_000_000)  # settled long ago: not racily clean
    for path in files:
        os.utime(origin / path, past)
    run_git(origin, "update-index", "-q", "--refresh")
    copy = tmp_path / "copy"
    shutil.copytree(origin, copy, symlinks=True)  # mtimes kept, inodes and ctimes new
    repo = pygit2.Repository(str(copy))
    prepared = worktree_scan.prepared_index(repo, copy)
    assert prepared is not None
    assert len(worktree_scan._suspects(prepared)) >= len(files)  # every file's stat differs from the index's
    assert worktree_scan.scan(repo, copy) == []
    assert worktree_scan._suspects(prepared) == []  # read once: trusted now
    changed = copy / "d1" / "f1.txt"
    changed.write_text("LINE 1\n")  # same size, mtime put back: the ctime tells
    os.utime(changed, past)
    [change] = worktree_scan.scan(repo, copy) or []
    assert change.path == "d1/f1.txt" and change.data == b"LINE 1\n"
