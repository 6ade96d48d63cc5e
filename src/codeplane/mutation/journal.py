"""The undo journal that makes a batch crash-safe (DECISIONS D8).

Layout: ``.codeplane/journal/<batch>/originals.bin`` (the original bytes of every target, concatenated)
and ``manifest.json`` (per target: path, whether it existed, its slice of ``originals.bin`` and that slice's
SHA-256, its mode, the temp file the batch writes for it; plus directories the batch creates and git index moves).
A rollback checks every slice first: a damaged ``originals.bin`` restores nothing (at startup: 9001 naming it).

Protocol: ``originals.bin`` is written and fsynced, then the manifest is written to a temp name,
fsynced and renamed into place, then the batch and journal directories are fsynced. Only after that
does the batch create temp files or replace anything. So:

- no ``manifest.json``  → nothing was replaced and no temp file exists: the directory is just removed;
- ``manifest.json``     → the batch may be anywhere between its first temp file and its last replace:
  :meth:`Journal.rollback` restores every original the batch replaced, removes every temp and created file, and
  undoes the index moves. Rollback is idempotent, so a crash *during* recovery is recovered on the next start.

A target is restored only if it still holds what the batch put there (the manifest keeps the SHA-256 of each new
content; a deleted target is still absent): one the batch had not reached yet holds its original already, and one
another program changed since — an edit made after a crash, before the restart that recovers it, or during the
batch — holds that program's bytes, which a rollback must not overwrite with older ones.

The journal is discarded only after every replace is durable: it is first renamed to
``<batch>.retired`` (atomic, fsynced: from here on the batch counts as done), then deleted; startup deletes
any retired leftovers without looking inside.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass
from pathlib import Path

from codeplane.core.atomic import fsync_dir
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.mutation import git_index
from codeplane.mutation.confined import ConfinedTree, DirectoryChanged, split
from codeplane.repo.ignore import TRANSIENT_SUFFIXES

log = get_logger(__name__)

_VERSION = 3
#: Version 1 journals have no ``written``: their targets are restored unconditionally; versions 1 and 2 have no
#: ``original``: their originals are restored unchecked.
_READABLE = (1, 2, 3)
MANIFEST = "manifest.json"
ORIGINALS = "originals.bin"
TEMP_SUFFIX, RESTORE_SUFFIX = TRANSIENT_SUFFIXES
#: A journal renamed with this suffix is finished and only awaits deletion.
RETIRED_SUFFIX = ".retired"


def temp_path(rel: str, batch: str, suffix: str = TEMP_SUFFIX) -> str:
    """The sibling temp file a batch writes for ``rel`` (same directory, so ``os.replace`` is atomic)."""
    head, _, name = rel.rpartition("/")
    temp = f".{name}.{batch[:12]}{suffix}"
    return f"{head}/{temp}" if head else temp


@dataclass(frozen=True)
class JournalEntry:
    path: str
    existed: bool
    offset: int
    length: int
    mode: int
    #: The temp file this batch writes for ``path`` (``None`` for a deletion).
    temp: str | None
    #: What the batch puts at ``path``: the SHA-256 of the new bytes, ``""`` for a deletion (``None``: not known).
    written: str | None = None
    #: The SHA-256 of the original bytes (``None``: a target that did not exist, or an older journal).
    original: str | None = None


@dataclass(frozen=True)
class JournalMove:
    src: str
    dst: str


@dataclass(frozen=True)
class Original:
    """What the journal must be able to restore for one target."""

    path: str
    data: bytes | None
    mode: int
    temp: str | None
    #: As :attr:`JournalEntry.written`.
    written: str | None = None


def _write_synced(path: Path, chunks: Sequence[bytes]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    def __init__(self, root: Path, directory: Path, entries: Sequence[JournalEntry],
                 created_dirs: Sequence[str], moves: Sequence[JournalMove]) -> None:
        self.root = root
        self.directory = directory
        self.entries = tuple(entries)
        self.created_dirs = tuple(created_dirs)
        self.moves = tuple(moves)

    @classmethod
    def write(cls, root: Path, journal_dir: Path, batch: str, originals: Sequence[Original], *,
              created_dirs: Sequence[str], moves: Sequence[JournalMove], executor: Executor | None = None) -> Journal:
        """Write the journal durably; returns once a crash from here on can be rolled back.

        With an ``executor`` the two files, then the two directories, are fsynced in parallel (the
        ordering that matters, both files durable before the manifest's rename, is kept)."""
        run = executor.map if executor is not None else map
        directory = journal_dir / batch
        if os.path.lexists(journal_dir) and not journal_dir.is_dir():
            # A journal is a directory: a file (or a dangling link) in its place holds no batch, and blocked every
            # write with FileExistsError. It is damage, replaced as the lock directory's is.
            log.warning("a file stood where the journal directory belongs; replacing it", path=str(journal_dir))
            journal_dir.unlink()
        journal_dir.mkdir(parents=True, exist_ok=True)
        directory.mkdir()
        entries: list[JournalEntry] = []
        blobs: list[bytes] = []
        offset = 0
        for item in originals:
            size = len(item.data) if item.data is not None else 0
            entries.append(JournalEntry(item.path, item.data is not None, offset, size, item.mode, item.temp,
                                        item.written, hashlib.sha256(item.data).hexdigest()
                                        if item.data is not None else None))
            if item.data is not None:
                blobs.append(item.data)
            offset += size
        manifest = {"version": _VERSION, "batch": batch, "entries": [asdict(e) for e in entries],
                    "created_dirs": list(created_dirs), "moves": [asdict(m) for m in moves]}
        staging = directory / (MANIFEST + ".tmp")
        files = [(directory / ORIGINALS, blobs), (staging, [json.dumps(manifest, sort_keys=True).encode("utf-8")])]
        list(run(lambda item: _write_synced(*item), files))
        os.replace(staging, directory / MANIFEST)
        list(run(fsync_dir, [directory, journal_dir]))
        return cls(root, directory, entries, created_dirs, moves)

    @classmethod
    def load(cls, root: Path, directory: Path) -> Journal | None:
        """The journal in ``directory``; ``None`` if its manifest was never committed."""
        try:
            manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        if manifest.get("version") not in _READABLE:
            raise ValueError(f"journal {directory} has unknown version {manifest.get('version')!r}")
        return cls(root, directory, [JournalEntry(**e) for e in manifest["entries"]],
                   manifest["created_dirs"], [JournalMove(**m) for m in manifest["moves"]])

    def discard(self) -> None:
        """Forget the batch (it is complete, or fully rolled back).

        One atomic rename retires the journal before anything in it is deleted: deleting in place could
        be interrupted with the manifest still there but its originals gone.
        """
        retired = self.directory.with_name(self.directory.name + RETIRED_SUFFIX)
        os.rename(self.directory, retired)
        fsync_dir(self.directory.parent)
        shutil.rmtree(retired, ignore_errors=True)

    def rollback(self) -> list[str]:
        """Put every target the batch changed back as it was before, then discard the journal. Returns the
        targets left as they are because another program changed them since (their bytes are newer), or changed
        a directory above them (a symlink or nothing stands there now).

        Like the commit, it works through directory descriptors (``confined.py``): restoring by full path
        through a directory swapped for a symlink would write the original outside the repository."""
        originals = (self.directory / ORIGINALS).read_bytes()
        self._check_originals(originals)
        touched_dirs: set[str] = set()
        batch = self.directory.name
        kept: list[str] = []
        with ConfinedTree(self.root) as tree:
            for entry in self.entries:
                try:
                    if not _roll_back_entry(tree, entry, originals[entry.offset:entry.offset + entry.length], batch):
                        kept.append(entry.path)
                    touched_dirs.add(split(entry.path)[0])
                except (DirectoryChanged, FileNotFoundError) as exc:
                    # Its directory was replaced or removed (FileNotFoundError: while open): nothing the batch wrote
                    # is reachable there any more, and a file that did not exist has nothing to put back.
                    if entry.existed or (isinstance(exc, DirectoryChanged) and not exc.missing):
                        kept.append(entry.path)
            for move in self.moves:
                git_index.undo_move(self.root, move.src, move.dst)
            for rel in sorted(self.created_dirs, key=lambda d: d.count("/"), reverse=True):
                try:
                    tree.rmdir(rel)
                    touched_dirs.add(split(rel)[0])
                except (OSError, DirectoryChanged):
                    pass  # not empty or already gone: someone else's files live there now
            for rel_dir in sorted(touched_dirs):
                try:
                    os.fsync(tree.directory(rel_dir))
                except DirectoryChanged:
                    pass  # a directory the batch created, removed above
        if kept:
            log.warning("rollback kept files another program changed since the batch", batch=batch, paths=kept)
        self.discard()
        return kept

    def _check_originals(self, originals: bytes) -> None:
        """Every original intact before any is restored: a damaged ``originals.bin`` (truncated, overwritten) was
        written into the work tree as the files' old content. Raises ``ValueError`` naming the first bad one (at
        startup: 9001 naming the journal, which stays for the user to look at)."""
        for entry in self.entries:
            if entry.original is None:
                continue
            data = originals[entry.offset:entry.offset + entry.length]
            if len(data) != entry.length or hashlib.sha256(data).hexdigest() != entry.original:
                raise ValueError(f"the journal's copy of {entry.path}'s original is damaged ({ORIGINALS} does not "
                                 "hold the bytes its manifest names); nothing was restored")


def _roll_back_entry(tree: ConfinedTree, entry: JournalEntry, original: bytes, batch: str) -> bool:
    """Restore one target; ``False`` when it is kept as another program left it."""
    directory, name = tree.parent(entry.path)
    for leftover in (entry.temp, temp_path(entry.path, batch, RESTORE_SUFFIX)):
        if leftover:
            _unlink(directory, split(leftover)[1])
    if not _holds_batch_bytes(tree, entry.path, entry.written):
        # Not reached by the batch (the original is there, or nothing was), or changed since: kept.
        if entry.existed:
            return tree.read(entry.path) == original
        st = tree.lstat(entry.path)
        return st is None or stat.S_ISDIR(st.st_mode)
    if entry.existed:
        _restore(tree, entry.path, original, entry.mode, split(temp_path(entry.path, batch, RESTORE_SUFFIX))[1])
    else:
        st = tree.lstat(entry.path)
        if st is not None and not stat.S_ISDIR(st.st_mode):  # a directory there is not the batch's file
            _unlink(directory, name)
    return True


def _holds_batch_bytes(tree: ConfinedTree, rel: str, written: str | None) -> bool:
    """Whether ``rel`` is as the batch left it: its new bytes (by SHA-256), or absent for a deletion;
    unknown (a version 1 journal) counts as yes."""
    if written is None:
        return True
    if written == "":
        return tree.lstat(rel) is None
    data = tree.read(rel)
    return data is not None and hashlib.sha256(data).hexdigest() == written


def _unlink(directory: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=directory)
    except FileNotFoundError:
        pass


def _restore(tree: ConfinedTree, rel: str, data: bytes, mode: int, staging: str) -> None:
    st = tree.lstat(rel)
    if (st is not None and stat.S_ISREG(st.st_mode) and st.st_size == len(data)
            and stat.S_IMODE(st.st_mode) == mode and tree.read(rel) == data):
        return
    directory, name = tree.parent(rel)
    _unlink(directory, staging)
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=directory)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(staging, name, src_dir_fd=directory, dst_dir_fd=directory)


def recover(root: Path, journal_dir: Path) -> list[str]:
    """Roll back every unfinished batch (run at startup, before anything reads the work tree).

    Returns the batch ids rolled back. A journal whose manifest was never committed, or that was already
    retired, is simply removed. Raises 9001 naming the batch if a rollback fails (the journal stays, so
    the next start retries); serving a half-applied batch would be worse than not starting.
    """
    if not journal_dir.is_dir():
        return []
    rolled: list[str] = []
    for directory in sorted(p for p in journal_dir.iterdir() if p.is_dir()):
        try:
            journal = None if directory.name.endswith(RETIRED_SUFFIX) else Journal.load(root, directory)
            if journal is None:
                shutil.rmtree(directory, ignore_errors=True)
                fsync_dir(journal_dir)
                continue
            log.warning("rolling back an unfinished mutation batch", batch=directory.name,
                        files=len(journal.entries))
            journal.rollback()
        except Exception as exc:
            raise CodePlaneError(
                ErrorCode.INTERNAL_ERROR,
                f"cannot roll back the unfinished write batch in {directory} ({type(exc).__name__}: {exc}); "
                "fix the cause (permissions, a stale .git/index.lock) and start again, or delete that "
                "directory to keep the work tree as it is",
                details={"journal": str(directory)},
            ) from exc
        rolled.append(directory.name)
    return rolled
