"""The one git mutation the engine makes: a ``git mv``-equivalent for clean tracked files (§8.10, §9.7).

HEAD and refs are never touched; only index entries for the two paths of a move change. Undo exists so
a rolled-back batch leaves git's index as it found it.
"""

from __future__ import annotations

from pathlib import Path

import pygit2


def is_clean_tracked(root: Path, rel: str) -> bool:
    """``rel`` is in git's index and its work-tree content matches it (and HEAD)."""
    try:
        repo = pygit2.Repository(str(root))
        return rel in repo.index and repo.status_file(rel) == pygit2.enums.FileStatus.CURRENT
    except (pygit2.GitError, KeyError, ValueError):
        return False


def record_move(root: Path, src: str, dst: str) -> None:
    """After the files moved: drop ``src`` from the index and add ``dst`` from the work tree."""
    repo = pygit2.Repository(str(root))
    index = repo.index
    index.read()
    if src in index:
        index.remove(src)
    index.add(dst)
    index.write()


def undo_move(root: Path, src: str, dst: str) -> None:
    """Before-state of :func:`record_move`, once ``src`` is back in the work tree. Idempotent."""
    repo = pygit2.Repository(str(root))
    index = repo.index
    index.read()
    changed = False
    if dst in index:
        index.remove(dst)
        changed = True
    if src not in index and (root / src).is_file():
        index.add(src)
        changed = True
    if changed:
        index.write()


def can_record_move(root: Path, src: str, dst: str) -> bool:
    """A move is recorded in git's index only for a clean tracked source onto an untracked destination."""
    if not is_clean_tracked(root, src):
        return False
    try:
        return dst not in pygit2.Repository(str(root)).index
    except (pygit2.GitError, KeyError, ValueError):
        return False


def head_id(root: Path) -> str:
    """HEAD's commit id, or ``""`` for an unborn HEAD or a broken repository."""
    try:
        repo = pygit2.Repository(str(root))
        return "" if repo.head_is_unborn else str(repo.head.target)
    except (pygit2.GitError, KeyError, ValueError):
        return ""
