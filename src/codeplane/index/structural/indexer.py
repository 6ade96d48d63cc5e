"""``StructuralIndexer``: the ``FactIndexer`` (``index/facts_api.py``) that maintains the ``st_`` tables.

Everything runs inside the transaction that publishes an epoch (``session.py``): extract the changed files
(in worker processes for big batches), replace their facts, then, once per epoch, relink what depends on them,
refresh contexts when membership or markers changed, recompute touched anchor groups, and snapshot their
definitions. A file that cannot be parsed is stored with its status and counted; it never aborts the batch
(§18 item 3).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass

from codeplane.index.facts_api import FileChange
from codeplane.index.structural import schema
from codeplane.index.structural.session import EpochSession
from codeplane.index.structural.workers import ExtractionPool


@dataclass(frozen=True)
class ApplyReport:
    epoch: int
    files: int
    deleted: int
    extract_ms: int
    write_ms: int
    indexes_ms: int
    link_ms: int
    contexts_ms: int
    anchors_ms: int
    snapshot_ms: int
    #: The part spent in ``finish_epoch`` (the tail of writing, then everything from ``indexes_ms`` on).
    finish_ms: int
    refs_relinked: int
    #: Reference rows of files indexed before that came out unchanged and were kept, and those written.
    refs_kept: int = 0
    refs_written: int = 0


class StructuralIndexer:
    """Also an ``EpochHooks``: inside an epoch, ``apply`` only starts a batch and ``finish_epoch`` completes
    them all. Called without ``begin_epoch`` (tests, tools), ``apply`` is one whole epoch on its own."""

    name = "structural"
    schema_version = schema.SCHEMA_VERSION

    def __init__(self, workers: int | None = None) -> None:
        self._pool = ExtractionPool(workers)
        self._session: EpochSession | None = None
        self.last_report: ApplyReport | None = None

    def create_schema(self, conn: sqlite3.Connection) -> None:
        schema.create(conn)

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        schema.drop(conn)

    def prewarm(self, total_bytes: int) -> None:
        """A first build of this many bytes is about to start: start the extraction workers if it will use them."""
        self._pool.prewarm(total_bytes)

    def begin_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        if self._session is not None:  # left over from an epoch that was rolled back
            self._session.cancel()
        self._session = EpochSession(conn, epoch, self._pool)

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        session = self._session
        if session is None or session.conn is not conn or session.epoch != epoch:
            self.begin_epoch(conn, epoch)
            self.apply(conn, changes, epoch)
            self.finish_epoch(conn, epoch)
            return
        session.add(changes)

    def finish_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        session, self._session = self._session, None
        if session is None or not session.started:  # no file of this epoch concerned the structural tier
            return
        began = time.perf_counter()
        try:
            session.finish()
        except BaseException:
            session.cancel()
            raise
        t = session.timings

        def ms(seconds: float) -> int:
            return int(seconds * 1000)

        self.last_report = ApplyReport(epoch, t.files, t.deleted, ms(t.extract), ms(t.write), ms(t.indexes),
                                       ms(t.link), ms(t.contexts), ms(t.anchors), ms(t.snapshot),
                                       ms(time.perf_counter() - began), t.refs_relinked,
                                       t.refs_kept, t.refs_written)
        conn.execute("INSERT OR REPLACE INTO st_state(key, value) VALUES ('last_apply', ?)",
                     (json.dumps(self.last_report.__dict__),))

    def close(self) -> None:
        """Stop the extraction workers (the server's shutdown path)."""
        if self._session is not None:
            self._session.cancel()
        self._pool.close()
