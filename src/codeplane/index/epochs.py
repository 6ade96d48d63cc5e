"""Publishing an epoch (spec §7.6): file rows, facts and the Tantivy commit change together.

Order, and why it is crash-safe:
1. ``meta.tantivy_inflight`` records (in its own small commit) every path whose Tantivy document is about
   to change, merged with any left over from an earlier attempt.
2. One SQLite transaction is opened; rows and every registered indexer's facts are written in it (indexers
   with ``EpochHooks`` are told where the epoch begins and ends), while the matching Tantivy deletes/adds
   are staged.
3. Tantivy commits (atomic on its own), then the SQLite transaction commits with the new epoch id, the
   Tantivy opstamp, and ``tantivy_inflight`` cleared.
A crash before 3 leaves SQLite at the old epoch and the marker set; the next publish (or the next start)
re-derives those documents from disk, so SQLite and Tantivy never stay apart. A failure before the
Tantivy commit rolls both back.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from codeplane.core.clock import monotonic, now_ms
from codeplane.core.collector import collector_paused
from codeplane.core.logging import get_logger
from codeplane.index.facts_api import EpochHooks, FactIndexer, FileChange
from codeplane.index.languages import family_of
from codeplane.index.lexical import LexicalIndex
from codeplane.index.reconcile import ChangeSet, Upsert
from codeplane.index.store import EPOCH_HISTORY, FileRecord, IndexStore, rollback
from codeplane.repo.content import FileContent, load_content

log = get_logger(__name__)

#: Files per chunk: contents in memory at once, and the granularity of progress and indexer calls.
CHUNK = 256
ALL = "*"

ProgressFn = Callable[[int, int], None]
#: Shared by every publish (the single writer), so at most this many files are read at once.
_READERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="codeplane-read")
#: Text a big epoch keeps queued for Tantivy until its commit (``LexicalIndex.defer``): all of a Django-sized
#: tree, so its lexical indexing runs beside the indexers' finishing work instead of beside extraction.
DEFER_CHARS = 64_000_000
#: SQLite's default ``wal_autocheckpoint`` (pages), restored after a big epoch's COMMIT.
_AUTOCHECKPOINT = 1000
#: Runs an epoch's Tantivy commit beside the indexers' finishing work.
_COMMITTER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="codeplane-tantivy-commit")
#: Reasons whose epoch leaves its WAL checkpoint to ``IndexPipeline.checkpoint`` (the indexer thread runs it, in the
#: background, once idle) instead of copying it back inside its COMMIT: a write tool's synchronous refresh answers
#: without that copy.
DEFERRED_CHECKPOINT = frozenset({"startup", "refresh"})


@dataclass(frozen=True)
class EpochSummary:
    epoch: int
    reason: str
    published_ms: int
    duration_ms: int
    added: int
    modified: int
    deleted: int
    touched: int
    renamed: tuple[tuple[str, str], ...]
    #: Paths whose disk content moved on while publishing; the caller marks them pending again.
    stale: tuple[str, ...] = ()


@dataclass
class Extras:
    """Work beyond the change set: full rebuilds after a schema change, repairs after a crash."""

    lexical_all: bool = False
    lexical_paths: set[str] = field(default_factory=set)
    #: Indexer names whose facts must be rebuilt for every text file.
    facts_all: set[str] = field(default_factory=set)


class EpochInterrupted(Exception):
    """The server is stopping: the epoch being written was rolled back (nothing of it is published)."""


def indexer_meta_key(indexer: FactIndexer) -> str:
    return f"indexer.{indexer.name}.schema"


def _chunks(items: Sequence[Upsert]) -> Iterator[Sequence[Upsert]]:
    for start in range(0, len(items), CHUNK):
        yield items[start:start + CHUNK]


class EpochPublisher:
    """Applies change sets; used only under the index service's writer lock."""

    def __init__(self, root: Path, store: IndexStore, lexical: LexicalIndex, indexers: Sequence[FactIndexer],
                 *, max_bytes: int) -> None:
        self._root = root
        self._store = store
        self._lexical = lexical
        self._indexers = indexers
        self._max_bytes = max_bytes
        #: An epoch committed without copying its WAL back into the database (``take_checkpoint``).
        self.checkpoint_due = False
        self._interrupted = threading.Event()
        #: Guards ``_in_epoch``: an interrupt may abort the epoch's statements, never its ROLLBACK or COMMIT.
        self._epoch_lock = threading.Lock()
        self._in_epoch = False
        #: The HEAD a full reconcile found, written with the next epoch's meta (same transaction: a first build
        #: writes straight into the file, and a row after it would start a WAL), then cleared.
        self.reconciled_head: str | None = None

    def interrupt(self) -> None:
        """Abandon the epoch being written, from another thread (the server is stopping; §7.6 all-or-nothing).

        A first build of a 100k-file tree spends minutes in one transaction, and a stop used to wait for all of it.
        The running SQL statement is aborted (``sqlite3.Connection.interrupt``) and the writer checks the flag
        between chunks, so the epoch raises :class:`EpochInterrupted` soon and rolls back; the next start redoes
        it. Later publishes refuse at once. Call it again while the writer runs: work between statements (a
        batch's extraction, Python-only steps) cannot be aborted from outside, only the next statement.
        """
        self._interrupted.set()
        with self._epoch_lock:
            if self._in_epoch:
                self._store.conn.interrupt()

    def _check_interrupted(self) -> None:
        if self._interrupted.is_set():
            raise EpochInterrupted("the index is stopping; the epoch was rolled back")

    def _leave_epoch(self) -> None:
        with self._epoch_lock:
            self._in_epoch = False

    def _load(self, upsert: Upsert) -> FileContent | None:
        if upsert.content is not None:
            return upsert.content
        return load_content(self._root / upsert.entry.path, is_symlink=upsert.entry.is_symlink,
                            max_bytes=self._max_bytes)

    def _inflight(self, changes: ChangeSet, extras: Extras) -> None:
        previous = self._store.get_json("tantivy_inflight", [])
        if previous == ALL or extras.lexical_all:
            extras.lexical_all = True
            marker: object = ALL
        else:
            extras.lexical_paths |= set(previous) if isinstance(previous, list) else set()
            marker = sorted(changes.paths() | extras.lexical_paths)
        self._store.set_meta("tantivy_inflight", json.dumps(marker))

    def publish(self, changes: ChangeSet, *, reason: str, extras: Extras | None = None,
                progress: ProgressFn | None = None) -> EpochSummary:
        started = monotonic()
        self._check_interrupted()
        extras = extras or Extras()
        self._inflight(changes, extras)
        big = len(changes.upserts) + len(changes.renamed) >= CHUNK
        epoch = self._store.epoch() + 1
        # A first build writes its pages once, straight into the file (``IndexStore.leave_wal``).
        direct = big and epoch == 1 and self._store.leave_wal()
        if not direct:
            self._store.ensure_wal()
        # A big epoch's batches of facts all stay alive until written: collecting meanwhile (0.25 s of a cold Django
        # build, all threads stopped) only walks them.
        try:
            with collector_paused() if big else contextlib.nullcontext():
                return self._publish(changes, epoch, reason, extras, progress, started=started, big=big,
                                     direct=direct)
        finally:
            if direct:  # never hiding the epoch's own failure; the next publish switches back if this could not
                with contextlib.suppress(sqlite3.Error):
                    self._store.ensure_wal()

    def _publish(self, changes: ChangeSet, epoch: int, reason: str, extras: Extras, progress: ProgressFn | None, *,
                 started: float, big: bool, direct: bool) -> EpochSummary:
        conn = self._store.conn
        conn.execute("BEGIN IMMEDIATE")
        with self._epoch_lock:
            self._in_epoch = True
        hooked = [i for i in self._indexers if isinstance(i, EpochHooks)]
        try:
            if big:
                self._lexical.defer(DEFER_CHARS)
            for hooks in hooked:
                hooks.begin_epoch(conn, epoch)
            stale = self._write(conn, epoch, changes, extras, progress)

            def finish() -> None:
                for hooks in hooked:
                    hooks.finish_epoch(conn, epoch)

            opstamp = self._commit_while(finish)
            self._leave_epoch()  # the work is done: a stop arriving now lets it commit
        except BaseException as exc:
            self._leave_epoch()
            rollback(conn)
            self._lexical.rollback()
            if self._interrupted.is_set() and isinstance(exc, sqlite3.OperationalError):
                raise EpochInterrupted("the index is stopping; the epoch was rolled back") from exc
            raise
        published = now_ms()
        duration = int((monotonic() - started) * 1000)
        # /ready waits for the startup reconcile's epoch, whose checkpoint (tens of MB of WAL for a clone a few hundred
        # files ahead of an index artifact) is left for the checkpoint too: the server runs it right after /ready.
        # So does a write tool waiting for its refresh (``DEFERRED_CHECKPOINT``): a 20-file edit of Django writes
        # ~1,100 pages, past the automatic checkpoint's 1,000, whose copy and fsync were ~10 % of the write.
        defer = (big or reason in DEFERRED_CHECKPOINT) and not direct  # (written straight into the file: no WAL)
        renamed = tuple((r.old.path, r.new.entry.path) for r in changes.renamed)
        try:
            self._store.set_meta("epoch", str(epoch), conn)
            self._store.set_meta("tantivy_opstamp", str(opstamp), conn)
            self._store.set_meta("tantivy_inflight", "[]", conn)
            if self.reconciled_head is not None:
                self._store.set_meta("reconciled_head", self.reconciled_head, conn)
            for indexer in self._indexers:
                self._store.set_meta(indexer_meta_key(indexer), str(indexer.schema_version), conn)
            conn.execute("INSERT INTO epochs(id, published_ms, reason, added, modified, deleted, renamed, "
                         "duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (epoch, published, reason, changes.added, changes.modified, len(changes.deleted),
                          len(renamed), duration))
            conn.execute("DELETE FROM epochs WHERE id <= ?", (epoch - EPOCH_HISTORY,))
            if defer:  # the checkpoint waits for ``take_checkpoint`` (after /ready), not inside this COMMIT
                conn.execute("PRAGMA wal_autocheckpoint=0")
            conn.execute("COMMIT")
        except BaseException:
            # Tantivy is already ahead; the inflight marker (still committed) makes the next publish repair it.
            rollback(conn)
            raise
        finally:
            if defer:  # never hide the failure above behind this one
                with contextlib.suppress(sqlite3.Error):
                    conn.execute(f"PRAGMA wal_autocheckpoint={_AUTOCHECKPOINT}")
        if defer:
            self.checkpoint_due = True
        return EpochSummary(epoch, reason, published, duration, changes.added, changes.modified,
                            len(changes.deleted), len(changes.touched), renamed, tuple(sorted(stale)))

    def _commit_while(self, finish: Callable[[], None]) -> int:
        """Run ``finish`` (the indexers' end of the epoch) and the Tantivy commit; returns the opstamp.

        The commit (for a big epoch, handing Tantivy the deferred writes, its thread indexing and flushing them;
        for any epoch, a new segment and its fsyncs: 30-60 ms, the bulk of a one-file write's refresh) runs in a
        thread, without the GIL, while this one links and indexes. Both still end before SQLite
        commits: if ``finish`` fails after Tantivy committed, the caller rolls SQLite back and the
        ``tantivy_inflight`` marker (committed first) makes the next publish or start re-derive those documents,
        as after a crash.
        """
        committing = _COMMITTER.submit(self._lexical.commit)
        try:
            finish()
        finally:
            opstamp = committing.result()  # never leave the commit running past a failure
        return opstamp

    def take_checkpoint(self) -> bool:
        """Whether an epoch left its WAL to copy back (it no longer does: the caller copies it now).

        A big epoch passes all it writes through the WAL (a first build does not: ``IndexStore.leave_wal``); the
        COMMIT's automatic checkpoint would copy it back before the epoch counts as published (0.6-0.9 s for all of
        Django), so a big epoch (and the startup's, and a write tool's refresh: ``DEFERRED_CHECKPOINT``) leaves it to
        ``IndexPipeline.checkpoint`` (``copy_wal_back``, then ``truncate_wal``), which the server runs once it is
        ready. Until then readers find the pages in the WAL; if nobody calls it, the next commit's automatic
        checkpoint (back on after every COMMIT) does the copy.
        """
        due, self.checkpoint_due = self.checkpoint_due, False
        return due

    def truncate_wal(self) -> None:
        """Copy what is left of the WAL back and give back its disk space (``_truncate_wal``)."""
        _truncate_wal(self._store.conn)

    def touch(self, changes: ChangeSet) -> None:
        """Record new stat data for files whose content did not change (no reindex, no new epoch)."""
        conn = self._store.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._write_touched(conn, changes)
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise

    @staticmethod
    def _write_touched(conn: sqlite3.Connection, changes: ChangeSet) -> None:
        for touched in changes.touched:
            e, c = touched.entry, touched.content
            conn.execute("UPDATE files SET size=?, mtime_ns=?, inode=?, file_sha256=? WHERE id=?",
                         (e.size, e.mtime_ns, e.inode, c.file_sha256, touched.record.id))

    # -- the transaction body ----------------------------------------------------------------------------
    def _write(self, conn: sqlite3.Connection, epoch: int, changes: ChangeSet, extras: Extras,
               progress: ProgressFn | None) -> set[str]:
        lexical = self._lexical
        if extras.lexical_all:
            lexical.delete_all()
        facts: list[FileChange] = []
        for record in changes.deleted:
            lexical.delete(record.path)
            conn.execute("DELETE FROM files WHERE id = ?", (record.id,))
            facts.append(FileChange(record.path, record.language, None, "", deleted=True))
        for rename in changes.renamed:
            lexical.delete(rename.old.path)
            facts.append(FileChange(rename.old.path, rename.old.language, None, "", deleted=True))
        self._write_touched(conn, changes)
        self._apply_facts(conn, facts, epoch, None)
        work = [*changes.upserts, *(r.new for r in changes.renamed)]
        written: set[str] = set()
        # A repair (a schema upgrade re-extracting every file) is most of a first start after an upgrade: minutes on
        # a monorepo, which progress must count as it counts the changed files.
        refill = self._refill_plan(conn, {u.entry.path for u in work} | {r.path for r in changes.deleted}, extras)
        total = len(work) + len(refill[1])
        done = 0
        for chunk in _chunks(work):
            self._check_interrupted()
            facts = []
            # Reading and hashing release the GIL: overlap them for big batches (cold build, checkout).
            contents = list(_READERS.map(self._load, chunk)) if len(chunk) > 8 else [self._load(u) for u in chunk]
            for upsert, content in zip(chunk, contents, strict=True):
                change = self._upsert(conn, epoch, upsert, content, extras.lexical_paths)
                if change is not None:
                    facts.append(change)
                written.add(upsert.entry.path)
            self._apply_facts(conn, facts, epoch, None)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
        return self._refill(conn, epoch, extras, refill, progress=progress, done=done, total=total)

    def _upsert(self, conn: sqlite3.Connection, epoch: int, upsert: Upsert, content: FileContent | None,
                repair: set[str]) -> FileChange | None:
        entry, previous = upsert.entry, upsert.previous
        if previous is not None or entry.path in repair:
            self._lexical.delete(entry.path)
        if content is None:
            # Vanished since the diff: drop what the index had; the watcher or the next reconcile agrees.
            if previous is None:
                return None
            self._lexical.delete(previous.path)
            conn.execute("DELETE FROM files WHERE id = ?", (previous.id,))
            return FileChange(previous.path, previous.language, None, "", deleted=True)
        language = family_of(entry.path)
        row = (entry.path, content.kind, language, entry.size, entry.mtime_ns, entry.inode, content.content_hash,
               content.file_sha256, content.line_count, epoch)
        if previous is not None:
            conn.execute("UPDATE files SET path=?, kind=?, language=?, size=?, mtime_ns=?, inode=?, content_hash=?, "
                         "file_sha256=?, line_count=?, indexed_epoch=? WHERE id=?", (*row, previous.id))
            file_id = previous.id
        else:
            cursor = conn.execute("INSERT INTO files(path, kind, language, size, mtime_ns, inode, content_hash, "
                                  "file_sha256, line_count, indexed_epoch) VALUES (?,?,?,?,?,?,?,?,?,?)", row)
            file_id = int(cursor.lastrowid or 0)
        if content.text is not None:
            self._lexical.add(file_id, entry.path, language, content.text)
        return FileChange(entry.path, language, content.text, content.file_sha256)

    def _apply_facts(self, conn: sqlite3.Connection, facts: list[FileChange], epoch: int,
                     only: set[str] | None) -> None:
        if not facts:
            return
        for indexer in self._indexers:
            if only is None or indexer.name in only:
                indexer.apply(conn, facts, epoch)

    def _refill_plan(self, conn: sqlite3.Connection, written: set[str],
                     extras: Extras) -> tuple[dict[str, FileRecord], list[str], set[str]]:
        """What a rebuild or repair re-derives: the files the change set does not write (the records, the paths to
        read again, the lexical paths to repair)."""
        lexical_paths = extras.lexical_paths - written
        if not (extras.lexical_all or lexical_paths or extras.facts_all):
            return {}, [], lexical_paths
        records = self._store.all_records(conn)
        # Facts hold every indexed file, a binary or oversized one too (its row, no text: ``map_repo`` lists it);
        # a rebuild that refilled text files only lost those for good (QA60).
        todo = sorted(p for p, r in records.items() if p not in written and (
            extras.facts_all or (r.kind == "text" and (extras.lexical_all or p in lexical_paths))))
        return records, todo, lexical_paths

    def _refill(self, conn: sqlite3.Connection, epoch: int, extras: Extras,
                plan: tuple[dict[str, FileRecord], list[str], set[str]], *, progress: ProgressFn | None,
                done: int, total: int) -> set[str]:
        """Re-derive documents/facts of files the change set did not touch (rebuilds and repairs)."""
        records, todo, lexical_paths = plan
        stale: set[str] = set()
        for path in sorted(lexical_paths):
            if path not in records:
                self._lexical.delete(path)
        for start in range(0, len(todo), CHUNK):
            self._check_interrupted()
            chunk = todo[start:start + CHUNK]
            readable = [p for p in chunk if records[p].kind == "text"]
            loaded = dict(zip(readable, _READERS.map(self._load_path, readable), strict=True))
            facts: list[FileChange] = []
            for path in chunk:
                record = records[path]
                if record.kind != "text":  # nothing to read: the fact row is the file's, as its upsert wrote it
                    facts.append(FileChange(path, record.language, None, record.file_sha256))
                    continue
                content = loaded[path]
                text = content.text if content is not None else None
                if content is None or content.content_hash != record.content_hash:
                    stale.add(path)
                if extras.lexical_all or path in lexical_paths:
                    self._lexical.delete(path)
                    if text is not None:
                        self._lexical.add(record.id, path, record.language, text)
                if extras.facts_all and text is not None:
                    facts.append(FileChange(path, record.language, text, record.file_sha256))
            self._apply_facts(conn, facts, epoch, extras.facts_all)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
        return stale

    def _load_path(self, path: str) -> FileContent | None:
        return load_content(self._root / path, is_symlink=False, max_bytes=self._max_bytes)


def _truncate_wal(conn: sqlite3.Connection) -> None:
    """Copy the WAL back and give back its disk space after a big epoch.

    One epoch is one transaction, so a big one (a checkout rewriting thousands of files; a first build when the
    store could not leave WAL mode, ``IndexStore.leave_wal``) passes all it writes through the WAL, and SQLite
    keeps the file at its largest size. Readers still on an older snapshot make
    it give up, which is harmless: the next commit's automatic checkpoint copies what it can, and the next
    big epoch tries to truncate again.
    """
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error as exc:
        log.info("wal_truncate_skipped", error=str(exc))


def copy_wal_back(index_db: Path) -> None:
    """Copy the WAL's committed pages into ``index_db`` on a connection of its own, without the writer lock.

    A passive checkpoint never waits for, nor blocks, the writer: an epoch (a checkout right after a cold build of a
    big tree, whose WAL holds the whole database: ~5 GB and tens of seconds of copying) commits meanwhile. What is
    left (what that epoch wrote) is copied when the caller truncates the WAL.
    """
    try:
        conn = sqlite3.connect(index_db, isolation_level=None, timeout=30)
    except sqlite3.Error as exc:
        log.info("wal_copy_back_skipped", error=str(exc))
        return
    try:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    except sqlite3.Error as exc:
        log.info("wal_copy_back_skipped", error=str(exc))
    finally:
        conn.close()


def stale_indexers(store: IndexStore, indexers: Sequence[FactIndexer]) -> set[str]:
    """Indexers whose recorded schema version differs (or is missing); their tables are recreated."""
    stale: set[str] = set()
    for indexer in indexers:
        if store.get_meta(indexer_meta_key(indexer)) != str(indexer.schema_version):
            stale.add(indexer.name)
    return stale


def prepare_indexers(store: IndexStore, indexers: Sequence[FactIndexer], stale: set[str]) -> None:
    """Drop and recreate stale indexers' tables; create the others' if missing (idempotent)."""
    conn = store.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        for indexer in indexers:
            if indexer.name in stale:
                indexer.drop_schema(conn)
            indexer.create_schema(conn)
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
