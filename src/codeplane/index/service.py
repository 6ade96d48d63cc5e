"""The index service: the one object other subsystems use to reach repository truth and the lexical index.

Lifecycle: :meth:`start` opens (and repairs) the stores, starts the background indexer and the watcher,
and queues a full reconcile; the service is *ready* once that first reconcile is published.
Writes: :meth:`refresh_paths` (after every CodePlane write) and :meth:`reconcile` (after git moves HEAD)
are synchronous and return the published epoch. Reads: every query first waits, bounded, for the changes marked
before it that concern what it reads (per-file freshness, D6, ``freshness.py``), and answers with the epoch it saw.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from codeplane.core.clock import monotonic
from codeplane.core.config import IndexConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.core.logging import get_logger
from codeplane.core.paths import canonicalize, resolve_in_repo
from codeplane.core.storage import storage_error
from codeplane.core.stores import drop_store
from codeplane.core.tracing import span
from codeplane.index import progress as build_progress
from codeplane.index.artifact_adopt import AdoptOutcome, adopt_configured, index_source, read_origin
from codeplane.index.artifact_integrity import AFTER_READY, DeferredCheck, integrity_problem
from codeplane.index.cursors import CursorStore
from codeplane.index.epochs import EpochInterrupted, EpochSummary, ProgressFn
from codeplane.index.facts_api import FactIndexer
from codeplane.index.files import MAX_LIST_LIMIT, FilePage, Listings
from codeplane.index.freshness import BURST_PATHS, PendingChanges, concerns_prefix, poll_interval, settle_burst
from codeplane.index.lexical import is_native_panic
from codeplane.index.listeners import ReadyFlag, Reconciles
from codeplane.index.pipeline import IndexPipeline, ReconcileReport
from codeplane.index.query import compile_query
from codeplane.index.retry import FailureBackoff
from codeplane.index.search import LargeFiles, LexicalHit, lexical_stream, scope_concerns
from codeplane.index.service_models import BuildSummary, LexicalPage, LexicalRequest
from codeplane.index.status_view import counts_section, reconcile_section, watcher_section
from codeplane.index.store import FileRecord, differs_on_disk
from codeplane.index.walk_apart import EarlyWalk
from codeplane.index.write_hold import WriteHolds
from codeplane.repo.gitlock import index_lock, wait_for_git
from codeplane.repo.ignore import IgnoreRules
from codeplane.repo.textcache import TextCache
from codeplane.repo.version import read_repo_version
from codeplane.repo.watcher import RepoWatcher, WatchBatch

log = get_logger(__name__)
#: How a rebuild for a damaged ``index.db`` names its reason (``_rebuild_from_disk``).
_DAMAGED = "index.db was damaged"

class IndexService:
    def __init__(self, root: Path, layout: RepoLayout, config: IndexConfig) -> None:
        self.root = root
        self.config = config
        self._pending = PendingChanges()
        self._pipeline = IndexPipeline(root, layout, config, self._pending)
        self._pipeline.store.on_damage = self._damage_found
        self._ready = ReadyFlag()
        self._pipeline.store.serving = self._ready.is_set
        self._stopping = threading.Event()
        self._holds = WriteHolds()
        self._git_lock: Path | None = None
        self._thread: threading.Thread | None = None
        #: The term index's warm-up read: a stop waits for it (it reads mapped segments; a truncated one is a SIGBUS).
        self._warming: threading.Thread | None = None
        self._watcher: RepoWatcher | None = None
        self._watch_after_build = False
        #: The full reconcile marked right after the first build (what changed unwatched meanwhile) is yet to run.
        self._catching_up = False
        #: When the indexer thread last began a full reconcile (its walk follows); see ``_on_watch_live``.
        self._full_began: float | None = None
        self._cursors: CursorStore[LexicalHit] = CursorStore()
        self._texts, self._listings = TextCache(root), Listings()
        self._large = LargeFiles(root)
        self._reconciles = Reconciles()
        self._pipeline.listeners.append(self._reconciles.deliver)
        self.state = "stopped"
        self.error: str | None = None
        self.artifact: AdoptOutcome | None = None
        self.origin: dict[str, object] | None = None
        #: Why this run found ``index.db`` unusable and built it from disk (``None``: it did not); in ``source``.
        self.rebuilt: str | None = None
        #: The adopted artifact's integrity check when it runs after ready (``artifact_integrity.py``).
        self._integrity: DeferredCheck | None = None
        #: Why the index must be dropped and built from disk (that check failed); the indexer thread does it.
        self._rebuild_reason: str | None = None
        self._integrity_begun = False
        self._backoff = FailureBackoff(layout.state_dir)

    # -- wiring ----------------------------------------------------------------------------------------
    def register_indexer(self, indexer: FactIndexer) -> None:
        """Add a fact producer; must happen before :meth:`start` (or :meth:`build`)."""
        if self._pipeline.opened:
            raise RuntimeError("register_indexer must be called before the index service starts")
        if any(i.name == indexer.name for i in self._pipeline.indexers):
            raise ValueError(f"an indexer named {indexer.name!r} is already registered")
        self._pipeline.indexers.append(indexer)

    @property
    def indexers(self) -> tuple[FactIndexer, ...]:
        return tuple(self._pipeline.indexers)

    def on_ready(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` once, the next time the index is ready: now if it is, else when a reconcile is
        published. Not "the first publish": a listener that comes while an adopted artifact's index is being
        rebuilt from disk (ready, then not) is told when the rebuild is published (the server's ``/ready``)."""
        self._ready.on_set(listener)

    def on_reconcile(self, listener: Callable[[ReconcileReport, EpochSummary | None], None]) -> None:
        """Call ``listener`` after every reconcile or path refresh, with the epoch it published (if any), on the
        writer's thread under its lock: keep it to a counter update. What was published before the listener came
        (the server starts the index before it wires its metrics, ``server/boot_index.py``) is replayed to it first,
        on the caller's thread, up to the last :data:`~codeplane.index.listeners.REPLAYED_REPORTS`."""
        self._reconciles.listen(listener)

    @property
    def last_reconcile(self) -> ReconcileReport | None:
        """The last full reconcile (its duration paces polling without a watcher), ``None`` before the first."""
        return self._pipeline.last_reconcile

    @property
    def last_update(self) -> ReconcileReport | None:
        """The last reconcile or refresh of paths (the watcher's, a write's): when the index last met the disk."""
        return self._pipeline.last_update

    @property
    def indexed_head(self) -> str | None:
        """The HEAD commit of the tree the index serves: its last published full reconcile's (drift from HEAD
        compares with it; a checkout's reindex under way still serves the old tree)."""
        version = self._pipeline.published_version
        return version.head if version else None

    @property
    def pending_count(self) -> int:
        return self._pending.count()

    @property
    def watcher_state(self) -> str:
        if self._watcher is None:
            return "starting" if self._watch_after_build else "disabled"
        return self._watcher.state

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> None:
        """Open stores, start the indexer thread and the watcher, queue the startup reconcile."""
        self.state = "starting"
        self._adopt_artifact()
        self._open_pipeline()
        if self._integrity_owed():
            self._pipeline.store.check_owed = True
            self._integrity = DeferredCheck(self._pipeline.layout.index_db, self._integrity_passed,
                                            self._integrity_failed)
        self._stopping.clear()
        self._pending.mark_full()
        # A first build writes the whole index (hundreds of MB through the WAL) inside the watched tree: a watcher
        # running meanwhile spends seconds of CPU on those writes' events. It starts once the build is published,
        # with a catch-up reconcile for what changed in between (``_run``).
        self._watch_after_build = self.config.watch and self._pipeline.epoch == 0
        self._git_lock = index_lock(self.root)
        self._thread = threading.Thread(target=self._run, name="codeplane-indexer", daemon=True)
        self._thread.start()
        if self.config.watch and not self._watch_after_build:
            self._start_watcher()

    def _start_watcher(self) -> None:
        self._watcher = RepoWatcher(self.root, self._on_batch, lambda: self._pipeline.rules,
                                    debounce_ms=self.config.debounce_ms, on_live=self._on_watch_live)
        self._watcher.start()

    def _on_watch_live(self) -> None:
        """Every watch is now in place. A full reconcile that walked before this moment could not see a change
        made between its walk and now, and no watch saw it either (on a 133k-file tree the watches take ~1.5 s):
        a walk now finds any such path, and marks it pending like a watcher batch would (a query waits only for
        the paths it touches). With no full reconcile begun yet, the pending one walks after this moment."""
        if self._full_began is None:
            return
        threading.Thread(target=self._catch_up_unwatched, name="codeplane-watch-catch-up", daemon=True).start()

    def _catch_up_unwatched(self) -> None:
        try:
            paths = self._pipeline.differing_now()
        except Exception as exc:  # noqa: BLE001 - stopping, or a walk that failed: a full reconcile then
            if not self._stopping.is_set():
                log.warning("watch catch-up walk failed; reconciling", error=f"{type(exc).__name__}: {exc}")
                self._pending.mark_full()
            return
        if paths and not self._stopping.is_set():
            self._pending.mark(paths)

    def wait_ready(self, timeout: float) -> bool:
        return self._ready.wait(timeout)

    def stop(self) -> None:
        self._stopping.set()
        if self._integrity is not None:
            self._integrity.cancel()
        self._pending.wake()
        if self._watcher is not None:
            self._watcher.stop()
        if self._thread is not None:
            # A stop must not wait for a long epoch (a first build of a big tree): it is rolled back instead, and
            # interrupted again while it runs, since only a running SQL statement can be aborted from here.
            deadline = monotonic() + 30
            while self._thread.is_alive() and monotonic() < deadline:
                self._pipeline.interrupt()
                self._thread.join(timeout=0.1)
            self._thread = None
        if self._watcher is not None:  # started by the indexer thread after a first build, maybe meanwhile
            self._watcher.stop()
        if self._warming is not None:  # one Rust call, not interruptible: ~0.3 s on Django
            self._warming.join(timeout=30)
        self._pipeline.close()
        self.state = "stopped"

    def build(self, progress: ProgressFn | None = None) -> BuildSummary:
        """Open, reconcile the whole tree once (with progress) and close; for ``cpl init`` (no server)."""
        self._adopt_artifact()
        self._open_pipeline()
        try:
            if self._integrity_owed():  # no server to be ready first: the check runs now
                with self._pipeline.store.read() as conn:
                    problem = integrity_problem(conn)
                if problem is not None:
                    self._rebuild_from_disk(problem)
            report = self._pipeline.reconcile("init", progress)
            return BuildSummary(report, self._pipeline.counts, tuple(self._pipeline.warnings))
        finally:
            self._pipeline.close()

    def _adopt_artifact(self) -> None:
        """Start from ``index.artifact`` if configured (``artifact_adopt.py``); a refusal is a warning."""
        pipeline = self._pipeline
        # The startup reconcile's walk of the tree needs no index: a child does it while the artifact is checked,
        # and compares with the adopted table once the reconcile asks (``walk_apart.EarlyWalk``).
        walk = EarlyWalk(self.root, IgnoreRules.load(self.root)) if self.config.artifact else None
        self.artifact = adopt_configured(self.root, pipeline.layout, self.config, pipeline.indexers)
        if self.artifact.result == "refused":
            pipeline.warnings.append(f"index artifact refused: {self.artifact.reason}; built from disk instead")
        self.origin = read_origin(pipeline.layout.index_db)
        if walk is not None and self.artifact.result == "refused":
            walk.cancel()  # a cold build walks in-process
        elif walk is not None:
            pipeline.early_walk = walk
            self._full_began = monotonic()  # its walk precedes the watcher: the catch-up walk must run

    def _open_pipeline(self) -> None:
        """Open the stores; one its open found unusable (and dropped) no longer has the origin read before."""
        self._pipeline.open()
        reason = self._pipeline.store.rebuilt_reason
        if reason and self.artifact is not None:  # an artifact this start swapped in: refused after all, naming it
            self.artifact = self.artifact.after_adoption(f"its index.db is unusable: {reason}", self._pipeline.warnings)
        if reason:
            self._built_here(f"index.db was unusable ({reason})")

    def _built_here(self, reason: str) -> None:
        self.origin = None
        self.rebuilt = reason

    def _integrity_owed(self) -> bool:
        """This start adopted an artifact whose full integrity check (or its whole-file part) runs after ready."""
        origin = self.origin or {}
        return self.artifact is not None and self.artifact.result == "adopted" and \
            AFTER_READY in (origin.get("integrity"), origin.get("whole_file_check"))

    def _integrity_passed(self) -> None:
        self._pipeline.store.check_owed = False

    def _integrity_failed(self, problem: str) -> None:
        self._rebuild_reason = problem
        self._pending.wake()

    def _rebuild_from_disk(self, problem: str) -> None:
        """Drop the index and build it from disk: an adopted artifact that failed its integrity check (as a refused one
        would have been), or an ``index.db`` found damaged, deleted or replaced while serving (queries answered 9001
        or 3005 until a restart); queries answer 3004 (retryable) until the build is published."""
        damaged = problem.startswith(_DAMAGED)
        self._ready.clear()
        self.state = "rebuilding" if damaged else "starting"
        pipeline = self._pipeline
        floor = pipeline.epoch
        pipeline.close()
        pipeline.store.check_owed = False  # what is built from disk next owes no check
        drop_store(pipeline.layout.index_db)
        shutil.rmtree(pipeline.layout.tantivy_dir, ignore_errors=True)
        if damaged:
            self._built_here(problem)
        elif self.artifact is not None:  # an adopted artifact failed its integrity check
            self.artifact, self.origin = self.artifact.after_adoption(problem, pipeline.warnings), None
        self._open_pipeline()
        # Epochs go on from where the damaged index was: every answer and cursor carries one, and a rebuild's
        # starting over at 1 made them go backwards (3 -> 2 after ``git clean -fdx`` took ``.codeplane/``). A refused
        # artifact is rebuilt as a cold build would be (its tests compare the answers, epochs included).
        if damaged and pipeline.epoch < floor:
            pipeline.store.set_meta("epoch", str(floor))
            pipeline.epoch = floor
        if damaged:
            pipeline.warnings.append(f"{problem}; rebuilt from disk")
        log.warning("index rebuilt from disk", reason=problem)
        self._rebuild_reason = None
        self._pending.mark_full()

    def _damage_found(self, what: str) -> None:
        """A statement found ``index.db`` damaged (``IndexStore.on_damage``): rebuild it from disk, once."""
        if self._rebuild_reason is None and self._ready.is_set():
            self._rebuild_reason = f"{_DAMAGED} while the server ran ({what})"
            self._pending.wake()

    def _mark_ready(self) -> None:
        if self._ready.is_set():
            return
        self.state = "ready"
        if not self._ready.set():  # by another thread meanwhile; else the ready listeners have been told
            return
        # A text query waits for the term index: read it now, before the first one needs it (~0.3 s on Django).
        self._warming = threading.Thread(target=self._warm_terms, name="codeplane-terms", daemon=True)
        self._warming.start()
        if not self._integrity_begun:  # the first time only, not again after a rebuild from disk
            self._integrity_begun = True
            if self._integrity is not None:
                self._integrity.start()

    def _warm_terms(self) -> None:
        try:
            self._pipeline.lexical.warm_terms()
        except Exception:  # a query reads it itself
            log.exception("reading the term index failed")

    def _run(self) -> None:
        idle_since_reconcile = 0.0
        while not self._stopping.is_set():
            self._pipeline.store.check_replaced()  # a stat: index.db deleted or replaced under the writer is damage
            if self._rebuild_reason is not None:
                try:
                    self._rebuild_from_disk(self._rebuild_reason)
                except Exception as exc:  # noqa: BLE001 - logged by the backoff; e.g. the disk: retried as indexing is
                    self.error, wait = self._backoff.failed("rebuilding the index from disk", exc)
                    self._stopping.wait(wait)
                    continue
            work = self._pending.take(timeout=0.5)
            if self._stopping.is_set():
                return
            if work is None:
                idle_since_reconcile += 0.5
                # e.g. after a big epoch published by ``reconcile`` (a git checkout)
                self._pipeline.checkpoint(background=True)
                if (self._watcher is None or self._watcher.state == "failed") and \
                        idle_since_reconcile >= poll_interval(self._pipeline.last_reconcile) and self._ready.is_set():
                    self._pending.mark_full()
                    idle_since_reconcile = 0.0
                continue
            git_busy = self._ready.is_set() and (
                self._holds.wait_released(self._stopping) or wait_for_git(self._git_lock, self._stopping))
            if git_busy:
                # A git command was rewriting the work tree: index all it changed as one epoch (``gitlock``).
                work = self._pending.take(timeout=0) or work
            if self._ready.is_set() and not work.full and len(work.paths) >= BURST_PATHS:
                work = settle_burst(self._pending, work, self._stopping)
            if work.full:
                self._full_began = monotonic()
            try:
                reason = "watcher" if self._ready.is_set() else "startup"
                if work.full and self._catching_up:  # (``/status`` called it a watcher's reconcile)
                    reason, self._catching_up = "catch-up", False
                self._pipeline.process(work, full_reason=reason)
                self.error = None
                self._backoff.succeeded()
                if self._watch_after_build and not self._stopping.is_set():
                    self._watch_after_build = False
                    self._start_watcher()
                    self._pending.mark_full()  # what changed on disk while the first build ran, unwatched
                    self._catching_up = True
                self._mark_ready()
                # A big epoch's WAL copy-back, once /ready no longer waits for it; not before the first build's
                # catch-up reconcile, which every query waits for (seconds of copying on a 100k-file corpus).
                if not self._pending.count():
                    self._pipeline.checkpoint(background=True)
            except EpochInterrupted:
                log.info("indexing stopped: the epoch in progress was rolled back")
                return
            except Exception as exc:  # noqa: BLE001 - logged by the backoff; the work stays pending for a retry
                if self._stopping.is_set():  # a statement aborted by ``stop`` (``EpochPublisher.interrupt``)
                    log.info("indexing stopped", error=str(exc))
                    return
                self._pipeline.store.note_error(exc)
                self.error, wait = self._backoff.failed("updating the index", exc)
                self._stopping.wait(wait)
            except BaseException as exc:
                if not is_native_panic(exc):
                    raise
                # Tantivy's writer panicked (its directory was deleted under it): it is unusable from here on.
                # Reopening finds the damage and refills the index; the work stays pending meanwhile.
                self._pipeline.store.note_error(exc)
                self.error = f"the Tantivy index failed ({exc}); reopening it"
                log.exception("the Tantivy index failed; reopening it")
                self._reopen()

    def _reopen(self) -> None:
        """Close and open the index again; queries wait (3004, retryable) until what it repairs is published."""
        self._ready.clear()
        self.state = "starting"
        self._pipeline.close()
        self._open_pipeline()
        self._pending.mark_full()

    def _on_batch(self, batch: WatchBatch) -> None:
        if batch.rescan:
            self._pending.mark_full()
            return
        if batch.cplignore_changed and self._pipeline.reload_rules():
            self._pending.mark_full()
            return
        if batch.git_changed and read_repo_version(self.root) != self._pipeline.version:
            self._pending.mark_full()
        if batch.paths:
            self._pending.mark(batch.paths)

    # -- writes (synchronous) ------------------------------------------------------------------------------
    def refresh_paths(self, paths: Sequence[str]) -> int:
        """Reindex these repo-relative paths now (created, modified or deleted) and return the epoch. Thread-safe
        (single writer). Used by the mutation engine after every write, so a write returns only once search sees
        it. Raises 5001 for a path that is not canonical or escapes the repository."""
        canonical = sorted({canonicalize(p).rel for p in paths})
        self._require_open()
        concerned = [concerns_prefix(p) for p in canonical]
        snapshot = self._pending.snapshot(lambda p: any(c(p) for c in concerned))
        try:
            report = self._pipeline.refresh(canonical, "refresh")
        except Exception as exc:
            self._pipeline.store.note_error(exc)
            # Stale, not dead: the paths stay pending, so the indexer thread catches up once it can write.
            self._pending.mark(canonical)
            mapped = storage_error(exc, doing="updating the index")
            if mapped is not None:
                self.error = mapped.message
                raise mapped from exc
            raise
        self._pending.done(snapshot)
        return report.epoch

    def holding(self) -> AbstractContextManager[None]:
        """Held by a git write of CodePlane's own until its reconcile is done (``write_hold.py``)."""
        return self._holds.holding()

    def writing(self, paths: Sequence[str]) -> AbstractContextManager[None]:
        """Held by a write batch from its commit until its refresh returned (``PendingChanges.writing``)."""
        return self._pending.writing(paths)

    def reconcile(self) -> int:
        """Full reconcile now (e.g. after a git operation moved HEAD); returns the epoch."""
        self._require_open()
        snapshot = self._pending.snapshot(lambda _p: True, include_full=True)
        report = self._pipeline.reconcile("reconcile")
        self._pending.done(snapshot)
        self._mark_ready()
        return report.epoch

    # -- reads ---------------------------------------------------------------------------------------------
    @property
    def epoch(self) -> int:
        return self._pipeline.epoch

    @property
    def ignore_rules(self) -> IgnoreRules:
        return self._pipeline.rules

    @property
    def first_build_writing(self) -> bool:
        """A first build is being written straight into ``index.db`` (``IndexStore.leave_wal``): until it ends, a
        connection of its own (a status section) would wait for it, and should not try."""
        return self._pipeline.opened and self._pipeline.store.direct

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def _require_open(self) -> None:
        if not self._pipeline.opened:
            if self._rebuild_reason is not None:
                raise CodePlaneError(ErrorCode.INDEX_NOT_READY, "the index is being rebuilt from disk "
                                     f"({self._rebuild_reason}); retry shortly", retryable=True)
            raise CodePlaneError(ErrorCode.INDEX_NOT_READY, "the index service is not running")

    def _await(self, concerns: Callable[[str], bool], *, skip_writes: bool = False) -> None:
        self._require_open()
        wait = self.config.freshness_wait_ms / 1000
        if not self._ready.wait(wait):
            raise build_progress.not_ready(self.root, self.state, wait)
        try:
            self._pending.wait_until_fresh(concerns, wait, skip_writes=skip_writes)
        except CodePlaneError as exc:  # 3005: a checkout's refresh under way says how far it is
            raise build_progress.explain_timeout(self.root, exc) from None

    @contextmanager
    def read_connection(self, *, skip_writes: bool = False) -> Iterator[sqlite3.Connection]:
        """A read-only connection to ``index.db`` inside one read transaction (a consistent snapshot); waits
        (bounded) for the changes marked before it, so what it shows is no older than the disk was. With
        ``skip_writes`` not for the paths of a write batch in flight in this server: for a reader that answers as
        of before that write, and re-checks the files its answer names (``refresh_if_changed``)."""
        self._await(lambda _p: True, skip_writes=skip_writes)
        with self._pipeline.store.read() as conn:
            yield conn

    @contextmanager
    def reading_content(self, path: str, sha256: str) -> Iterator[sqlite3.Connection | None]:
        """A read connection whose facts of ``path`` are of the text with this SHA-256 (a write's own): at once when
        the index holds it, else once ``path`` is reindexed if it changed on disk; ``None`` when it then holds another
        text, never that text's facts. A path outside the universe has none: its connection finds no facts."""
        self._require_open()
        for attempt in range(2):
            if attempt:
                self.refresh_if_changed([path])
            if attempt or not self._ready.is_set():
                self._await(concerns_prefix(path))
            with self._pipeline.store.read() as conn:
                record = self._pipeline.store.record(path, conn)
                if (record is None and attempt) or (record is not None and record.file_sha256 == sha256):
                    yield conn
                    return
        yield None

    def file_record(self, path: str) -> FileRecord | None:
        """The file table row for ``path`` once it is fresh; ``None`` if it is not in the universe."""
        rel = resolve_in_repo(self.root, path).rel
        self._await(concerns_prefix(rel))
        with self._pipeline.store.read() as conn:
            return self._pipeline.store.record(rel, conn)

    def refresh_if_changed(self, paths: Iterable[str]) -> bool:
        """Reindex now those of ``paths`` whose file on disk is not the one indexed (size, mtime, inode), and say
        whether any was: an answer built from stored facts (line numbers, spans) of a file another program just
        changed, before the watcher has even seen the change, would pair old positions with the new text (D6)."""
        with self._pipeline.store.read() as conn:
            changed = differs_on_disk(conn, self.root, paths)
        if changed:
            self.refresh_paths(changed)
        return bool(changed)

    def list_files(self, prefix: str = "", *, glob: str | None = None, depth: int | None = None,
                   limit: int, cursor: str | None = None) -> FilePage:
        """One page of universe files under ``prefix`` (``cursor`` = the previous page's ``next_after``)."""
        rel = resolve_in_repo(self.root, prefix).rel if prefix else ""
        if not 1 <= limit <= MAX_LIST_LIMIT:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"limit must be within 1..{MAX_LIST_LIMIT}",
                                 details={"limit": limit})
        self._await(concerns_prefix(rel))
        page = self._listings.page(self._pipeline.store.read, self.epoch, prefix=rel, glob=glob, depth=depth,
                                   limit=limit, after=cursor)
        if rel and not page.total and not os.path.lexists(self.root / rel):
            # ``ls`` says so too; an empty answer read as "a directory with nothing in it"
            raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{rel!r} does not exist in the repository",
                                 details={"path": rel})
        return page

    def search_lexical(self, request: LexicalRequest, *, limit: int, cursor: str | None = None) -> LexicalPage:
        """Exact lexical hits (see :mod:`codeplane.index.search`), paginated over one snapshot."""
        key = request.key()
        if cursor is not None:
            page = self._cursors.next_page(cursor, query_key=key, limit=limit)
            return LexicalPage(page.items, page.next_cursor, page.total, page.truncated, page.epoch)
        query = compile_query(request.query, request.syntax, request.case_sensitive)
        with span("index.wait_fresh"):  # every hit is read from disk: answering as of before a write in flight is safe
            self._await(scope_concerns(self.root, request.scope), skip_writes=True)
        epoch = self.epoch
        with span("index.search", epoch=epoch) as step:
            with self._pipeline.store.read() as conn:
                stream = lexical_stream(conn, self._texts, self._pipeline.lexical, query, request.scope,
                                        context_lines=request.context_lines,
                                        include_snippets=request.include_snippets,
                                        large=self._large.of(conn, epoch, self._pipeline.counts.oversized))
            page = self._cursors.open_stream(stream, epoch=epoch, query_key=key, limit=limit)
            if step is not None:
                step.set(hits=page.total)
        return LexicalPage(page.items, page.next_cursor, page.total, page.truncated, page.epoch, stream.unsearched)

    # -- status ----------------------------------------------------------------------------------------
    def status(self) -> dict[str, object]:
        """The ``index`` section of ``/status`` and ``describe`` (key order is the answer's)."""
        pipeline = self._pipeline
        return {
            "state": self.state if self.error is None else "error",
            "ready": self.ready,
            **counts_section(pipeline),
            "pending_changes": self._pending.count(),
            **reconcile_section(pipeline, self.root),
            **watcher_section(self._watcher),
            "head": pipeline.published_version.head if pipeline.published_version else None,
            "indexers": sorted(i.name for i in pipeline.indexers),
            "warnings": list(pipeline.warnings),
            "error": self.error,
            "source": index_source(self.origin, self.artifact,
                                   self._integrity.state.as_status() if self._integrity is not None else None,
                                   rebuilt=self.rebuilt),
        }
