"""One epoch's structural work, spread over the epoch's batches and completed once at its end.

A cold index reaches the indexer as many batches of files. Each batch's extraction starts in the worker
processes as soon as it arrives, and the batch before it is written meanwhile, so parsing (workers) and
inserting (this thread) overlap. Linking, contexts, anchor groups and snapshots run once, in ``finish``, over
the union of what the batches changed: the same steps a one-batch epoch (an edit) runs, giving the same facts,
since linking recomputes from what is stored whatever the order of the batches (``linking.py``).

On an empty store (cold index, schema rebuild) the secondary indexes are dropped before the inserts and created
again in ``finish``, all inside the epoch's transaction: a crash or rollback brings them back with the rest. The last
of them are built while a thread groups the anchor candidates (pure Python) and SQLite sorts their keys with helper
threads (``SORT_THREADS``): by then Tantivy's indexing, which runs beside the first part of the finish, has usually
left the second core idle.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

from codeplane.core.collector import collector_paused
from codeplane.core.logging import get_logger
from codeplane.index.facts_api import FileChange
from codeplane.index.structural import anchors, contexts, linking, schema, snapshots, store
from codeplane.index.structural.extract import FAILED, NO_GRAMMAR, TOO_LARGE, Outcome
from codeplane.index.structural.workers import Extraction, ExtractionPool

_log = get_logger("index.structural")
#: Groups a cold index's anchor candidates beside the writer (``_complete``), when there are this many.
_GROUPER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="codeplane-anchor-groups")
_GROUP_APART = 20_000
#: From this many files a cold index ranks its anchor groups in SQLite, whose sort spills to disk, not in Python.
_RANK_IN_SQLITE = 20_000
#: Threads SQLite may sort with while a cold build creates the indexes linking does not need (``create_indexes``).
#: Not for the first ones: built while Tantivy's indexing thread holds the other core, helpers would only take
#: turns with it and with this thread (measured under load: less CPU here, no shorter wall time).
SORT_THREADS = 0 if (os.cpu_count() or 1) < 2 else min(4, os.cpu_count() or 1)
#: Batches submitted but not yet written: at least two, so that while this thread waits for the oldest, a worker
#: done with its share of that batch goes on with the next one instead of idling until the batch is written.
LOOKAHEAD = 2
#: ...and more while the batches behind the oldest hold less work for the workers than this (characters of parsed
#: text, ``Extraction.pooled_cost``), about what two workers parse while one batch is written and the next read. A
#: batch of translation catalogs or docs costs them next to nothing: two of them in flight left both workers idle
#: while this thread wrote and read (Django, whose tree holds runs of such batches: `lexical_index.py --cold`,
#: cold `cpl up` 9.93 / 9.78 s against 10.17 / 10.03 s in alternating runs).
BEHIND_COST = 1_000_000
#: ...but never more than this many (each holds its files' text until written).
MAX_QUEUED = 8


@dataclass
class Timings:
    """Seconds spent by the writing thread per step (waiting for extraction counts as ``extract``)."""

    files: int = 0
    deleted: int = 0
    extract: float = 0.0
    write: float = 0.0
    indexes: float = 0.0
    link: float = 0.0
    contexts: float = 0.0
    anchors: float = 0.0
    snapshot: float = 0.0
    refs_relinked: int = 0
    refs_kept: int = 0
    refs_written: int = 0


class _Pending(NamedTuple):
    changes: list[FileChange]
    extraction: Extraction


class EpochSession:
    def __init__(self, conn: sqlite3.Connection, epoch: int, pool: ExtractionPool) -> None:
        self.conn = conn
        self.epoch = epoch
        self._pool = pool
        self._queue: deque[_Pending] = deque()
        self._effect = store.BatchEffect(epoch)
        self._seen: set[str] = set()
        self.timings = Timings()
        self.started = False
        self._cold = False

    def add(self, changes: list[FileChange]) -> None:
        """Start extracting ``changes``; write earlier batches while it runs."""
        if not self.started:
            self.started = True
            self._cold = self.conn.execute("SELECT 1 FROM st_file LIMIT 1").fetchone() is None
            if self._cold:
                schema.drop_indexes(self.conn)
        if any(c.path in self._seen for c in changes):
            self._complete()  # a path twice in one epoch: its first version must be fully linked first
        self._seen.update(c.path for c in changes)
        items = [(c.path, c.text) for c in changes if not c.deleted and c.text is not None]
        self._queue.append(_Pending(changes, self._pool.submit(items)))
        while len(self._queue) > LOOKAHEAD and (len(self._queue) > MAX_QUEUED or self._behind() >= BEHIND_COST):
            self._write_next()

    def _behind(self) -> int:
        """Work the workers have queued behind the oldest batch."""
        return sum(pending.extraction.pooled_cost for pending in itertools.islice(self._queue, 1, None))

    def finish(self) -> None:
        """Write what is left, then link, route, anchor and snapshot everything the epoch changed."""
        if self.started:
            # Its rows, chases and groups stay alive until the epoch ends: a collection meanwhile only walks them
            # (a big epoch runs paused whole, ``EpochPublisher.publish``; for a 13-file edit, 0.1-0.2 s of collections).
            with collector_paused():
                self._complete()

    def cancel(self) -> None:
        for pending in self._queue:
            pending.extraction.cancel()
        self._queue.clear()

    def _write_next(self) -> None:
        pending = self._queue.popleft()
        began = time.perf_counter()
        outcomes, staged = pending.extraction.result()
        by_path: dict[str, Outcome] = {o.path: o for o in outcomes}
        extracted = time.perf_counter()
        failed = sorted(o.path for o in by_path.values() if o.status in (FAILED, NO_GRAMMAR, TOO_LARGE))
        if failed:  # skipped and counted (status shows them), never fatal (§18 item 3)
            _log.warning("structural_files_skipped", count=len(failed), first=failed[:5])
        effect = store.write_batch(self.conn, pending.changes, [by_path.get(c.path) for c in pending.changes],
                                   staged, self.epoch)
        effect.outcomes = []  # written: let the facts go
        self._effect.absorb(effect)
        self.timings.files += len(effect.upserted)
        self.timings.refs_kept += effect.kept.refs_kept
        self.timings.refs_written += effect.kept.refs_written
        self.timings.deleted += len(effect.deleted)
        self.timings.extract += extracted - began
        self.timings.write += time.perf_counter() - extracted

    def _complete(self) -> None:
        while self._queue:
            self._write_next()
        self._pool.release()  # extraction is done: the workers' memory is better spent on what follows
        conn, timings = self.conn, self.timings
        cold, self._cold = self._cold, False
        effect, self._effect = self._effect, store.BatchEffect(self.epoch)
        self._seen = set()
        began = time.perf_counter()
        if cold:
            schema.create_indexes(conn, for_linking=True)
        indexed = time.perf_counter()
        link = linking.relink(conn, effect)
        linked = time.perf_counter()
        rerouted = contexts.refresh(conn, effect)
        routed = time.perf_counter()
        removed = dict(effect.anchors_removed)
        for key, count in rerouted.anchors_removed.items():
            removed[key] = removed.get(key, 0) + count
        changed = sorted(set(effect.upserted.values()) | set(rerouted.files))
        # A cold index of a big tree ranks its groups in SQLite (``rank_all``): as Python rows, its candidates would
        # take ~0.3 KB each, 1.4 GB for the 4.5M of a 133k-file corpus.
        in_sql = cold and len(changed) >= _RANK_IN_SQLITE
        found = anchors.Candidates({}, []) if in_sql else anchors.candidates(conn, changed)
        # Grouping many candidates is Python work with no database: on a cold index it runs in a thread while this
        # one builds the last indexes (long statements, during which SQLite lets go of the GIL).
        grouping = _GROUPER.submit(anchors.group, found) if cold and len(found.rows) >= _GROUP_APART else None
        fetched = time.perf_counter()
        if cold:  # after linking, which rewrites some of the indexed columns
            schema.create_indexes(conn, for_linking=False, sort_threads=SORT_THREADS)
        indexed_after = time.perf_counter()
        if in_sql:  # every group is new: the same groups ``apply`` writes from no groups and every file
            anchors.rank_all(conn)
        else:
            anchors.apply(conn, removed, grouping.result() if grouping is not None else anchors.group(found),
                          link.member_tokens, effect.anchors_gone)
        anchored = time.perf_counter()
        snapshots.record(conn, effect)
        timings.indexes += (indexed - began) + (indexed_after - fetched)
        timings.link += linked - indexed
        timings.contexts += routed - linked
        timings.anchors += (fetched - routed) + (anchored - indexed_after)
        timings.snapshot += time.perf_counter() - anchored
        timings.refs_relinked += link.refs_changed
