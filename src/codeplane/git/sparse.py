"""Sparse checkouts: index entries marked skip-worktree (files outside the cone) are not in the work tree.

libgit2 ignores the bit: its status calls such a file deleted, ``all`` staging committed the deletion, and a
checkout wrote the files and cleared the bits. Status and staging here treat those entries as git does (their work
tree is not looked at); writers that would fill in the tree (a branch switch, a hard reset, restoring paths outside
the cone) are refused with 8005 naming the git CLI, which keeps the cone. A sparse *index* (``sdir``) cannot be
read here at all: every writer is refused the same way.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
from pygit2.enums import FileStatus

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.index_file import UnsupportedIndex, read_index

_WORKTREE_BITS = (FileStatus.WT_MODIFIED | FileStatus.WT_DELETED | FileStatus.WT_TYPECHANGE |
                  FileStatus.WT_RENAMED | FileStatus.WT_UNREADABLE)

#: index path → ((mtime_ns, size), skip-worktree paths, whether the index could be read): the index is re-read
#: only when it changed, so repositories without the bit pay one ``stat`` per call.
_CACHE: dict[str, tuple[tuple[int, int], frozenset[str], bool]] = {}


def _read(repo: pygit2.Repository) -> tuple[frozenset[str], bool]:
    path = Path(repo.path) / "index"
    try:
        info = path.stat()
    except OSError:
        return frozenset(), True
    key = (info.st_mtime_ns, info.st_size)
    cached = _CACHE.get(str(path))
    if cached is not None and cached[0] == key:
        return cached[1], cached[2]
    try:
        entries = read_index(path).entries
        skipped = frozenset(os.fsdecode(e.path) for e in entries if e.skip_worktree)
        readable = True
    except (UnsupportedIndex, OSError, ValueError):
        skipped, readable = frozenset(), False
    _CACHE[str(path)] = (key, skipped, readable)
    return skipped, readable


def skip_worktree_paths(repo: pygit2.Repository) -> frozenset[str]:
    """Index paths whose work tree git does not look at (pygit2 keys)."""
    return _read(repo)[0]


def honour(repo: pygit2.Repository, flags: dict[str, FileStatus]) -> dict[str, FileStatus]:
    """``flags`` with the work-tree bits of skip-worktree entries cleared (a path left with none is dropped)."""
    skipped = skip_worktree_paths(repo)
    if not skipped:
        return flags
    out: dict[str, FileStatus] = {}
    for path, flag in flags.items():
        kept = FileStatus(flag & ~_WORKTREE_BITS) if path in skipped else flag
        if kept:
            out[path] = kept
    return out


def refuse_sparse(repo: pygit2.Repository, what: str, paths: list[str] | None = None) -> None:
    """8005 when ``what`` would write files outside a sparse checkout's cone (``paths``: only those it writes;
    ``None``: it may write any)."""
    skipped, readable = _read(repo)
    hit = sorted(skipped if paths is None else skipped.intersection(paths))
    unreadable_sparse = not readable and "core.sparseCheckout" in repo.config and \
        repo.config.get_bool("core.sparseCheckout")
    if not hit and not unreadable_sparse:
        return
    raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"this is a sparse checkout: {what} would write files outside "
                         "its cone and drop their skip-worktree bits; CodePlane does not do sparse checkouts, use the "
                         "git CLI for this (git checkout / git switch / git reset --hard keep the cone)",
                         details={"sparse": True, "paths": hit[:200], "count": len(hit)})
