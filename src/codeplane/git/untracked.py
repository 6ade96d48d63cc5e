"""Untracked files without re-reading the whole tree each time (git's "untracked cache" idea).

libgit2 finds untracked files by opening and reading every directory and probing each for ``.git`` and
``.gitignore``; on a tree with a few thousand directories that is most of ``git_status``'s time. But a
directory's entries change only when one is created, removed or renamed, and each of those moves the
directory's mtime. So each directory's listing is kept with the mtime it had when read, and a later scan
costs one ``lstat`` per directory; only directories whose mtime moved are read again.

What is trusted, and what is not:
- A listing read within :data:`_RACY_NS` of its directory's last change is re-read next time: a second
  change in the same clock tick would leave the mtime equal (the same "racily clean" rule git applies to
  its index).
- Which listed names are untracked is recomputed on every scan from the current index (``git add``
  changes that without touching a directory), and every ignore verdict comes from libgit2 on every scan
  (editing a ``.gitignore`` changes them without touching a directory).
- Anything unusual -- a ``.gitattributes`` file anywhere (tracked or not: filters apply either way), a nested
  repository, a tracked directory that became a file or a symlink, a file
  that became a directory, a special file, a name that is not UTF-8 -- returns ``None`` and the caller
  asks libgit2 for the whole status.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from dataclasses import dataclass

import pygit2

_RACY_NS = 2_000_000_000
#: Listings of directories that were deleted stay behind; past this many, start over.
_MAX_LISTINGS = 500_000
_DIR, _FILE, _OTHER = 0, 1, 2


class _NotSimple(Exception):
    """The tree needs libgit2's own rules."""


@dataclass(frozen=True, slots=True)
class _Listing:
    mtime_ns: int
    #: (name, kind) sorted by name; kind is _DIR, _FILE (regular file or symlink) or _OTHER.
    entries: tuple[tuple[bytes, int], ...]
    trusted: bool


_lock = threading.Lock()
_listings: dict[bytes, _Listing] = {}


def _read(directory: bytes, mtime_ns: int) -> _Listing:
    began = time.time_ns()
    entries: list[tuple[bytes, int]] = []
    with os.scandir(directory) as it:
        for entry in it:
            if entry.is_dir(follow_symlinks=False):
                kind = _DIR
            elif entry.is_file(follow_symlinks=False) or entry.is_symlink():
                kind = _FILE
            else:
                kind = _OTHER
            entries.append((entry.name, kind))
    entries.sort()
    return _Listing(mtime_ns, tuple(entries), trusted=mtime_ns < began - _RACY_NS)


def _text(rel: bytes) -> str:
    try:
        return rel.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _NotSimple(rel) from exc


@dataclass(frozen=True, slots=True)
class _Split:
    """One directory's listing split against one index version (compared by identity)."""

    listing: _Listing
    tracked: frozenset[bytes]
    #: Directories holding tracked files: always descended into.
    tracked_dirs: tuple[bytes, ...]
    #: Untracked directories and files (repository-relative): subject to the ignore rules.
    new_dirs: tuple[bytes, ...]
    new_files: tuple[bytes, ...]


#: Keyed by the directory's absolute path; the hot path of a scan is one lstat and one lookup here.
_splits: dict[bytes, _Split] = {}


def _split(rel_dir: bytes, listing: _Listing, tracked: frozenset[bytes], tracked_dirs: frozenset[bytes]) -> _Split:
    prefix = rel_dir + b"/" if rel_dir else b""
    descend: list[bytes] = []
    new_dirs: list[bytes] = []
    new_files: list[bytes] = []
    for name, kind in listing.entries:
        if name == b".git":
            if rel_dir:
                raise _NotSimple(rel_dir)  # a nested repository or a submodule checkout
            continue
        if name == b".gitattributes":
            raise _NotSimple(rel_dir)  # content filters apply even from an untracked attributes file
        rel = prefix + name
        if rel in tracked:
            if kind == _DIR:
                raise _NotSimple(rel)
        elif rel in tracked_dirs:
            if kind != _DIR:
                raise _NotSimple(rel)
            descend.append(rel)
        elif kind == _DIR:
            new_dirs.append(rel)
        elif kind == _FILE:
            new_files.append(rel)
        else:
            raise _NotSimple(rel)
    return _Split(listing, tracked, tuple(descend), tuple(new_dirs), tuple(new_files))


def _split_of(path: bytes, rel_dir: bytes, tracked: frozenset[bytes],
              tracked_dirs: frozenset[bytes]) -> _Split | None:
    """The directory's split, from the caches when neither it nor the index moved; ``None`` if it is gone."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    cached = _splits.get(path)  # a plain dict read: atomic under the GIL
    if cached is not None and cached.tracked is tracked and cached.listing.trusted \
            and cached.listing.mtime_ns == info.st_mtime_ns:
        return cached
    if not stat.S_ISDIR(info.st_mode):
        raise _NotSimple(path)
    listing = _listings.get(path)
    if listing is None or not listing.trusted or listing.mtime_ns != info.st_mtime_ns:
        try:
            # The mtime is taken before reading: a change during the read moves it, so the next scan re-reads.
            listing = _read(path, info.st_mtime_ns)
        except (FileNotFoundError, NotADirectoryError):
            return None
    split = _split(rel_dir, listing, tracked, tracked_dirs)
    with _lock:
        if len(_splits) >= _MAX_LISTINGS:
            _splits.clear()
            _listings.clear()
        _listings[path] = listing
        _splits[path] = split
    return split


def untracked_paths(repo: pygit2.Repository, root: bytes, tracked: frozenset[bytes],
                    tracked_dirs: frozenset[bytes]) -> list[str] | None:
    """Every untracked, non-ignored file (``--untracked-files=all``), or ``None`` when libgit2 must decide."""
    found: list[str] = []
    pending = [b""]
    try:
        while pending:
            rel_dir = pending.pop()
            split = _split_of(root + b"/" + rel_dir if rel_dir else root, rel_dir, tracked, tracked_dirs)
            if split is None:
                continue
            pending.extend(split.tracked_dirs)
            for rel in split.new_dirs:
                if not repo.path_is_ignored(_text(rel) + "/"):
                    pending.append(rel)
            for rel in split.new_files:
                if not repo.path_is_ignored(text := _text(rel)):
                    found.append(text)
    except _NotSimple:
        return None
    return found
