"""The index a commit is made from, kept apart from the repository's own until the commit exists.

git stages ``git commit -a`` and ``git commit -- <paths>`` into ``index.lock`` (plus, for paths, a temporary index of
HEAD and those paths), runs the hooks on that, and renames the lock over ``.git/index`` only after HEAD moved: a
commit killed or refused half-way leaves the user's index as it was. A commit that stages here does the same. The
staging goes into a copy of the index (``codeplane-index-<pid>.lock`` beside it); the hooks get that copy in
``GIT_INDEX_FILE`` (for paths, git's ``next-index-<pid>.lock``); the copy replaces the index once HEAD moved, under
``index.lock``. The lock is not held while hooks run (a pre-commit check may take minutes, and CodePlane's indexer
and edits wait on a live ``index.lock``), so the index is checked when the copy goes in: a staging someone made
meanwhile refuses the commit before anything is committed, and a mere stat refresh (``git status``) does not.
A commit that stages nothing runs on the index itself, as ``git commit`` does.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.procs import pid_alive
from codeplane.git.index_file import UnsupportedIndex, decode_entries
from codeplane.git.pathspecs import under
from codeplane.git.revisions import head_commit

#: The copy's name, before the pid of the server that made it.
_COPY = "codeplane-index-"
#: A leftover copy younger than this is never swept (its pid may belong to another process namespace).
_STALE_S = 600.0
#: How long the swap waits for another git command's ``index.lock`` (git's own writes hold it for milliseconds).
_LOCK_WAIT_S = 2.0


@dataclass
class WorkIndex:
    """The index a commit stages into and is made from. ``path``: the file a whole-index commit's hooks get."""

    index: pygit2.Index
    path: Path
    real: Path
    #: The repository's index file as the call found it (``None``: there was none).
    before: bytes | None
    #: ``index`` is a copy that replaces the repository's after the commit (else it is the repository's own).
    copy: bool

    def restore(self) -> None:
        """Undo what a hook staged in the repository's own index (a copy is simply dropped)."""
        if self.copy:
            return
        now = self.real.read_bytes() if self.real.exists() else None
        if now == self.before:
            return
        if self.before is None:
            self.real.unlink(missing_ok=True)
        else:
            self.real.write_bytes(self.before)

    @contextmanager
    def installing(self) -> Iterator[None]:
        """Around the commit's creation and HEAD's move: takes ``index.lock``, refuses (8001, retryable, nothing
        committed) when the repository's index was staged differently meanwhile, and on success renames the copy
        over it, as git commits its lock file. Nothing happens for a commit on the index itself."""
        if not self.copy:
            yield
            return
        lock = self.real.with_name(self.real.name + ".lock")
        _take(lock)
        try:
            now = self.real.read_bytes() if self.real.exists() else None
            if not _same_staging(self.before, now):
                raise CodePlaneError(ErrorCode.GIT_ERROR, "the index was changed by another program while the "
                                     "commit's hooks ran; nothing was committed and that index is kept: commit again",
                                     details={"index": str(self.real)}, retryable=True)
            yield
            if self.path.exists():  # else nothing was staged into a repository without an index: none is made
                os.replace(self.path, lock)  # the lock now holds the new index: git's commit of a lock file
                os.replace(lock, self.real)
        finally:
            lock.unlink(missing_ok=True)


@contextmanager
def work_index(repo: pygit2.Repository, *, staging: bool) -> Iterator[WorkIndex]:
    """The repository's own index when nothing is staged; else a copy of it (removed on the way out, whatever
    happens)."""
    real = Path(repo.path) / "index"
    before = real.read_bytes() if real.exists() else None
    if not staging:
        index = repo.index
        index.read()
        yield WorkIndex(index=index, path=real, real=real, before=before, copy=False)
        return
    _sweep(real.parent)
    copy = real.with_name(f"{_COPY}{os.getpid()}.lock")
    try:
        if before is None:
            copy.unlink(missing_ok=True)
        else:
            copy.write_bytes(before)
        yield WorkIndex(index=pygit2.Index(str(copy)), path=copy, real=real, before=before, copy=True)
    finally:
        copy.unlink(missing_ok=True)


def _sweep(git_dir: Path) -> None:
    """Remove the copies a killed server left (``<prefix><pid>.lock`` of a process that is gone, not touched for a
    while: a pid the system reused keeps its file, which is harmless)."""
    for leftover in git_dir.glob(f"{_COPY}*.lock"):
        try:
            pid = int(leftover.name[len(_COPY):-len(".lock")])
            if time.time() - leftover.stat().st_mtime < _STALE_S or pid_alive(pid):
                continue
            leftover.unlink()
        except (ValueError, OSError):
            continue


def _take(lock: Path) -> None:
    deadline = time.monotonic() + _LOCK_WAIT_S
    while True:
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
            return
        except FileExistsError:
            if time.monotonic() >= deadline:
                raise CodePlaneError(ErrorCode.GIT_ERROR, f"{lock} exists: another git process is using the "
                                     "repository (or one crashed); nothing was committed and the index is as before: "
                                     "retry when it is done, or remove the file if no git process runs",
                                     details={"lock": str(lock)}, retryable=True) from None
            time.sleep(0.02)


def _same_staging(before: bytes | None, now: bytes | None) -> bool:
    """Whether two index files stage the same thing: the same entries (path, stage, mode, blob, flags); the stat
    data git refreshes on ``git status`` may differ."""
    if before == now:
        return True
    if before is None or now is None:
        return False
    try:
        old, new = decode_entries(before), decode_entries(now)
    except (UnsupportedIndex, struct.error, ValueError, IndexError):
        return False
    return [(e.path, e.stage, e.mode, e.oid, e.extended, e.skip_worktree) for e in old] == \
        [(e.path, e.stage, e.mode, e.oid, e.extended, e.skip_worktree) for e in new]


def _partial_tree(repo: pygit2.Repository, index: pygit2.Index, paths: Sequence[str]) -> pygit2.Oid:
    """HEAD's tree with only ``paths`` taken from the index (git commit's "only" mode)."""
    mem = pygit2.Index()
    head = head_commit(repo)
    if head is not None:
        mem.read_tree(head.tree)
    for entry in list(mem):
        if under(entry.path, paths):
            mem.remove(entry.path)
    for entry in index:
        if under(entry.path, paths):
            mem.add(entry)
    return mem.write_tree(repo)


@contextmanager
def commit_index(repo: pygit2.Repository, work: WorkIndex,
                 only: Sequence[str]) -> Iterator[tuple[Path, Callable[[], pygit2.Oid]]]:
    """The index the commit is made from, as a file the hooks get in ``GIT_INDEX_FILE``, and how to read its tree
    after them (a hook may ``git add``). With ``only`` it is git's temporary index: HEAD plus just those paths
    (``next-index-<pid>.lock``), so ``pre-commit`` checks what is committed, not every staged change."""
    index = work.index
    if not only:
        def whole() -> pygit2.Oid:
            index.read(True)
            return index.write_tree(repo)
        yield work.path, whole
        return
    partial = work.real.with_name(f"next-index-{os.getpid()}.lock")
    try:
        temporary = pygit2.Index(str(partial))
        temporary.read_tree(repo[_partial_tree(repo, index, only)].peel(pygit2.Tree))
        temporary.write()

        def just_paths() -> pygit2.Oid:
            temporary.read(True)
            return temporary.write_tree(repo)
        yield partial, just_paths
    finally:
        partial.unlink(missing_ok=True)
