"""Sparse checkouts: index entries marked skip-worktree (files outside the cone) are not in the work tree.

libgit2 ignores the bit: its status calls such a file deleted, ``all`` staging committed the deletion, a stash
recorded the deletion, and a checkout, merge or stash apply wrote the files and cleared the bits. Status and staging
here treat those entries as git does (their work tree is not looked at). A branch switch, a hard reset and
restoring paths outside the cone are refused with 8005 naming the git CLI, which keeps the cone. Merges, picks,
reverts, stash applies, rebases (and pulls) and recovery-point restores keep it as git does (:func:`keeping_cone`):
a clean change outside the cone reaches only the index, a conflicted file is written with its markers. A sparse
*index* (``sdir``) cannot be read here at all: every writer is refused the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pathspec
import pygit2
from pygit2.enums import FileMode, FileStatus
from pygit2.ffi import C, ffi

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git._workdir import prune_empty, write_blob
from codeplane.git.index_file import UnsupportedIndex, read_index
from codeplane.git.pathspecs import shown

#: ``GIT_INDEX_ENTRY_SKIP_WORKTREE``, in an index entry's extended flags.
_SKIP_WORKTREE = 0x4000
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


def _configured(repo: pygit2.Repository) -> bool:
    return "core.sparseCheckout" in repo.config and repo.config.get_bool("core.sparseCheckout")


def _patterns(repo: pygit2.Repository) -> pathspec.GitIgnoreSpec | None:
    """The patterns git applies to paths new to the index (gitignore syntax, a match is inside the cone; cone mode
    writes them as such too), or ``None`` when ``core.sparseCheckout`` is off and git applies none."""
    if not _configured(repo):
        return None
    try:
        text = (Path(repo.path) / "info" / "sparse-checkout").read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        text = ""
    return pathspec.GitIgnoreSpec.from_lines(text.splitlines())


def active(repo: pygit2.Repository) -> bool:
    """Whether the work tree is sparse: entries are skipped, or ``core.sparseCheckout`` is on."""
    return bool(skip_worktree_paths(repo)) or _configured(repo)


def refuse_outside(repo: pygit2.Repository, what: str, cli: str, touched: Iterable[str] = (), *,
                   forced: bool = False) -> None:
    """8005 before anything is written when ``what`` cannot keep this sparse checkout's cone as git keeps it: its
    index cannot be read here (a sparse index), or files are present in the work tree outside the cone where the
    operation writes (``touched``; ``forced``: it rewrites every path). Git leaves such files alone; libgit2 would
    take them for local changes, or overwrite them."""
    skipped, readable = _read(repo)
    if not readable and _configured(repo):
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"this is a sparse checkout with a sparse index, which "
                             f"CodePlane cannot read: {what} is refused; use the git CLI ({cli})",
                             details={"sparse": True})
    if not skipped or repo.workdir is None:
        return
    root = Path(repo.workdir)
    present = sorted(p for p in (skipped if forced else skipped.intersection(touched)) if os.path.lexists(root / p))
    if present:
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"this is a sparse checkout and files outside its cone "
                             f"are present in the work tree where {what} writes; git leaves them alone, CodePlane "
                             f"would overwrite them: remove them, or use the git CLI ({cli})",
                             details={"sparse": True, "paths": [shown(p) for p in present[:200]],
                                      "count": len(present)})


@contextmanager
def keeping_cone(repo: pygit2.Repository, touched: Iterable[str] = ()) -> Iterator[None]:
    """Around a libgit2 write (merge, pick, revert, stash apply, rebase step, restore) in a sparse checkout: the
    files outside the cone that it changes (``touched``) are written from the index first, since libgit2 would
    take their absence for a local deletion and refuse; afterwards each file outside the cone (and each new path
    the patterns leave out) that the write left as the index has it is removed again and its entry marked
    skip-worktree. So a clean change outside the cone reaches only the index, and a conflicted file stays in the
    tree with its markers, as git does. The caller ran :func:`refuse_outside` first."""
    skipped = skip_worktree_paths(repo)
    spec = _patterns(repo)
    if (not skipped and spec is None) or repo.workdir is None:
        yield
        return
    root = Path(repo.workdir)
    index = repo.index
    before = {e.path for e in index}
    absent = {p for p in skipped if not os.path.lexists(root / p)}
    for path in sorted(absent.intersection(touched)):
        entry = index[path]
        if entry.mode != FileMode.COMMIT:
            write_blob(repo, root, path, entry.id, entry.mode)
    try:
        yield
    finally:
        _recone(repo, root, absent, before, spec)


def _blob_id(full: Path) -> pygit2.Oid | None:
    if full.is_symlink():
        return pygit2.hash(os.fsencode(os.readlink(full)))
    return pygit2.hashfile(str(full)) if full.is_file() else None


def _recone(repo: pygit2.Repository, root: Path, absent: set[str], before: set[str],
            spec: pathspec.GitIgnoreSpec | None) -> None:
    index = repo.index
    index.read(False)
    candidates = set(absent)
    if spec is not None:
        candidates.update(e.path for e in index if e.path not in before and not spec.match_file(e.path))
    marked = False
    for path in sorted(candidates):
        try:
            entry = index[path]
        except KeyError:  # gone, or conflicted: git leaves a conflicted file in the tree too
            continue
        full = root / path
        if os.path.lexists(full):
            if _blob_id(full) != entry.id:
                continue  # not what the index has (conflict markers left by hand?): the user's to resolve
            full.unlink()
            prune_empty(root, path)
        # libgit2 has no call for the bit: it is set on the index's own entry, and libgit2 writes it (index v3).
        found = C.git_index_get_bypath(index._index, os.fsencode(path), 0)
        if found != ffi.NULL:
            found.flags_extended |= _SKIP_WORKTREE
            marked = True
    if marked:
        index.write()


def refuse_sparse(repo: pygit2.Repository, what: str, paths: list[str] | None = None) -> None:
    """8005 when ``what`` would write files outside a sparse checkout's cone (``paths``: only those it writes;
    ``None``: it may write any)."""
    skipped, readable = _read(repo)
    hit = sorted(skipped if paths is None else skipped.intersection(paths))
    unreadable_sparse = not readable and _configured(repo)
    if not hit and not unreadable_sparse:
        return
    raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"this is a sparse checkout: {what} would write files outside "
                         "its cone and drop their skip-worktree bits; CodePlane does not do sparse checkouts, use the "
                         "git CLI for this (git checkout / git switch / git reset --hard keep the cone)",
                         details={"sparse": True, "paths": hit[:200], "count": len(hit)})
