"""``StructuralIndexer``: the ``FactIndexer`` (``index/facts_api.py``) that maintains the ``st_`` tables.

Each ``apply`` runs inside the transaction that publishes an epoch: extract the changed files (in worker
processes for big batches), replace their facts, relink what depends on them, refresh contexts when
membership or markers changed, recompute touched anchor groups, and snapshot their definitions. A file that
cannot be parsed is stored with its status and counted; it never aborts the batch (§18 item 3).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass

from codeplane.core.logging import get_logger
from codeplane.index.facts_api import FileChange
from codeplane.index.structural import anchors, contexts, linking, schema, snapshots, store
from codeplane.index.structural.extract import FAILED, NO_GRAMMAR, TOO_LARGE, Outcome
from codeplane.index.structural.workers import ExtractionPool

_log = get_logger("index.structural")


@dataclass(frozen=True)
class ApplyReport:
    epoch: int
    files: int
    deleted: int
    extract_ms: int
    write_ms: int
    link_ms: int
    contexts_ms: int
    anchors_ms: int
    snapshot_ms: int
    refs_relinked: int


class StructuralIndexer:
    name = "structural"
    schema_version = schema.SCHEMA_VERSION

    def __init__(self, workers: int | None = None) -> None:
        self._pool = ExtractionPool(workers)
        self.last_report: ApplyReport | None = None

    def create_schema(self, conn: sqlite3.Connection) -> None:
        schema.create(conn)

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        schema.drop(conn)

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        started = time.perf_counter()
        items = [(c.path, c.text) for c in changes if not c.deleted and c.text is not None]
        by_path: dict[str, Outcome] = {o.path: o for o in self._pool.extract(items)}
        failed = sorted(o.path for o in by_path.values() if o.status in (FAILED, NO_GRAMMAR, TOO_LARGE))
        if failed:  # skipped and counted (status shows them), never fatal (§18 item 3)
            _log.warning("structural_files_skipped", count=len(failed), first=failed[:5])
        extracted = time.perf_counter()
        effect = store.write_batch(conn, changes, [by_path.get(c.path) for c in changes], epoch)
        written = time.perf_counter()
        link = linking.relink(conn, effect)
        linked = time.perf_counter()
        rerouted = contexts.refresh(conn, effect)
        routed = time.perf_counter()
        removed = dict(effect.anchors_removed)
        for key, count in rerouted.anchors_removed.items():
            removed[key] = removed.get(key, 0) + count
        anchors.refresh(conn, removed, sorted(set(effect.upserted.values()) | set(rerouted.files)),
                        link.member_tokens)
        anchored = time.perf_counter()
        snapshots.record(conn, effect)
        done = time.perf_counter()

        def ms(a: float, b: float) -> int:
            return int((b - a) * 1000)

        self.last_report = ApplyReport(epoch, len(effect.upserted), len(effect.deleted), ms(started, extracted),
                                       ms(extracted, written), ms(written, linked), ms(linked, routed),
                                       ms(routed, anchored), ms(anchored, done), link.refs_changed)
        conn.execute("INSERT OR REPLACE INTO st_state(key, value) VALUES ('last_apply', ?)",
                     (json.dumps(self.last_report.__dict__),))

    def close(self) -> None:
        """Stop the extraction workers (the server's shutdown path)."""
        self._pool.close()
