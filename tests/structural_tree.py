"""A structural index in memory, fed batches of files: what the incremental-against-cold tests build on."""

from __future__ import annotations

import sqlite3

from codeplane.index.facts_api import FileChange
from codeplane.index.structural.indexer import ApplyReport, StructuralIndexer


class StructuralTree:
    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", isolation_level=None)
        self.indexer = StructuralIndexer(workers=1)
        self.indexer.create_schema(self.conn)
        self.epoch = 0
        #: The tree's files as applied so far.
        self.files: dict[str, str] = {}

    def apply(self, files: dict[str, str], deleted: tuple[str, ...] = ()) -> ApplyReport:
        """One epoch: ``files`` written, ``deleted`` removed; the indexer's report of it."""
        self.epoch += 1
        changes = [FileChange(p, None, t, f"sha-{p}-{hash(t)}") for p, t in files.items()]
        changes += [FileChange(p, None, None, "", deleted=True) for p in deleted]
        self.conn.execute("BEGIN IMMEDIATE")
        self.indexer.apply(self.conn, changes, self.epoch)
        self.conn.execute("COMMIT")
        self.files.update(files)
        for path in deleted:
            self.files.pop(path)
        assert self.indexer.last_report is not None
        return self.indexer.last_report
