"""Submodule work trees survive a checkout or hard reset to a commit without the submodule, as in git.

libgit2 removes a gitlink's directory recursively when the target tree no longer has it: the submodule's
uncommitted edits, untracked files and, when its ``.git`` is a directory, its unpushed commits, with nothing a
recovery point can hold. Git instead leaves the directory ("unable to rmdir ... Directory not empty") and never
touches a submodule's work tree without ``--recurse-submodules``. :func:`kept_submodules` moves each such directory
aside (a rename inside the git directory, same file system) around the libgit2 call and puts it back after, so the
submodule stays where it was, now untracked, as git leaves it.
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


def dropped_submodules(repo: pygit2.Repository, target: pygit2.Tree) -> list[str]:
    """Gitlinks of the index whose directory holds anything and that ``target`` does not keep as a gitlink."""
    if repo.workdir is None:
        return []
    root = Path(repo.workdir)
    dropped = []
    for entry in repo.index:
        if entry.mode != FileMode.COMMIT:
            continue
        try:
            kept = target[entry.path].filemode == FileMode.COMMIT
        except KeyError:
            kept = False
        where = root / entry.path
        if not kept and where.is_dir() and not where.is_symlink() and any(where.iterdir()):
            dropped.append(entry.path)
    return sorted(dropped)


def warning(path: str) -> str:
    return (f"unable to rmdir '{shown(path)}': Directory not empty; the submodule's files (and its git directory) "
            "are left in place, untracked, as git leaves them; remove the directory yourself when no longer needed")


@contextmanager
def kept_submodules(repo: pygit2.Repository, target: pygit2.Tree) -> Iterator[list[str]]:
    """Around a checkout of ``target``: the submodule directories it would delete are kept (yields their paths).

    8004 before anything moves when ``target`` writes files at or under such a directory: git would refuse too
    (untracked files would be overwritten)."""
    paths = dropped_submodules(repo, target)
    for path in paths:
        try:
            target[path]
        except KeyError:
            continue
        raise CodePlaneError(ErrorCode.GIT_DIRTY_WORKTREE, f"the target has files at {shown(path)!r}, where a "
                             "submodule's work tree is; move or remove the submodule directory first",
                             details={"paths": [shown(path)], "count": 1})
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
        yield paths
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
