"""The two states a semantic diff compares, and which files differ between them.

``base``/``target`` are git revisions (anything ``git rev-parse`` takes; ``target=None`` is the work
tree) or ``epoch:N`` (index epochs, see ``epochs.py``); both sides use the same mode. Git mode lists the
changed files with libgit2 (tree-to-tree, or tree-to-work-tree including untracked, not ignored files),
with rename detection, and reads each version's bytes by blob id; work-tree files are read from disk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import DiffFind, DiffOption, FileMode

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.revisions import resolve_commit
from codeplane.repo.ignore import IgnoreRules

_EPOCH = re.compile(r"epoch:(\d{1,18})")
_STATUS = {"A": "added", "D": "deleted", "M": "modified", "R": "renamed", "T": "modified", "?": "added"}
_REGULAR = (FileMode.BLOB, FileMode.BLOB_EXECUTABLE)
_PRIVATE = frozenset({".git", ".codeplane"})


def epoch_of(spec: str | None) -> int | None:
    """N for ``epoch:N``; None for a git revision; 1003 for a malformed epoch spec."""
    if spec is None or not spec.startswith("epoch:"):
        return None
    found = _EPOCH.fullmatch(spec)
    if found is None:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{spec!r} is not epoch:<number>",
                             details={"value": spec})
    return int(found.group(1))


@dataclass(frozen=True)
class FilePair:
    """One changed file: its old and new path and blob ids (None for the absent side)."""

    status: str
    old_path: str | None
    new_path: str | None
    old_id: str | None
    new_id: str | None
    #: False for symlinks and submodules: listed, never parsed.
    regular: bool = True
    #: A work-tree file git does not track.
    untracked: bool = False

    @property
    def path(self) -> str:
        path = self.new_path or self.old_path
        assert path is not None
        return path


@dataclass(frozen=True)
class GitSides:
    base_commit: str
    target_commit: str | None  # None: the work tree
    pairs: tuple[FilePair, ...]


def _under(path: str, prefixes: Sequence[str]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") or not p for p in prefixes)


def changed_files(repo: pygit2.Repository, base: str, target: str | None, paths: Sequence[str] | None,
                  ignore: IgnoreRules | None = None) -> GitSides:
    """The files that differ from ``base`` to ``target`` (8002 for a ref that names no commit). Untracked
    files outside CodePlane's universe (``.cplignore``, pruned directories) are left out, as the index
    leaves them out; tracked ones are always listed."""
    base_commit = resolve_commit(repo, base, "base")
    if target is None:
        flags = DiffOption.INCLUDE_UNTRACKED | DiffOption.RECURSE_UNTRACKED_DIRS | DiffOption.INCLUDE_TYPECHANGE
        diff = base_commit.tree.diff_to_workdir(flags, 0)
        diff.find_similar(DiffFind.FIND_RENAMES | DiffFind.FIND_FOR_UNTRACKED)
        target_id = None
    else:
        target_commit = resolve_commit(repo, target, "target")
        diff = base_commit.tree.diff_to_tree(target_commit.tree, DiffOption.INCLUDE_TYPECHANGE, 0)
        diff.find_similar(DiffFind.FIND_RENAMES)
        target_id = str(target_commit.id)
    pairs: list[FilePair] = []
    for delta in diff.deltas:
        status = _STATUS.get(delta.status_char())
        if status is None:
            continue  # ignored/unreadable/unmodified entries
        old = delta.old_file if status != "added" else None
        new = delta.new_file if status != "deleted" else None
        old_path = old.path if old is not None else None
        new_path = new.path if new is not None else None
        if any(p is not None and p.split("/", 1)[0] in _PRIVATE for p in (old_path, new_path)):
            continue  # CodePlane's own state (ignored by its .gitignore, unless that is missing)
        if paths is not None and not any(p is not None and _under(p, paths) for p in (old_path, new_path)):
            continue
        if ignore is not None and delta.status_char() == "?" and new_path is not None and ignore.excludes(new_path):
            continue
        regular = all(f.mode in _REGULAR for f in (old, new) if f is not None)
        pairs.append(FilePair(status, old_path, new_path, str(old.id) if old is not None else None,
                              str(new.id) if new is not None and target is not None else None, regular,
                              delta.status_char() == "?"))
    pairs.sort(key=lambda p: (p.path, p.old_path or ""))
    return GitSides(str(base_commit.id), target_id, tuple(pairs))


def read_blob(repo: pygit2.Repository, blob_id: str) -> bytes:
    blob = repo[blob_id]
    assert isinstance(blob, pygit2.Blob)
    return bytes(blob.data)


def read_worktree(root: Path, path: str) -> tuple[str, bytes] | None:
    """(blob id, bytes) of a work-tree file as git would store it; None if it vanished meanwhile."""
    try:
        data = (root / path).read_bytes()
    except OSError:
        return None
    return str(pygit2.hash(data)), data
