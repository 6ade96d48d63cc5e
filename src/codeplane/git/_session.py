"""Plumbing shared by every GitService call: opening the repository, mapping pygit2 failures to the
catalog, serialising writes, tracking effects, recovery points and the confirm rule."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.core.tracing import span
from codeplane.core.worktree_lock import worktree_lock
from codeplane.git import recovery
from codeplane.git.effects import EffectTracker
from codeplane.git.models import Effect

log = get_logger(__name__)

#: Refusals raised before an operation touches anything: no reconcile needed after them.
_REFUSED_BEFORE_ANY_CHANGE = frozenset({ErrorCode.INVALID_ARGUMENTS, ErrorCode.MUTATION_SCOPE_VIOLATION,
                                        ErrorCode.CONFIRMATION_REQUIRED})


#: libgit2 reports a failed write as text ending in the system's ``strerror``: the storage entries they are.
_STORAGE_TEXT = {os.strerror(number): code for number, code in (
    (errno.EACCES, ErrorCode.STORAGE_PERMISSION_DENIED), (errno.EPERM, ErrorCode.STORAGE_PERMISSION_DENIED),
    (errno.ENOSPC, ErrorCode.STORAGE_FULL), (errno.EROFS, ErrorCode.STORAGE_READ_ONLY))}


def error_code(exc: Exception) -> ErrorCode:
    """8001, the storage entry (5010-5012) when libgit2's message says the file system refused a write, or 8004 when
    it found local changes in the way (``N conflicts prevent checkout``: a file changed by another program after
    the operation's own check; the same refusal as that check's, which agents branch on)."""
    text = str(exc)
    if "prevent checkout" in text or "prevents checkout" in text:
        return ErrorCode.GIT_DIRTY_WORKTREE
    return next((code for reason, code in _STORAGE_TEXT.items() if reason in text), ErrorCode.GIT_ERROR)


@contextmanager
def git_errors() -> Iterator[None]:
    """pygit2 exceptions that escape an operation become 8001 with libgit2's message (5010-5012 for a write the
    file system refused)."""
    try:
        yield
    except CodePlaneError:
        raise
    except (pygit2.GitError, KeyError, ValueError) as exc:
        code = error_code(exc) if isinstance(exc, pygit2.GitError) else ErrorCode.GIT_ERROR
        raise CodePlaneError(code, f"git operation failed: {exc}",
                             details={"exception": type(exc).__name__}) from exc


def require_confirm(confirm: bool, action: str, discards: str, **details: object) -> None:
    """5009 unless ``confirm``: the caller must say it means to discard ``discards``."""
    if not confirm:
        raise CodePlaneError(
            ErrorCode.CONFIRMATION_REQUIRED,
            f"{action} would discard {discards}; call again with confirm: true. A recovery point is recorded "
            "first; git_reset with recovery_point=<name> (confirm: true) restores it.",
            details={"action": action, **details},
        )


@dataclass
class Write:
    """One serialised write: the open repository, its effect tracker and any recovery point."""

    repo: pygit2.Repository
    root: Path
    tracker: EffectTracker
    recovery_point: str | None = None
    extra_paths: tuple[str, ...] = ()
    #: For a write that tracks no files (a commit), which says its own paths: those it added, and the lines (+, -)
    #: of them all. A write that tracks files has both measured by its tracker.
    added: tuple[str, ...] = ()
    stats: tuple[int, int] = (0, 0)
    notes: list[str] = field(default_factory=list)

    def record(self, op: str, extras: dict[str, str] | None = None) -> str:
        """Save the prior state now (before anything is discarded); returns the recovery ref."""
        self.recovery_point = recovery.record(self.repo, op, extras)
        return self.recovery_point

    def effect(self) -> Effect:
        return self.tracker.finish(self.repo, recovery_point=self.recovery_point, extra_paths=self.extra_paths,
                                   insertions=self.stats[0], deletions=self.stats[1], added=self.added)


class RepoSession:
    """Opens a fresh pygit2 handle per call (handles are not thread-safe) and serialises writes."""

    def __init__(self, root: Path, after_tree_change: Callable[[], object],
                 while_writing: Callable[[], AbstractContextManager[object]] = nullcontext) -> None:
        self.root = root
        self._after_tree_change = after_tree_change
        self._while_writing = while_writing
        self._lock = threading.RLock()
        self._local = threading.local()

    def open(self) -> pygit2.Repository:
        return pygit2.Repository(str(self.root))

    @contextmanager
    def reading(self) -> Iterator[pygit2.Repository]:
        """A handle for reads, cached per worker thread: re-opening would re-read the index and lose the
        object caches on every call. libgit2 re-reads refs from disk; the index is reloaded here when its file
        changed. The handle is re-opened when the repository's config file changed: libgit2 caches values such as
        ``core.autocrlf`` in the repository object, and a stale one showed every line of a clean file changed."""
        with git_errors(), span("git.read"):
            repo: pygit2.Repository | None = getattr(self._local, "repo", None)
            stamp = self._config_stamp()
            if repo is None or stamp != getattr(self._local, "config_stamp", None):
                repo = self._local.repo = self.open()
                self._local.config_stamp = stamp
            else:
                repo.index.read(False)
            yield repo

    def _config_stamp(self) -> tuple[int, int, int] | None:
        """The config file's (mtime, size, inode): git rewrites it through a lock file, so any change moves one."""
        dotgit = self.root / ".git"
        config = dotgit / "config"
        if dotgit.is_file():  # a linked worktree or absorbed submodule: ``gitdir: <path>`` (and maybe commondir)
            try:
                gitdir = Path(dotgit.read_text(encoding="utf-8").strip().removeprefix("gitdir:").strip())
                gitdir = gitdir if gitdir.is_absolute() else (self.root / gitdir)
                common = gitdir / "commondir"
                base = (gitdir / common.read_text(encoding="utf-8").strip()) if common.is_file() else gitdir
                config = base / "config"
            except OSError:
                return None
        try:
            info = config.stat()
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size, info.st_ino

    @contextmanager
    def writing(self, *, files: bool, reconcile: bool = True, index: bool = True) -> Iterator[Write]:
        """A write under the lock; ``files`` tracks working-tree paths, ``reconcile`` refreshes the index
        subsystem afterwards (also after a failure, except a refusal raised before anything changed). ``index``:
        the operation may write git's index, so another git process's ``index.lock`` refuses it; ref-only writes
        (branches, tags, remotes) pass ``False`` and go ahead, as ``git branch`` does."""
        # A work-tree write holds the work tree's lock first (``core/worktree_lock.py``): a write_source commit
        # landing between this operation's checks and its rewrite of the files was lost.
        tree_lock: AbstractContextManager[object] = worktree_lock(self.root) if files else nullcontext()
        with tree_lock, self._lock, span("git.write", files=files), self._while_writing():
            try:
                with git_errors():
                    repo = self.open()
                    if index:
                        _check_index_lock(repo)
                    yield Write(repo=repo, root=self.root, tracker=EffectTracker(repo, worktree=files))
            except CodePlaneError as exc:
                if reconcile and exc.error not in _REFUSED_BEFORE_ANY_CHANGE:
                    self.reconcile()
                raise
            except BaseException:
                if reconcile:  # a half-done operation may have touched files
                    self.reconcile()
                raise
            if reconcile:
                self.reconcile()

    def reconcile(self) -> None:
        try:
            self._after_tree_change()
        except Exception:  # the git operation itself succeeded; a stale index self-heals on the next scan
            log.exception("index reconcile after a git operation failed")


def _check_index_lock(repo: pygit2.Repository) -> None:
    """Refuse before anything is written while another git process holds the index: libgit2 wrote a checkout's
    files, then failed to write the index ("index is locked"), leaving the work tree switched and HEAD not; a
    stash was made, then reported as failed."""
    lock = Path(repo.path) / "index.lock"
    if lock.exists():
        raise CodePlaneError(ErrorCode.GIT_ERROR, f"{lock} exists: another git process is using the repository (or "
                             "one crashed); retry when it is done, or remove the file if no git process runs",
                             details={"lock": str(lock)}, retryable=True)
