"""``git stash push [-u] [-- <paths>]``, built as git builds it: libgit2's path-limited stash resets every file,
and its untracked stash deletes untracked directories whole, ignored files in them too.

With paths, libgit2 (``git_stash_save_with_opts``) put the paths' changes into the stash but then reset the whole
work tree and index to HEAD, and its untracked-files commit took every untracked file, deleting them all: the
changes to files that were not named were lost. Git itself (``builtin/stash.c``) makes:

- an index commit of the *whole* index (parent HEAD), ``index on <branch>: <short> <subject>``;
- with ``include_untracked``, a parentless commit of the untracked files under the paths,
  ``untracked files on <branch>: ...``;
- the stash commit (parents HEAD, the index commit, the untracked commit): the index's tree with the work tree's
  version of the tracked changed files under the paths, ``On <branch>: <message>`` or ``WIP on <branch>: ...``;

then ``refs/stash`` moves (its reflog is the stash list), and only the paths go back: their index entries and
files to HEAD (to the index with ``keep_index``), their untracked files removed. Nothing outside the paths moves.
A staged submodule (a gitlink HEAD does not have as it is) is stashed as its gitlink; going back changes only the
index, and the directory of one HEAD does not have stays, untracked, as git leaves it ("unable to rmdir").
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

import pygit2
from pygit2.enums import FileMode, FileStatus

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git._workdir import path_as_in, prune_empty, write_blob
from codeplane.git.pathspecs import under
from codeplane.git.revisions import require_head, user_signature
from codeplane.git.stash_ref import store_stash
from codeplane.git.status import dirty_paths

_UNTRACKED = FileStatus.WT_NEW


def push_paths(repo: pygit2.Repository, paths: Sequence[str], *, message: str | None, include_untracked: bool,
               keep_index: bool) -> tuple[pygit2.Oid, list[str]]:
    """Stash the changes under ``paths`` (files or directories) and put only those back; the stash commit's id and
    the submodule directories left in place (HEAD has no gitlink there)."""
    if repo.workdir is None:
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "a bare repository has no work tree to stash")
    root = Path(repo.workdir)
    head = require_head(repo)
    dirty = {p: f for p, f in dirty_paths(repo).items() if under(p, paths)}
    # An untracked directory that is listed whole is a nested repository: git ignores it ("Ignoring path").
    untracked = sorted(p for p, f in dirty.items() if f & _UNTRACKED and (
        os.path.islink(root / p) or not os.path.isdir(root / p))) if include_untracked else []
    tracked = sorted(p for p, f in dirty.items() if not f & _UNTRACKED)
    if not tracked and not untracked:
        raise CodePlaneError(ErrorCode.GIT_NOTHING_TO_COMMIT,
                             "no local changes to stash" + (" under the paths" if paths else ""),
                             details={"paths": list(paths)[:50], "include_untracked": include_untracked})
    signature = user_signature(repo)
    branch = "(no branch)" if repo.head_is_detached else repo.head.shorthand
    summary = f"{branch}: {str(head.id)[:7]} {head.message.splitlines()[0] if head.message else ''}"
    index = repo.index
    index.read(False)
    index_tree = index.write_tree()
    index_commit = repo.create_commit(None, signature, signature, f"index on {summary}\n", index_tree, [head.id])
    parents = [head.id, index_commit]
    if untracked:
        loose = pygit2.Index()
        for path in untracked:
            loose.add(_entry(repo, root, path))
        parents.append(repo.create_commit(None, signature, signature, f"untracked files on {summary}\n",
                                          loose.write_tree(repo), []))
    worked = pygit2.Index()
    worked.read_tree(repo[index_tree].peel(pygit2.Tree))
    for path in tracked:
        if _gitlink(index, path) or _gitlink_in(head.tree, path):
            continue  # the submodule's own changes are not stashed, its staged gitlink is (in the index's tree)
        if os.path.lexists(root / path):
            worked.add(_entry(repo, root, path))
        elif path in worked:
            worked.remove(path)
    text = f"On {branch}: {message}" if message else f"WIP on {summary}"
    stashed = repo.create_commit(None, signature, signature, text + "\n", worked.write_tree(repo), parents)
    store_stash(repo, stashed, text)
    kept = _put_back(repo, root, head.tree, tracked, untracked, keep_index=keep_index)
    return stashed, kept


def _gitlink(index: pygit2.Index, path: str) -> bool:
    try:
        return index[path].mode == FileMode.COMMIT
    except KeyError:
        return False


def _gitlink_in(tree: pygit2.Tree, path: str) -> bool:
    try:
        return tree[path].filemode == FileMode.COMMIT
    except KeyError:
        return False


def staged_gitlinks(repo: pygit2.Repository, head: pygit2.Commit) -> bool:
    """Whether a gitlink is staged (a submodule added, removed or moved in the index): libgit2's stash cannot save
    an added one ("cannot create blob from ... it is a directory") and finds nothing to stash in a removed one."""
    return any(FileMode.COMMIT in (d.old_file.mode, d.new_file.mode)
               for d in repo.index.diff_to_tree(head.tree).deltas)


def _entry(repo: pygit2.Repository, root: Path, path: str) -> pygit2.IndexEntry:
    """The index entry of the work tree's file (a symlink's target as its blob, the executable bit kept)."""
    full = root / path
    info = full.lstat()
    if stat.S_ISLNK(info.st_mode):
        return pygit2.IndexEntry(path, repo.create_blob(os.fsencode(os.readlink(full))), FileMode.LINK)
    mode = FileMode.BLOB_EXECUTABLE if info.st_mode & stat.S_IXUSR else FileMode.BLOB
    return pygit2.IndexEntry(path, repo.create_blob(full.read_bytes()), mode)


def _put_back(repo: pygit2.Repository, root: Path, head_tree: pygit2.Tree, tracked: Sequence[str],
              untracked: Sequence[str], *, keep_index: bool) -> list[str]:
    """The stashed paths as HEAD has them (as the index has them, ``keep_index``); untracked ones removed. A staged
    submodule changes in the index only; the directories of those HEAD lacks are returned."""
    index = repo.index
    kept: list[str] = []
    for path in tracked:
        if (_gitlink(index, path) or _gitlink_in(head_tree, path)) and not keep_index:
            try:
                entry = head_tree[path]
                index.add(pygit2.IndexEntry(path, entry.id, entry.filemode))
            except KeyError:
                index.remove(path)
                where = root / path
                if where.is_dir() and not where.is_symlink() and any(where.iterdir()):
                    kept.append(path)
            continue
        if _gitlink(index, path) or _gitlink_in(head_tree, path):
            continue  # keep_index: the staged gitlink stays, and git never writes a submodule's work tree
        if keep_index and path in index:
            entry = index[path]
            write_blob(repo, root, path, entry.id, entry.mode)
            continue
        if keep_index:  # staged as deleted: the file stays deleted
            (root / path).unlink(missing_ok=True)
            continue
        path_as_in(repo, root, head_tree, path)
    for path in untracked:
        (root / path).unlink(missing_ok=True)
        prune_empty(root, path)
    index.write()
    return kept
