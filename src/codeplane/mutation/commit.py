"""Putting a planned batch on disk: all of it or none of it (spec §9.2, §9.6, DECISIONS D8).

Order, for a batch whose every precondition already passed and whose targets are locked:

1. write the journal (originals, the new contents' hashes, manifest) durably;
2. check no target changed behind our back since it was read (5002: the journal is dropped, nothing was
   replaced, so there is nothing to roll back), and again just before each target's replace in step 4 (5002:
   the targets replaced so far are rolled back, the changed one keeps the other program's bytes);
3. create missing parent directories, then write every new content to a sibling temp file, set its mode,
   fsync (in parallel: fsync latency dominates);
4. rename each temp over its target (or unlink a deleted target), in path order;
5. fsync every touched directory, so the replaces are durable;
6. update git's index for ``git mv``-style moves; drop the cached bytecode of a same-size rewrite of a
   ``.py`` file within the replaced version's second (``core.bytecode``; never raises);
7. discard the journal.

Steps 2–5 name every file relative to a descriptor of its directory, opened from the root down without following
symlinks (:mod:`codeplane.mutation.confined`): a directory replaced by a symlink or removed since the scope checked
it fails the batch with 5002 (retryable) rather than sending a byte outside the repository.

Any failure in 2–6 rolls back from the journal in-process and re-raises; a crash anywhere is rolled back
at the next start (:func:`codeplane.mutation.journal.recover`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path

from codeplane.core import unanswered
from codeplane.core.bytecode import cache_prefixes, drop_cached_bytecode, indistinct
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.core.storage import storage_error
from codeplane.mutation import git_index
from codeplane.mutation.confined import ConfinedTree, DirectoryChanged, split
from codeplane.mutation.journal import Journal, JournalMove, Original, temp_path

log = get_logger(__name__)


@dataclass(frozen=True)
class FileWrite:
    """One target's before and after. ``new is None`` deletes; ``old is None`` means it did not exist."""

    rel: str
    old: bytes | None
    old_mode: int
    #: ``(st_ino, st_size, st_mtime_ns)`` when ``old`` was read, to notice outside writers.
    old_stat: tuple[int, int, int] | None
    new: bytes | None
    new_mode: int


def stat_key(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class Commit:
    root: Path
    journal_dir: Path
    executor: Executor
    #: Debug hook for fault injection: sleep this long before each replace and before the discard.
    pause_s: float = 0.0
    #: The batch whose in-process rollback failed; set once, cleared only by a restart (recovery).
    broken: str | None = None

    def check_usable(self) -> None:
        """9001 if an earlier batch could not be rolled back (its journal awaits startup recovery)."""
        if self.broken is not None:
            raise CodePlaneError(
                ErrorCode.INTERNAL_ERROR,
                f"write batch {self.broken} failed and could not be rolled back; restart the server "
                "(`cpl down && cpl up`) so startup recovery restores it before anything else is written",
                details={"batch": self.broken},
            )

    def run(self, batch: str, writes: Sequence[FileWrite], created_dirs: Sequence[str],
            moves: Sequence[JournalMove]) -> None:
        """Apply ``writes`` atomically. On failure the work tree is as before and the error re-raised."""
        self.check_usable()  # again under the batch's locks: a failure may have happened while we waited
        ordered = sorted(writes, key=lambda w: w.rel)
        originals = [Original(w.rel, w.old, w.old_mode, temp_path(w.rel, batch) if w.new is not None else None,
                              hashlib.sha256(w.new).hexdigest() if w.new is not None else "")
                     for w in ordered]
        # Every work-tree operation below goes through directory descriptors (``confined.py``): a directory another
        # program swaps for a symlink meanwhile fails the batch (5002) instead of redirecting a write out of the repo.
        with ConfinedTree(self.root) as tree:
            try:
                journal = Journal.write(self.root, self.journal_dir, batch, originals, created_dirs=created_dirs,
                                        moves=moves, executor=self.executor)
            except OSError as exc:
                # Nothing in the work tree was touched yet, so the partial journal is simply dropped.
                shutil.rmtree(self.journal_dir / batch, ignore_errors=True)
                raise _storage(exc, "writing the batch's journal") from exc
            try:
                self._check_unchanged(tree, ordered)
            except (CodePlaneError, DirectoryChanged) as exc:
                journal.discard()  # nothing was replaced: another program's newer bytes stay as they are
                if isinstance(exc, DirectoryChanged):
                    raise exc.refusal() from exc
                raise
            try:
                self._apply(tree, batch, ordered, created_dirs, moves)
            except BaseException as exc:
                self._roll_back(journal, batch, exc)
                if isinstance(exc, DirectoryChanged):
                    raise exc.refusal() from exc
                if isinstance(exc, OSError):
                    raise _storage(exc, "writing the batch") from exc
                raise
        journal.discard()
        # Applied and durable: until the call's ledger row is written, a kill must not leave it unrecorded.
        unanswered.note(self.journal_dir.parent, batch, [w.rel for w in ordered])

    def _apply(self, tree: ConfinedTree, batch: str, ordered: Sequence[FileWrite], created_dirs: Sequence[str],
               moves: Sequence[JournalMove]) -> None:
        """Steps 3-6 of the module docstring; raises on the first failure (the caller rolls back)."""
        for rel in created_dirs:  # a refusal names the caller's file, not the directory made for it
            tree.mkdir(rel, path=next((w.rel for w in ordered if w.rel.startswith(rel + "/")), rel))
        for write in ordered:  # opened here, serially, so the parallel temp writes below only read the cache
            tree.parent(write.rel)
        list(self.executor.map(lambda w: self._write_temp(tree, w, batch), [w for w in ordered if w.new is not None]))
        for write in ordered:
            self._pause()
            # Again at its replace: writing and fsyncing the temp files takes long, and an editor saving a
            # target meanwhile would lose its edit (5002 rolls back what was replaced; its bytes stay).
            self._check_unchanged(tree, [write])
            fd, name = tree.parent(write.rel)
            try:
                if write.new is None:
                    os.unlink(name, dir_fd=fd)
                else:
                    os.rename(split(temp_path(write.rel, batch))[1], name, src_dir_fd=fd, dst_dir_fd=fd)
            except FileNotFoundError as exc:  # the directory, with the temp file or the target, was removed
                raise DirectoryChanged(write.rel, split(write.rel)[0], missing=True) from exc
            except OSError as exc:  # named by the target: the temp file's name (``.c.py.mut_….cpl-tmp``) was
                raise OSError(exc.errno, exc.strerror, str(self.root / write.rel)) from exc
        dirs = {split(w.rel)[0] for w in ordered} | {split(d)[0] for d in created_dirs}
        list(self.executor.map(lambda d: os.fsync(tree.directory(d)), sorted(dirs)))
        for move in moves:
            git_index.record_move(self.root, move.src, move.dst)
        prefixes = cache_prefixes(self.root)
        for write in ordered:
            _drop_stale_bytecode(self.root, tree, write, prefixes)
        self._pause()

    def _roll_back(self, journal: Journal, batch: str, exc: BaseException) -> None:
        """Undo the failed batch in-process; 9001 (and no further batch) if even that fails."""
        log.warning("mutation batch failed; rolling back", batch=batch)
        try:
            journal.rollback()
        except Exception:
            # The journal stays for startup recovery, which will restore these originals: a later batch
            # on the same files would be clobbered by that, so no further batch may run.
            self.broken = batch
            log.exception("in-process rollback failed; refusing writes until restart", batch=batch)
            # The system call's own error says more here than the directory it was classified as.
            cause = exc.__cause__ if isinstance(exc, DirectoryChanged) and exc.__cause__ is not None else exc
            raise CodePlaneError(
                ErrorCode.INTERNAL_ERROR,
                f"write batch {batch} failed ({type(cause).__name__}: {cause}) and could not be rolled back; "
                "restart the server (`cpl down && cpl up`): startup recovery restores the files from the journal",
                details={"batch": batch}) from exc

    def _pause(self) -> None:
        if self.pause_s > 0:
            time.sleep(self.pause_s)

    def _check_unchanged(self, tree: ConfinedTree, writes: Sequence[FileWrite]) -> None:
        for write in writes:
            st = tree.lstat(write.rel)
            now = None if st is None else stat_key(st)
            if now != write.old_stat:
                raise CodePlaneError(
                    ErrorCode.MUTATION_PRECONDITION_FAILED,
                    f"{write.rel} changed on disk while the batch was being prepared; read it again and retry",
                    details={"path": write.rel, "reason": "changed during apply"},
                    retryable=True,
                )

    def _write_temp(self, tree: ConfinedTree, write: FileWrite, batch: str) -> None:
        assert write.new is not None
        directory, _ = tree.parent(write.rel)
        try:
            fd = os.open(split(temp_path(write.rel, batch))[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                         0o600, dir_fd=directory)
        except FileNotFoundError as exc:  # its directory was removed since its descriptor was opened
            raise DirectoryChanged(write.rel, split(write.rel)[0], missing=True) from exc
        try:
            view = memoryview(write.new)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, write.new_mode)
            os.fsync(fd)
        finally:
            os.close(fd)


def _storage(exc: OSError, doing: str) -> BaseException:
    """Disk full, quota, read-only or permission denied -> 5010-5012 with what to do; anything else as is."""
    mapped = storage_error(exc, doing=doing, outcome="nothing was changed (every file is as it was)")
    return mapped if mapped is not None else exc


def _drop_stale_bytecode(root: Path, tree: ConfinedTree, write: FileWrite, prefixes: Sequence[Path]) -> None:
    """After a same-size rewrite within the replaced version's second (``core.bytecode``)."""
    if write.old_stat is None or write.new is None or not write.rel.endswith(".py"):
        return
    try:
        st = tree.lstat(write.rel)
    except (OSError, DirectoryChanged):
        return
    if st is not None and indistinct(write.old_stat[1], write.old_stat[2], st.st_size, st.st_mtime_ns):
        drop_cached_bytecode(root / write.rel, prefixes)
