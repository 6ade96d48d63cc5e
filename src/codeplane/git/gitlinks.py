"""Submodule work trees survive every libgit2 write that drops or brings back their gitlink, as in git.

libgit2 removes a gitlink's directory recursively when the target tree no longer has it (a checkout, a hard reset,
a fast-forward): the submodule's uncommitted edits, untracked files and, when its ``.git`` is a directory, its
unpushed commits, with nothing a recovery point can hold. Where the gitlink comes back over the untracked directory
git left (a hard reset, a rebase abort) a forced write deletes it too. A merge, cherry-pick or revert instead leaves
the directory but silently keeps the gitlink in the index, so the commit made after it still has the submodule the
result drops. Git leaves the directory ("unable to rmdir ... Directory not empty"), drops the gitlink, and never
touches a submodule's work tree without ``--recurse-submodules``. :func:`kept_submodules` moves each such directory
aside (a rename inside the git directory, same file system) around the libgit2 call and puts it back after, so the
submodule stays where it was: untracked when the target drops it, its work tree again when the target has it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.pathspecs import shown

_HOLD = "codeplane-held-submodules"


#: What a libgit2 call writes: a commit's tree, or an in-memory merge result (its conflict stages included).
Target = pygit2.Tree | pygit2.Index


def _occupied(where: Path) -> bool:
    return where.is_dir() and not where.is_symlink() and any(where.iterdir())


def _is_gitlink(target: Target, path: str) -> bool:
    try:
        entry = target[path]
    except KeyError:  # absent (or, in a merge result, only in conflict stages)
        return False
    return (entry.mode if isinstance(entry, pygit2.IndexEntry) else entry.filemode) == FileMode.COMMIT


def _new_gitlinks(repo: pygit2.Repository, target: Target) -> set[str]:
    """Gitlinks of ``target`` that the index does not have as they are (a tree is diffed, not walked whole)."""
    if isinstance(target, pygit2.Index):
        return {e.path for e in target if e.mode == FileMode.COMMIT}
    out = set()
    for delta in repo.index.diff_to_tree(target).deltas:
        for side in (delta.old_file, delta.new_file):
            if side.mode == FileMode.COMMIT and _is_gitlink(target, side.path):
                out.add(side.path)
    return out


def _files_at(target: Target, path: str) -> bool:
    """Whether ``target`` has a file (not a gitlink) at ``path`` or below it."""
    if isinstance(target, pygit2.Index):
        return any((e.path == path and e.mode != FileMode.COMMIT) or e.path.startswith(path + "/") for e in target)
    try:
        return target[path].filemode != FileMode.COMMIT
    except KeyError:
        return False


def dropped_submodules(repo: pygit2.Repository, target: Target) -> list[str]:
    """Gitlinks of the index whose directory holds anything and that ``target`` does not keep as a gitlink."""
    if repo.workdir is None:
        return []
    root = Path(repo.workdir)
    return sorted(e.path for e in repo.index
                  if e.mode == FileMode.COMMIT and not _is_gitlink(target, e.path) and _occupied(root / e.path))


def returning_submodules(repo: pygit2.Repository, target: Target) -> list[str]:
    """Gitlinks of ``target`` over a directory the index does not track (a submodule git left untracked): a forced
    write replaces it by the gitlink's empty directory, git keeps it as the submodule's work tree."""
    if repo.workdir is None:
        return []
    root = Path(repo.workdir)
    links = [p for p in _new_gitlinks(repo, target) if _occupied(root / p)]
    if not links:
        return []
    tracked = {e.path for e in repo.index}
    returning = []
    for path in sorted(links):
        if path in tracked:
            continue
        if any(p.startswith(path + "/") for p in tracked):
            continue  # tracked files there: libgit2 replaces them as git does
        returning.append(path)
    return returning


def is_submodule(repo: pygit2.Repository, path: str) -> bool:
    """Whether the index has a gitlink at ``path``: the submodule's own changes are never written over (git leaves
    its work tree alone), so they block no merge, pick or rebase."""
    try:
        mode: int = repo.index[path].mode
    except KeyError:
        return False
    return mode == FileMode.COMMIT


def warning(path: str) -> str:
    return (f"unable to rmdir '{shown(path)}': Directory not empty; the submodule's files (and its git directory) "
            "are left in place, untracked, as git leaves them; remove the directory yourself when no longer needed")


@contextmanager
def kept_submodules(repo: pygit2.Repository, target: Target) -> Iterator[list[str]]:
    """Around a libgit2 write of ``target``: the submodule directories it would delete are kept (yields the paths of
    those it drops, which git warns about).

    8004 before anything moves when ``target`` writes files at or under such a directory: git would refuse too
    (untracked files would be overwritten)."""
    dropped = dropped_submodules(repo, target)
    for path in dropped:
        if not _files_at(target, path):
            continue
        raise CodePlaneError(ErrorCode.GIT_DIRTY_WORKTREE, f"the target has files at {shown(path)!r}, where a "
                             "submodule's work tree is; move or remove the submodule directory first",
                             details={"paths": [shown(path)], "count": 1})
    paths = dropped + returning_submodules(repo, target)
    if not paths:
        yield []
        return
    assert repo.workdir is not None  # dropped_submodules found none in a bare repository
    root = Path(repo.workdir)
    hold = Path(repo.path) / _HOLD
    hold.mkdir(exist_ok=True)
    moved: list[tuple[Path, Path]] = []
    try:
        for n, path in enumerate(paths):
            aside = hold / str(n)
            if aside.exists():  # left by a process that died mid-checkout: never overwrite it
                aside = hold / f"{n}-{os.getpid()}-{len(list(hold.iterdir()))}"
            os.rename(root / path, aside)
            moved.append((aside, root / path))
            if path in dropped:
                # An empty directory is an unpopulated submodule, which libgit2 drops as git does; with nothing
                # there a merge takes the submodule for deleted locally and refuses. Where the gitlink comes back,
                # nothing must be there: a stash apply takes even an empty directory for a conflict.
                (root / path).mkdir()
        yield dropped
    finally:
        for aside, home in moved:
            if home.is_dir() and not any(home.iterdir()):
                home.rmdir()  # libgit2 leaves (or makes) an empty directory for a gitlink
            home.parent.mkdir(parents=True, exist_ok=True)
            if home.exists() or home.is_symlink():
                # The checkout wrote something there after all: keep both, the submodule beside it.
                shutil.move(str(aside), str(home.with_name(home.name + ".submodule")))
            else:
                os.rename(aside, home)
        try:
            hold.rmdir()
        except OSError:
            pass  # something another call left there stays for a person to look at
