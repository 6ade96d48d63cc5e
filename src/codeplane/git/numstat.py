"""What a write did to each working-tree file: added, deleted or modified, and its lines (``git diff --numstat``).

Each changed path's content is taken where it is exact. Before the write: a path that matched the index is its
blob in HEAD's tree (or the index entry the tracker saw, when only the index differed); a file that differed from
the index was on disk, so its bytes are kept when the tracker starts (:func:`keep_dirty`, bounded) or read from a
tree the write saved it in (the recovery point's, a stash's). After the write: the index's blob when the file
matches it, else the bytes on disk. Blobs are compared with blobs; a blob against a file is first filtered as
a checkout writes it (``core.autocrlf``, ``eol``, ``working-tree-encoding``), so a conversion is no line change and
an old hash is the one ``read_source`` gave for the file.

A path whose content before or after is out of reach (a dirty file past the kept budget with no recovery point, a
file too large to read) is *uncounted*: the effect says how many, so no caller reads a 0 nobody measured. Binary
files and submodules (a commit, not a file) count as files without lines, as numstat's ``-``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pygit2
from pygit2.enums import DiffOption, FileMode, FileStatus

from codeplane.core.hashing import sha256_bytes

#: Status bits that say the file on disk is not the index's blob (so its content is only on disk).
ON_DISK = (FileStatus.WT_NEW | FileStatus.WT_MODIFIED | FileStatus.WT_TYPECHANGE | FileStatus.WT_RENAMED
           | FileStatus.CONFLICTED)
#: Bytes of dirty files kept when a tracker starts, so a write that discards them (a stash, a forced checkout,
#: a reset) can count their lines: at most this much in all, this many files, and none larger than _KEEP_FILE.
_KEEP_TOTAL = 8 * 1024 * 1024
_KEEP_FILE = 1024 * 1024
_KEEP_COUNT = 1000
#: A file read to count its lines (after a write) is at most this large; above it, it is uncounted.
_READ_MAX = 8 * 1024 * 1024

Change = Literal["added", "modified", "deleted"]


@dataclass(frozen=True)
class _Content:
    """One side of a path: absent, a blob, bytes from disk, present but unread (uncounted), or a submodule."""

    present: bool
    data: pygit2.Blob | bytes | None = None
    lines: bool = True

    @property
    def known(self) -> bool:
        return not self.present or not self.lines or self.data is not None


_ABSENT = _Content(present=False)
_UNREAD = _Content(present=True)
_SUBMODULE = _Content(present=True, lines=False)


@dataclass(frozen=True)
class PathStat:
    change: Change
    insertions: int = 0
    deletions: int = 0
    #: False when its content before or after was out of reach: its lines are not in the totals.
    counted: bool = True
    #: SHA-256 of the bytes before (``None``: it did not exist, or they were not read).
    old_sha256: str | None = None


def keep_dirty(root: Path, state: Mapping[str, tuple[int, str | None]]) -> dict[str, bytes]:
    """The bytes of each file that differs from the index now (sorted by path, within the budget): nothing else
    holds them once a write replaces them."""
    kept: dict[str, bytes] = {}
    total = 0
    for path in sorted(p for p, (flag, _) in state.items() if flag & ON_DISK):
        if len(kept) >= _KEEP_COUNT:
            break
        data = _read(root / path, _KEEP_FILE)
        if isinstance(data, bytes) and total + len(data) <= _KEEP_TOTAL:
            kept[path] = data
            total += len(data)
    return kept


def _read(file: Path, limit: int) -> bytes | Literal[False] | None:
    """A file's bytes (a symlink's target, as git stores it), ``None`` when absent, ``False`` when it is a
    directory (a submodule) or larger than ``limit``."""
    try:
        if file.is_symlink():
            return os.fsencode(os.readlink(file))
        if file.is_dir():
            return False
        if file.stat().st_size > limit:
            return False
        return file.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return False


def _blob(repo: pygit2.Repository, oid: pygit2.Oid | str, mode: int | None = None) -> _Content:
    if mode == FileMode.COMMIT:
        return _SUBMODULE
    try:
        obj = repo[oid]
    except (KeyError, ValueError):
        return _UNREAD
    return _Content(present=True, data=obj) if isinstance(obj, pygit2.Blob) else _SUBMODULE


def _tree_content(repo: pygit2.Repository, tree: pygit2.Tree | None, path: str) -> _Content | None:
    """The path's content in ``tree``, ``_ABSENT`` when not there, ``None`` when there is no tree."""
    if tree is None:
        return None
    try:
        entry = tree[path]
    except KeyError:
        return _ABSENT
    return _blob(repo, entry.id, entry.filemode)


def _disk(root: Path, path: str) -> _Content:
    data = _read(root / path, _READ_MAX)
    if data is None:
        return _ABSENT
    if data is False:
        return _SUBMODULE if (root / path).is_dir() and not (root / path).is_symlink() else _UNREAD
    return _Content(present=True, data=data)


@dataclass(frozen=True)
class Before:
    """The state a tracker saw before the write: dirty paths (flag, index entry), their kept bytes, HEAD's tree."""

    root: Path
    state: Mapping[str, tuple[int, str | None]]
    kept: Mapping[str, bytes]
    #: HEAD's tree (``None``: unborn), looked up once, not per path.
    tree: pygit2.Tree | None

    def content(self, repo: pygit2.Repository, path: str, saved: tuple[pygit2.Tree, ...]) -> _Content:
        """The path's content before the write; ``saved``: trees that hold the dirty files as they were."""
        dirty = self.state.get(path)
        if dirty is None:  # matched HEAD: its blob there (an unborn HEAD has no tree: then it did not exist)
            found = _tree_content(repo, self.tree, path)
            return found if found is not None else _ABSENT
        flag, entry = dirty
        if flag & ON_DISK:
            if path in self.kept:
                return _Content(present=True, data=self.kept[path])
            for tree in saved:
                found = _tree_content(repo, tree, path)
                if found is not None and found.present:
                    return found
            return _UNREAD
        if flag & FileStatus.WT_DELETED or entry is None:
            return _ABSENT
        return _blob(repo, entry)  # only the index differed from HEAD: the file was its index blob


def after_content(repo: pygit2.Repository, root: Path, path: str,
                  state: Mapping[str, tuple[int, str | None]]) -> _Content:
    flag = state.get(path, (0, None))[0]
    if flag & ON_DISK:
        return _disk(root, path)
    if flag & FileStatus.WT_DELETED:
        return _ABSENT
    try:
        entry = repo.index[path]
    except (KeyError, ValueError):
        full = root / path
        if full.is_dir() and not full.is_symlink() and not (full / ".git").exists():
            return _ABSENT  # a plain directory where a file (a symlink) was: the file is gone, its files are others
        return _disk(root, path)  # not tracked (an ignored file a write left or removed)
    return _blob(repo, entry.id, entry.mode)


def measure(path: str, before: _Content, after: _Content, *, old_hash: bool) -> PathStat:
    """The path's change and lines; ``old_hash``: also the SHA-256 of its bytes before."""
    change: Change = "added" if not before.present and after.present else \
        "deleted" if not after.present else "modified"
    old = _hash(path, before) if old_hash and change != "added" else None
    if not (before.known and after.known):
        return PathStat(change=change, counted=False, old_sha256=old)
    if not (before.lines and after.lines):
        return PathStat(change=change, old_sha256=old)
    if isinstance(before.data, pygit2.Blob) and isinstance(after.data, pygit2.Blob) and \
            before.data.id == after.data.id:
        return PathStat(change=change, old_sha256=old)  # the same blob (a path only the index or HEAD moved at)
    counts = _numstat(path, before.data, after.data)
    if counts is None:
        return PathStat(change=change, counted=False, old_sha256=old)
    return PathStat(change=change, insertions=counts[0], deletions=counts[1], old_sha256=old)


def disk_differs(repo: pygit2.Repository, full: str, path: str, *, kept: bytes | None,
                 saved: pygit2.Oid | None) -> bool:
    """Whether the file ``full`` (at ``path``) differs from what it was, compared by object id, hashed in C: its
    ``kept`` bytes with the file's bytes, else the blob a recovery point ``saved`` with the file as staging would
    store it (the point stored it so). Neither known, or the file unreadable: it differs."""
    try:
        if os.path.islink(full):
            now_raw = now_stored = pygit2.hash(os.fsencode(os.readlink(full)))
        elif os.path.isfile(full):
            now_raw = pygit2.hashfile(full)
            now_stored = repo.hashfile(path) if kept is None and saved is not None else now_raw
        else:
            return True
    except (OSError, pygit2.GitError, UnicodeError, ValueError):
        return True
    if kept is not None:
        return pygit2.hash(kept) != now_raw
    return saved is None or saved != now_stored


def _numstat(path: str, old: pygit2.Blob | bytes | None, new: pygit2.Blob | bytes | None) -> tuple[int, int] | None:
    a: pygit2.Blob | bytes | Literal[False] | None = old
    b: pygit2.Blob | bytes | Literal[False] | None = new
    if isinstance(old, pygit2.Blob) and isinstance(new, bytes):
        a = _checked_out(path, old)
    elif isinstance(new, pygit2.Blob) and isinstance(old, bytes):
        b = _checked_out(path, new)
    if a is False or b is False:
        return None
    patch = pygit2.Patch.create_from(a, b, flag=DiffOption.NORMAL, context_lines=0)
    _, insertions, deletions = patch.line_stats
    return insertions, deletions


def _checked_out(path: str, blob: pygit2.Blob) -> bytes | Literal[False]:
    """The blob's bytes as a checkout writes them at ``path`` (its filters applied); ``False`` when too large."""
    if blob.size > _READ_MAX:
        return False
    try:
        with pygit2.BlobIO(blob, as_path=path) as stream:
            return stream.read()
    except (pygit2.GitError, OSError, ValueError):
        return False  # a filter that fails (a missing driver): uncounted rather than compared unfiltered


def _hash(path: str, content: _Content) -> str | None:
    data = _checked_out(path, content.data) if isinstance(content.data, pygit2.Blob) else content.data
    return sha256_bytes(data) if isinstance(data, bytes) else None
