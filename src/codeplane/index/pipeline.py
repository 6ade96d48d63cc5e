"""The single writer: opens and repairs the stores, reconciles, refreshes paths, publishes epochs.

Every write to ``index.db`` and Tantivy happens here under one lock, from whichever thread asks
(the background indexer, a write tool's synchronous refresh, a git operation's reconcile).
Startup repairs (§4.2 playbook, §7.6): a Tantivy index that is corrupt, of another schema version, or
whose last commit does not match what SQLite recorded is refilled from disk; an indexer whose schema
version changed has its tables dropped and refilled. Repairs ride along with the next publish and are
kept until one succeeds.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from codeplane.core.bytecode import cache_prefixes, drop_cached_bytecode
from codeplane.core.clock import monotonic, now_ms
from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.core.logging import get_logger
from codeplane.core.tracing import span
from codeplane.index import progress as build_progress
from codeplane.index import walk_apart
from codeplane.index.artifact_restat import STAT_REFERENCE_KEY
from codeplane.index.epochs import (
    CHUNK,
    EpochPublisher,
    EpochSummary,
    Extras,
    ProgressFn,
    copy_wal_back,
    indexer_meta_key,
    prepare_indexers,
    stale_indexers,
)
from codeplane.index.facts_api import FactIndexer
from codeplane.index.freshness import BURST_PATHS, PendingChanges, PendingWork
from codeplane.index.languages import DATA_FAMILIES
from codeplane.index.lexical import LexicalIndex
from codeplane.index.reconcile import ChangeSet, diff, racy_after, unsettled
from codeplane.index.status_view import SchemaChange
from codeplane.index.store import IndexStore, racy_paths
from codeplane.index.walk_apart import EarlyWalk, WalkDelta, delta_apart, delta_in_process
from codeplane.repo.content import head_is_binary
from codeplane.repo.ignore import IgnoreRules
from codeplane.repo.universe import DiskEntry, walk_paths, walk_universe
from codeplane.repo.version import RepoVersion, read_repo_version

log = get_logger(__name__)


#: The version of ``repo.content``'s rules the file table was classified by (2: a UTF-16 mark; 3: a lone CR is no
#: line break in the change hash).
CONTENT_RULES_KEY = "content_rules"
CONTENT_RULES = "3"
#: The first rules whose change hash keeps a lone CR: a text row hashed by older ones is read again once.
_LONE_CR_RULES = 3
#: The ``index.max_file_bytes`` the file table was classified by (text/binary vs oversized).
MAX_FILE_BYTES_KEY = "max_file_bytes"


@runtime_checkable
class Prewarm(Protocol):
    """An indexer that can get ready for a big first build while the tree is walked (``reconcile``)."""

    def prewarm(self, total_bytes: int) -> None:
        """``total_bytes``: the size of every file about to be indexed (text or not, a hint of the work)."""


@dataclass(frozen=True)
class ReconcileReport:
    at_ms: int
    duration_ms: int
    reason: str
    full: bool
    added: int
    modified: int
    deleted: int
    renamed: tuple[tuple[str, str], ...]
    touched: int
    epoch: int


@dataclass(frozen=True)
class IndexCounts:
    files: int
    text: int
    binary: int
    oversized: int
    symlink: int
    bytes: int
    languages: dict[str, int]

    @property
    def primary_language(self) -> str | None:
        """The code family with the most files (ties by name); a data family only if there is no code."""
        code = {k: v for k, v in self.languages.items() if k not in DATA_FAMILIES}
        pool = code or self.languages
        return min(pool, key=lambda k: (-pool[k], k)) if pool else None


class IndexPipeline:
    def __init__(self, root: Path, layout: RepoLayout, config: IndexConfig, pending: PendingChanges) -> None:
        self.root = root
        self.layout = layout
        self.config = config
        self.pending = pending
        self.lock = threading.RLock()
        self.store = IndexStore(layout.index_db, trust_clean_close=True)
        self.lexical = LexicalIndex(layout.tantivy_dir)
        self.indexers: list[FactIndexer] = []
        self.rules = IgnoreRules.load(root)
        #: The repository version (HEAD, ...) of the reconcile under way or last done: what the watcher compares with.
        self.version: RepoVersion | None = None
        #: The version the index serves: set once a reconcile's epoch is published (``/status``'s ``head``, drift).
        self.published_version: RepoVersion | None = None
        self.epoch = 0
        self.warnings: list[str] = []
        #: The last full reconcile (its duration paces polling without a watcher).
        self.last_reconcile: ReconcileReport | None = None
        #: The last reconcile or refresh of paths (the watcher's, a write's): when the index last met the disk.
        self.last_update: ReconcileReport | None = None
        self.last_epoch: EpochSummary | None = None
        #: Told of every reconcile/refresh (and the epoch it published, if any): the server's metrics.
        self.listeners: list[Callable[[ReconcileReport, EpochSummary | None], None]] = []
        self.counts = IndexCounts(0, 0, 0, 0, 0, 0, {})
        #: Entries the last full walk left out because their name is not valid UTF-8 (shown with ``\xNN``).
        self.unnamed: tuple[str, ...] = ()
        self._repair = Extras()
        self._publisher: EpochPublisher | None = None
        self._copier: threading.Thread | None = None
        #: A walk begun before the table existed (an artifact's adoption), for the next full reconcile.
        self.early_walk: EarlyWalk | None = None
        self.opened = False

    # -- open / close ------------------------------------------------------------------------------------
    def open(self) -> None:
        with self.lock:
            self.store.open()
            try:
                self.lexical.open()
            except BaseException:
                self.store.close()
                raise
            repair = Extras()
            if self.store.rebuilt_reason:
                self.warnings.append(f"index.db was rebuilt: {self.store.rebuilt_reason}")
            if self.lexical.rebuilt_reason:
                self.warnings.append(f"Tantivy index was rebuilt: {self.lexical.rebuilt_reason}")
                repair.lexical_all = True
            recorded = int(self.store.get_meta("tantivy_opstamp") or 0)
            inflight = self.store.get_json("tantivy_inflight", [])
            if recorded != self.lexical.opened_opstamp and not inflight and not repair.lexical_all:
                self.warnings.append("Tantivy and index.db disagreed (last commits differ); refilling Tantivy")
                repair.lexical_all = True
            self._recheck_binary_rows()
            self._recheck_size_limit()
            self._refresh_counts()
            # A directory deleted under a running writer comes back with the few documents written since: its
            # opstamp may agree, and an inflight marker names only those. One document per text file, else all.
            documents = self.lexical.num_docs()
            if abs(documents - self.counts.text) > len(inflight if isinstance(inflight, list) else ()) \
                    and not repair.lexical_all:
                self.warnings.append(f"Tantivy holds {documents} documents for {self.counts.text} text files; "
                                     "refilling Tantivy")
                repair.lexical_all = True
            stale = stale_indexers(self.store, self.indexers)
            self._say_refilled(stale)
            prepare_indexers(self.store, self.indexers, stale)
            repair.facts_all = stale
            self._repair = repair
            self._publisher = EpochPublisher(self.root, self.store, self.lexical, self.indexers,
                                             max_bytes=self.config.max_file_bytes)
            self.epoch = self.store.epoch()
            self.opened = True
            for warning in self.warnings:
                log.warning(warning)

    def _say_refilled(self, stale: set[str]) -> None:
        """A warning per indexer whose tables another version built, as the Tantivy rebuild has one: the refill reads
        and extracts every text file again (minutes on a big tree), and the log, the terminal and ``/status`` said
        nothing of it. A first build (no version recorded, no text files yet) is no refill."""
        for indexer in self.indexers:
            recorded = self.store.get_meta(indexer_meta_key(indexer))
            if indexer.name in stale and (recorded is not None or self.counts.text):
                change = SchemaChange(indexer.name, recorded or "none", indexer.schema_version)
                self.warnings.append(change.refilling())

    def _recheck_binary_rows(self) -> None:
        """Rows classified by older content rules get a stat no file has, once, when those rules changed (a
        UTF-16 file with a mark was binary until rules 2; every text row until rules 3, see ``reconcile``): the next
        reconcile reads them again and reindexes those that are text now, or whose lines changed. A stat-trusting
        reconcile would otherwise keep them as they were until edited."""
        store = self.store
        previous = store.get_meta(CONTENT_RULES_KEY)
        if previous == CONTENT_RULES:
            return
        rows = [path for (path,) in store.conn.execute("SELECT path FROM files WHERE kind = 'binary'")]
        now_text = [(path,) for path in rows if head_is_binary(self.root / path) is False]  # unreadable: as it was
        with store.conn:  # one transaction: both or neither, so an interrupted open does it again
            store.conn.execute("BEGIN")
            store.conn.executemany("UPDATE files SET mtime_ns = -1 WHERE path = ?", now_text)
            if previous is not None and previous.isdigit() and int(previous) < _LONE_CR_RULES:
                # A lone CR turned LF was taken for a line-ending flip and never reindexed: such a row still has
                # its old lines. Hashed again (no new epoch unless the text differs), its line count gives it away.
                # No rules at all is a new table or an adopted artifact (its export drops them): git vouches.
                store.conn.execute("UPDATE files SET mtime_ns = -1 WHERE kind = 'text'")
            store.set_meta(CONTENT_RULES_KEY, CONTENT_RULES)
        if now_text:
            log.info("index.reclassify", files=len(now_text), rules=CONTENT_RULES)

    def _recheck_size_limit(self) -> None:
        """When ``index.max_file_bytes`` changed since the table was classified, the rows whose size lies between
        the old and the new limit get a stat no file has (as :meth:`_recheck_binary_rows` does), so the next
        reconcile reads them again: an oversized row now under the limit is indexed, a text or binary row now over
        it becomes oversized, as a cold index of the same tree and config has them. The stat-trusting reconcile
        would otherwise keep each row's old kind until the file is edited. Selected by size in SQL, whatever the
        old limit was: only the files that cross it are read again."""
        store, limit = self.store, self.config.max_file_bytes
        if store.get_meta(MAX_FILE_BYTES_KEY) == str(limit):
            return
        with store.conn:  # one transaction: both or neither, so an interrupted open does it again
            store.conn.execute("BEGIN")
            crossed = store.conn.execute(
                "UPDATE files SET mtime_ns = -1 WHERE (kind = 'oversized' AND size <= ?)"
                " OR (kind IN ('text', 'binary') AND size > ?)", (limit, limit)).rowcount
            store.set_meta(MAX_FILE_BYTES_KEY, str(limit))
        if crossed:
            log.info("index.reclassify", files=crossed, max_file_bytes=limit)

    def interrupt(self) -> None:
        """Abandon the epoch being written, without waiting for the writer lock (``EpochPublisher.interrupt``)."""
        publisher = self._publisher
        if publisher is not None:
            publisher.interrupt()

    def close(self) -> None:
        early, self.early_walk = self.early_walk, None
        if early is not None:
            early.cancel()
        copier, self._copier = self._copier, None
        if copier is not None:  # before the store's own checkpoint, which it would find busy
            copier.join()
        with self.lock:
            self.opened = False
            self.lexical.close()
            self.store.close()

    # -- writes ----------------------------------------------------------------------------------------
    def reload_rules(self) -> bool:
        """Re-read ``.cplignore``; True if the rules changed (the universe must be re-evaluated)."""
        rules = IgnoreRules.load(self.root)
        changed = rules.source_text != self.rules.source_text
        self.rules = rules
        return changed

    def reconcile(self, reason: str, progress: ProgressFn | None = None, *,
                  walked_apart: tuple[IgnoreRules, Future[WalkDelta | None]] | None = None) -> ReconcileReport:
        """Full reconcile: walk the universe, diff against the file table, publish if anything changed.

        The walk (one stat per file: ≈170 ms on Django, seconds on a monorepo) runs before taking the writer
        lock, so a write tool's refresh never waits for it; under the lock, every path where the walk and
        the index disagree is stat'ed again (``unsettled``), so a write that landed meanwhile is seen as it
        is now, not as the walk saw it.
        """
        started = monotonic()
        tracker = build_progress.begin(self.root, reason)

        def report(done: int, total: int) -> None:
            tracker.update(done, total)
            if progress is not None:
                progress(done, total)

        early, self.early_walk = self.early_walk, None
        completed = False
        try:
            rules = IgnoreRules.load(self.root)
            reference = int(self.store.get_meta(STAT_REFERENCE_KEY) or 0)
            walked: dict[str, DiskEntry] = {}
            unnamed: list[str] = []
            apart: WalkDelta | None = None
            if early is not None and (walked_apart is not None or early.rules_text != rules.source_text):
                early.cancel()  # (.cplignore changed since it began)
                early = None
            with span("index.walk"):
                # The racy threshold is taken before the diff takes its own: the delta holds every row it re-hashes.
                if early is not None:
                    apart = early.delta(self.store.path, racy_after(reference))
                elif walked_apart is not None and walked_apart[0].source_text == rules.source_text:
                    apart = walked_apart[1].result()
                elif self.counts.files >= walk_apart.APART_FROM_FILES:  # (or .cplignore changed since it began)
                    apart = delta_apart(self.root, rules, self.store.path, racy_after(reference))
                if apart is None:
                    walked = {e.path: e for e in walk_universe(self.root, rules, unnamed)}
            if self.counts.files == 0:  # a first build: let indexers start what it will need (extraction workers)
                size = sum(e.size for e in walked.values() if not e.is_symlink)
                for indexer in self.indexers:
                    if isinstance(indexer, Prewarm):
                        indexer.prewarm(size)
            with self.lock, span("index.reconcile", reason=reason):
                self.rules = rules
                self.version = read_repo_version(self.root)
                # Only where the table and the walk disagree, or a row is racy, can the diff find a change.
                delta = delta_in_process(walked, self.store.conn, racy_after(reference), unnamed) \
                    if apart is None else WalkDelta(apart.scope | racy_paths(self.store.conn, racy_after(reference)),
                                                    apart.entries, apart.unnamed)
                self.unnamed = delta.unnamed
                records = self.store.records_at(delta.scope)
                suspects = unsettled(records, delta.entries)
                disk = {path: entry for path, entry in delta.entries.items() if path not in suspects}
                disk.update(walk_paths(self.root, sorted(suspects), rules))
                changes = diff(self.root, records, disk, max_bytes=self.config.max_file_bytes,
                               stat_reference_ns=reference)
                # The commit the tree was reconciled at, for `cpl status`/`cpl doctor` while no server runs: with
                # the epoch this publishes, else alone when it moved (an idle `cpl init` leaves index.db untouched).
                head = self.version.head or ""
                moved = self.store.get_meta("reconciled_head") != head
                if self._publisher is not None and moved:
                    self._publisher.reconciled_head = head
                try:
                    done = self._finish(changes, reason, started, full=True, progress=report)
                finally:
                    if self._publisher is not None:
                        self._publisher.reconciled_head = None
                if moved and self.store.get_meta("reconciled_head") != head:
                    self.store.set_meta("reconciled_head", head)
                self.published_version = self.version
                completed = True
                return done
        finally:
            build_progress.end(self.root, tracker, finished=completed)

    def differing_now(self) -> set[str]:
        """The universe paths whose file and row may disagree (changed, added, gone, or racy), by a walk now and
        nothing applied: what a watcher that was not yet watching may have missed (``IndexService``).
        Big trees walk in a child (``walk_apart``), as a full reconcile does."""
        with self.lock:
            rules = self.rules
            racy_from = racy_after(int(self.store.get_meta(STAT_REFERENCE_KEY) or 0))
            big = self.counts.files >= walk_apart.APART_FROM_FILES
        if big and (apart := delta_apart(self.root, rules, self.store.path, racy_from)) is not None:
            return apart.scope
        walked = {e.path: e for e in walk_universe(self.root, rules)}
        with self.lock:
            return delta_in_process(walked, self.store.conn, racy_from).scope

    def refresh(self, paths: Sequence[str], reason: str) -> ReconcileReport:
        """Reindex exactly ``paths`` (files or directories; created, modified or deleted)."""
        with self.lock, span("index.refresh", paths=len(paths)):
            started = monotonic()
            scope = sorted(set(paths))
            # A checkout's thousand files take seconds on a big tree: ``/status`` and a query waiting for them say
            # how far it is. A write's or an editor's few paths take milliseconds and are not recorded.
            tracker = build_progress.begin_refresh(self.root, reason) if len(scope) >= CHUNK else None
            try:
                disk = walk_paths(self.root, scope, self.rules)
                changes = diff(self.root, self.store.records_for(scope), disk,
                               max_bytes=self.config.max_file_bytes, trust_stat=False)
                work = len(changes.upserts) + len(changes.renamed)
                if tracker is not None and work:
                    tracker.update(0, work)
                return self._finish(changes, reason, started, full=False,
                                    progress=None if tracker is None else tracker.update)
            finally:
                if tracker is not None:
                    build_progress.end_refresh(self.root, tracker)

    def _finish(self, changes: ChangeSet, reason: str, started: float, *, full: bool,
                progress: ProgressFn | None) -> ReconcileReport:
        repair = self._repair
        needs_repair = repair.lexical_all or repair.lexical_paths or repair.facts_all
        inflight = self.store.get_json("tantivy_inflight", [])
        if self._publisher is None:
            raise RuntimeError("index pipeline is not open")
        content_changed = changes.upserts or changes.deleted or changes.renamed
        summary: EpochSummary | None = None
        if not (content_changed or needs_repair or inflight):
            if changes.touched:  # stat-only (touch, CRLF flip): not dirty, so no new epoch (§5.7)
                before = _rows_of(changes)
                self._publisher.touch(changes)
                self._update_counts(before, changes)  # a CRLF flip changes the size the counts add up
            if progress is not None:
                progress(0, 0)
        else:
            before = _rows_of(changes)
            with span("index.publish_epoch", files=len(changes.upserts) + len(changes.deleted)):
                summary = self._publisher.publish(changes, reason=reason, extras=Extras(
                    repair.lexical_all, set(repair.lexical_paths), set(repair.facts_all)), progress=progress)
            self._repair = Extras()
            _drop_stale_bytecode(self.root, changes)
            self.epoch = summary.epoch
            self.last_epoch = summary
            if summary.stale:
                self.pending.mark(summary.stale)
            self._update_counts(before, changes)
        report = ReconcileReport(
            at_ms=now_ms(), duration_ms=int((monotonic() - started) * 1000), reason=reason, full=full,
            added=changes.added, modified=changes.modified, deleted=len(changes.deleted),
            renamed=tuple((r.old.path, r.new.entry.path) for r in changes.renamed),
            touched=len(changes.touched), epoch=self.epoch)
        self.last_update = report
        if full:
            self.last_reconcile = report
            # One line per full reconcile (a first build, a start, a checkout): the log said nothing of them.
            log.info("index.reconciled", reason=reason, duration_ms=report.duration_ms, added=report.added,
                     modified=report.modified, deleted=report.deleted, epoch=report.epoch)
        for listener in self.listeners:
            try:
                listener(report, summary)
            except Exception:  # an observer must never fail a write
                log.exception("reconcile listener failed")
        return report

    def process(self, work: PendingWork, *, full_reason: str = "watcher") -> None:
        """Apply one snapshot of pending changes (watcher batches), then clear it."""
        with self.lock:
            if work.full and len(work.paths) >= BURST_PATHS and self.counts.files >= walk_apart.APART_FROM_FILES:
                # A checkout: its files (the watcher saw them) are indexed while a child walks the tree for the full
                # reconcile HEAD's move asks for; that reconcile then finds what the watcher missed, if anything.
                # The child's snapshot of the table predates the epoch: its delta is only stale, which the
                # reconcile handles as it handles its walk's staleness (``walk_apart``).
                walked = self._walk_apart_now()
                self.refresh(list(work.paths), "watcher")
                self.reconcile(full_reason, walked_apart=walked)
            elif work.full:
                self.reconcile(full_reason)
            elif work.paths:
                self.refresh(list(work.paths), "watcher")
        self.pending.done(work)

    def _walk_apart_now(self) -> tuple[IgnoreRules, Future[WalkDelta | None]]:
        """:func:`walk_apart.delta_apart` for a full reconcile, started now on a thread (the child does the work),
        with the rules it walks by."""
        rules = IgnoreRules.load(self.root)
        racy_from = racy_after(int(self.store.get_meta(STAT_REFERENCE_KEY) or 0))
        walked: Future[WalkDelta | None] = Future()

        def run() -> None:
            try:
                walked.set_result(delta_apart(self.root, rules, self.store.path, racy_from))
            except BaseException as exc:  # noqa: BLE001 - delivered to the reconcile that waits for it
                walked.set_exception(exc)

        threading.Thread(target=run, name="codeplane-walk-apart", daemon=True).start()
        return rules, walked

    def checkpoint(self, *, background: bool = False) -> None:
        """The WAL checkpoint a big epoch left for later (``EpochPublisher.checkpoint``); the server runs it once
        ready, so a cold start answers /ready without waiting for it.

        The copy itself (``copy_wal_back``) holds neither the writer lock nor, with ``background``, the caller's
        thread: the server's indexer thread goes on publishing epochs while a big epoch's WAL is copied back (a
        1,000-file checkout right after a 133k-file build written through the WAL waited for all of it: 40 s
        instead of 24 s; a first build no longer goes through the WAL, ``IndexStore.leave_wal``). Only the
        final truncation, with little left to copy, takes the lock. ``close`` waits for a copy under way.
        """
        with self.lock:
            if self._copier is not None and self._copier.is_alive():
                return  # one copy at a time; what is due stays due
            if self._publisher is None or not self.opened or not self._publisher.take_checkpoint():
                return
        if not background:
            self._copy_back()
            return
        copier = threading.Thread(target=self._copy_back, name="codeplane-wal-copy", daemon=True)
        self._copier = copier
        copier.start()

    def _copy_back(self) -> None:
        if threading.current_thread() is self._copier:
            # The lowest CPU priority for this thread alone (Linux schedules threads): an epoch published meanwhile
            # (a checkout right after another big epoch) gets the cores first, the copy takes what is left.
            with contextlib.suppress(OSError, AttributeError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        copy_wal_back(self.store.path)
        with self.lock:
            if self._publisher is not None and self.opened:
                self._publisher.truncate_wal()

    def mark_changed(self, paths: Iterable[str]) -> None:
        self.pending.mark(paths)

    # -- derived state ---------------------------------------------------------------------------------------
    def _update_counts(self, before: dict[str, _CountedRow], changes: ChangeSet) -> None:
        """``counts`` after an epoch, from the rows of the paths it concerned as they were (``before``) and are now:
        a write's epoch no longer scans the file table three times (a few ms on Django, tens on a monorepo). An
        epoch of many paths counts the table again."""
        paths = sorted(set(before) | {u.entry.path for u in changes.upserts}
                       | {r.new.entry.path for r in changes.renamed})
        if len(paths) >= CHUNK or self.counts.files == 0:
            self._refresh_counts()
            return
        now: dict[str, _CountedRow] = {}
        for start in range(0, len(paths), 500):
            part = paths[start:start + 500]
            now.update((str(p), (str(k), lang, int(size))) for p, k, lang, size in self.store.conn.execute(
                f"SELECT path, kind, language, size FROM files WHERE path IN ({','.join('?' * len(part))})", part))
        kinds = {"text": self.counts.text, "binary": self.counts.binary, "oversized": self.counts.oversized,
                 "symlink": self.counts.symlink}
        languages = dict(self.counts.languages)
        files, total_bytes = self.counts.files, self.counts.bytes
        for rows, sign in ((before, -1), (now, 1)):
            for kind, language, size in rows.values():
                files += sign
                total_bytes += sign * size
                kinds[kind] = kinds.get(kind, 0) + sign
                if language is not None:
                    languages[language] = languages.get(language, 0) + sign
        self.counts = IndexCounts(
            files=files, text=kinds["text"], binary=kinds["binary"], oversized=kinds["oversized"],
            symlink=kinds["symlink"], bytes=total_bytes,
            languages={k: v for k, v in sorted(languages.items()) if v > 0})

    def _refresh_counts(self) -> None:
        conn = self.store.conn
        kinds = dict(conn.execute("SELECT kind, count(*) FROM files GROUP BY kind").fetchall())
        languages = dict(conn.execute(
            "SELECT language, count(*) FROM files WHERE language IS NOT NULL GROUP BY language ORDER BY language"
        ).fetchall())
        total_bytes = conn.execute("SELECT coalesce(sum(size), 0) FROM files").fetchone()[0]
        self.counts = IndexCounts(
            files=sum(kinds.values()), text=kinds.get("text", 0), binary=kinds.get("binary", 0),
            oversized=kinds.get("oversized", 0), symlink=kinds.get("symlink", 0), bytes=int(total_bytes),
            languages={str(k): int(v) for k, v in languages.items()})


#: What ``IndexCounts`` counts of a file row: (kind, language, size).
_CountedRow = tuple[str, str | None, int]


def _rows_of(changes: ChangeSet) -> dict[str, _CountedRow]:
    """The counted rows, before the epoch, of every path ``changes`` may rewrite or remove (read with the diff)."""
    records = [*(u.previous for u in changes.upserts if u.previous is not None), *changes.deleted,
               *(r.old for r in changes.renamed), *(t.record for t in changes.touched)]
    return {r.path: (r.kind, r.language, r.size) for r in records}


def _drop_stale_bytecode(root: Path, changes: ChangeSet) -> None:
    """Python's and pytest's bytecode caches trust a source whose size and whole-second mtime match: an editor's
    save of ``V = 2`` over ``V = 1`` within a second ran the old test module. CodePlane's own writers drop the
    caches of what they rewrite (``core.bytecode``); for a change made by another program, seen here, the caches
    of every modified Python file of unchanged size go (a size change invalidates them anyway)."""
    prefixes: tuple[Path, ...] | None = None
    for upsert in changes.upserts:
        previous, entry = upsert.previous, upsert.entry
        if previous is None or previous.size != entry.size or not entry.path.endswith(".py"):
            continue
        prefixes = prefixes or cache_prefixes(root)
        drop_cached_bytecode(root / entry.path, prefixes)
