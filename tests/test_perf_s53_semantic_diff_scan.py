"""``semantic_diff`` against the work tree lists the changed files with ``git_status``'s stat-first scan.

qa48 F6: libgit2's index -> work tree walk was 80% of a clean Django tree's semantic diff. The fast scan must
list exactly what libgit2 lists; ``.git/info/attributes`` is one of the rules that sends the scan back to
libgit2, so the same tree is compared both ways.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from codeplane.analysis.sides import FilePair, changed_files
from codeplane.git import untracked
from codeplane.repo.ignore import IgnoreRules
from tests.builders import git, make_repo

_FILES = {
    ".gitignore": "*.pyc\n", ".cplignore": "vendor/\n", "a.py": "A = 1\n", "pkg/__init__.py": "",
    "pkg/b.py": "B = 2\n", "pkg/c.py": "C = 3\n", "pkg/d.py": "D = 4\n", "docs/x.md": "# x\n",
    "keep/k.py": "K = 5\n",
}


def _dirty(root: Path) -> None:
    (root / "a.py").write_text("A = 10\n")
    (root / "pkg/c.py").unlink()
    git(root, "mv", "pkg/d.py", "pkg/e.py")
    (root / "pkg/b.py").chmod(0o755)
    (root / "new/sub").mkdir(parents=True)
    (root / "new/sub/n.py").write_text("N = 6\n")
    (root / "pkg/junk.pyc").write_bytes(b"\0")  # git-ignored
    (root / "vendor").mkdir()
    (root / "vendor/v.py").write_text("V = 7\n")  # .cplignore'd
    (root / "docs/x.md").rename(root / "moved.md")  # an untracked copy of a deleted file: a move
    os.utime(root / "keep/k.py", ns=(1, 1))  # stat data changed, content not: no change


def _pairs(root: Path, paths: list[str] | None = None) -> tuple[FilePair, ...]:
    return changed_files(pygit2.Repository(str(root)), "HEAD", None, paths, IgnoreRules.load(root)).pairs


def _via_libgit2(root: Path, paths: list[str] | None = None) -> tuple[FilePair, ...]:
    attributes = root / ".git/info/attributes"
    attributes.parent.mkdir(exist_ok=True)
    attributes.write_text("")
    try:
        return _pairs(root, paths)
    finally:
        attributes.unlink()


def test_the_work_tree_side_lists_what_libgit2_lists(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", _FILES)
    assert _pairs(root) == () == _via_libgit2(root)
    _dirty(root)
    pairs = _pairs(root)
    assert [(p.status, p.old_path, p.new_path, p.untracked) for p in pairs] == [
        ("modified", "a.py", "a.py", False),
        ("renamed", "docs/x.md", "moved.md", True),
        ("added", None, "new/sub/n.py", True),
        ("modified", "pkg/b.py", "pkg/b.py", False),
        ("deleted", "pkg/c.py", None, False),
        ("renamed", "pkg/d.py", "pkg/e.py", False),
    ]
    assert pairs == _via_libgit2(root)
    assert _pairs(root, ["pkg", "new"]) == _via_libgit2(root, ["pkg", "new"]) == tuple(
        p for p in pairs if p.path.startswith(("pkg/", "new/")))


def test_the_work_tree_side_reuses_the_cached_directory_listings(tmp_path: Path) -> None:
    # The listings git_status caches (one lstat per directory on the next scan) are the ones semantic_diff
    # reads: the untracked scan ran, not libgit2's walk of every directory.
    root = make_repo(tmp_path / "repo", _FILES)
    (root / "new").mkdir()
    (root / "new/n.py").write_text("N = 1\n")
    key = os.fsencode(pygit2.Repository(str(root)).workdir).rstrip(b"/")
    assert key not in untracked._splits
    assert [p.path for p in _pairs(root)] == ["new/n.py"]
    assert key in untracked._splits and key + b"/new" in untracked._splits
