"""Putting a planned batch on disk: all of it or none of it (spec §9.2, §9.6, DECISIONS D8).

Order, for a batch whose every precondition already passed and whose targets are locked:

1. write the journal (originals, the new contents' hashes, manifest) durably;
2. check no target changed behind our back since it was read (5002: the journal is dropped, nothing was
   replaced, so there is nothing to roll back), and again just before each target's replace in step 4 (5002:
   the targets replaced so far are rolled back, the changed one keeps the other program's bytes);
3. create missing parent directories, then write every new content to a sibling temp file, set its mode,
   fsync (in parallel: fsync latency dominates);
4. ``os.replace`` each temp over its target (or unlink a deleted target), in path order;
5. fsync every touched directory, so the replaces are durable;
6. update git's index for ``git mv``-style moves; drop the cached bytecode of a same-size rewrite of a
   ``.py`` file within the replaced version's second (``core.bytecode``; never raises);
7. discard the journal.

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
from codeplane.core.atomic import fsync_dir
from codeplane.core.bytecode import cache_prefixes, drop_cached_bytecode, indistinct
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.core.storage import storage_error
from codeplane.mutation import git_index
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
        try:
            journal = Journal.write(self.root, self.journal_dir, batch, originals, created_dirs=created_dirs,
                                    moves=moves, executor=self.executor)
        except OSError as exc:
            # Nothing in the work tree was touched yet, so the partial journal is simply dropped.
            shutil.rmtree(self.journal_dir / batch, ignore_errors=True)
            raise _storage(exc, "writing the batch's journal") from exc
        try:
            self._check_unchanged(ordered)
        except CodePlaneError:
            journal.discard()  # nothing was replaced: another program's newer bytes stay as they are
            raise
        try:
            for rel in created_dirs:
                (self.root / rel).mkdir(exist_ok=True)
            list(self.executor.map(lambda w: self._write_temp(w, batch), [w for w in ordered if w.new is not None]))
            for write in ordered:
                self._pause()
                # Again at its replace: writing and fsyncing the temp files takes long, and an editor saving a
                # target meanwhile would lose its edit (5002 rolls back what was replaced; its bytes stay).
                self._check_unchanged([write])
                target = self.root / write.rel
                try:
                    if write.new is None:
                        target.unlink()
                    else:
                        os.replace(self.root / temp_path(write.rel, batch), target)
                except OSError as exc:  # named by the target: the temp file's name (``.c.py.mut_….cpl-tmp``) was
                    raise OSError(exc.errno, exc.strerror, str(target)) from exc
            dirs = {(self.root / w.rel).parent for w in ordered}
            dirs |= {(self.root / d).parent for d in created_dirs}
            list(self.executor.map(fsync_dir, sorted(dirs)))
            for move in moves:
                git_index.record_move(self.root, move.src, move.dst)
            prefixes = cache_prefixes(self.root)
            for write in ordered:
                _drop_stale_bytecode(self.root, write, prefixes)
            self._pause()
        except BaseException as exc:
            log.warning("mutation batch failed; rolling back", batch=batch)
            try:
                journal.rollback()
            except Exception:
                # The journal stays for startup recovery, which will restore these originals: a later batch
                # on the same files would be clobbered by that, so no further batch may run.
                self.broken = batch
                log.exception("in-process rollback failed; refusing writes until restart", batch=batch)
            if self.broken == batch:
                raise CodePlaneError(
                    ErrorCode.INTERNAL_ERROR,
                    f"write batch {batch} failed ({type(exc).__name__}: {exc}) and could not be rolled back; "
                    "restart the server (`cpl down && cpl up`): startup recovery restores the files from the journal",
                    details={"batch": batch}) from exc
            if isinstance(exc, OSError):
                raise _storage(exc, "writing the batch") from exc
            raise
        journal.discard()
        # Applied and durable: until the call's ledger row is written, a kill must not leave it unrecorded.
        unanswered.note(self.journal_dir.parent, batch, [w.rel for w in ordered])

    def _pause(self) -> None:
        if self.pause_s > 0:
            time.sleep(self.pause_s)

    def _check_unchanged(self, writes: Sequence[FileWrite]) -> None:
        for write in writes:
            try:
                now = stat_key((self.root / write.rel).lstat())
            except FileNotFoundError:
                now = None
            if now != write.old_stat:
                raise CodePlaneError(
                    ErrorCode.MUTATION_PRECONDITION_FAILED,
                    f"{write.rel} changed on disk while the batch was being prepared; read it again and retry",
                    details={"path": write.rel, "reason": "changed during apply"},
                    retryable=True,
                )

    def _write_temp(self, write: FileWrite, batch: str) -> None:
        assert write.new is not None
        temp = self.root / temp_path(write.rel, batch)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
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


def _drop_stale_bytecode(root: Path, write: FileWrite, prefixes: Sequence[Path]) -> None:
    """After a same-size rewrite within the replaced version's second (``core.bytecode``)."""
    if write.old_stat is None or write.new is None or not write.rel.endswith(".py"):
        return
    path = root / write.rel
    try:
        st = path.lstat()
    except OSError:
        return
    if indistinct(write.old_stat[1], write.old_stat[2], st.st_size, st.st_mtime_ns):
        drop_cached_bytecode(path, prefixes)
