"""Per-path status flags, as libgit2's ``Repository.status(untracked_files="all")`` reports them, fast.

libgit2 walks every directory of the work tree on every call. When the repository's rules are simple
(see :mod:`codeplane.git.worktree_scan`), the same flags come from three cheaper parts: the index against
HEAD (libgit2's tree diff, which reads only changed subtrees), the work tree against the index (one
``lstat`` per tracked file, content read only when the stat data differs), and the untracked files from
cached directory listings (:mod:`codeplane.git.untracked`). Otherwise libgit2 answers, except for the changed
files git converts and libgit2 does not, which git judges (:mod:`codeplane.git.converted`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
from pygit2.enums import DeltaStatus, DiffOption, FileStatus

from codeplane.git import converted, sparse, untracked, worktree_scan
from codeplane.git.revisions import head_tree

_STAGED = {DeltaStatus.ADDED: FileStatus.INDEX_NEW, DeltaStatus.MODIFIED: FileStatus.INDEX_MODIFIED,
           DeltaStatus.DELETED: FileStatus.INDEX_DELETED, DeltaStatus.TYPECHANGE: FileStatus.INDEX_TYPECHANGE}
_WORKTREE = {"modified": FileStatus.WT_MODIFIED, "deleted": FileStatus.WT_DELETED,
             "typechange": FileStatus.WT_TYPECHANGE}


def status_flags(repo: pygit2.Repository, *, refresh: bool = False) -> dict[str, FileStatus]:
    """Every path whose status is not current (ignored files excluded), keyed by pygit2 path. ``refresh``: a write
    is about to start, which may refresh git's index (:func:`codeplane.git.converted.settle`)."""
    fast = _fast_flags(repo)
    if fast is not None:
        return fast
    # The fast scan gives way whenever a changed file has a conversion; of those, git judges the ones git
    # converts and libgit2 does not (a filter driver, a working-tree encoding).
    return converted.settle(repo, sparse.honour(repo, {p: FileStatus(f) for p, f in repo.status(
        untracked_files="all").items() if f != FileStatus.IGNORED}), refresh=refresh)


def _fast_flags(repo: pygit2.Repository) -> dict[str, FileStatus] | None:
    if repo.workdir is None:
        return None
    root = Path(repo.workdir)
    prepared = worktree_scan.prepared_index(repo, root)
    if prepared is None:
        return None
    changes = worktree_scan.scan(repo, root)
    new_files = untracked.untracked_paths(repo, os.fsencode(root).rstrip(b"/"), prepared.tracked,
                                          prepared.tracked_dirs)
    if changes is None or new_files is None:
        return None
    flags: dict[str, FileStatus] = {}
    index = repo.index
    index.read(False)  # reload only if the file changed since this handle last read it
    for delta in index.diff_to_tree(head_tree(repo), flags=DiffOption.INCLUDE_TYPECHANGE).deltas:
        path = delta.new_file.path if delta.status != DeltaStatus.DELETED else delta.old_file.path
        flags[path] = _STAGED[delta.status]
    for change in changes:
        flags[change.path] = flags.get(change.path, FileStatus.CURRENT) | _WORKTREE[change.kind]
    for path in new_files:
        flags[path] = flags.get(path, FileStatus.CURRENT) | FileStatus.WT_NEW
    return flags
