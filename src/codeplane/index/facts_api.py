"""The extension point between the epoch pipeline (lexical index) and fact producers (structural index).

The index service owns reconcile, epochs and the single writer. For every batch of changed files it calls
each registered :class:`FactIndexer` inside the same SQLite transaction that publishes the epoch, so facts
and file rows change together (§7.6). Indexers must be deterministic and must not do I/O of their own
beyond the connection they are given.

An indexer that also implements :class:`EpochHooks` is told where an epoch starts and ends, so it may defer
work across the epoch's batches (a cold index arrives in many batches) and finish it once, still inside the
transaction, before the epoch is published.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class FileChange:
    path: str
    #: §8.4.1 family key (``python``, ``javascript``, ...) or ``None`` when unknown.
    language: str | None
    #: Decoded text (UTF-8 with replacement) for added/modified files; ``None`` when deleted or not indexable.
    text: str | None
    #: SHA-256 of the exact bytes on disk ("" when deleted).
    file_sha256: str
    deleted: bool = False


class FactIndexer(Protocol):
    name: str
    #: Bump to force a rebuild of this indexer's tables at next start.
    schema_version: int

    def create_schema(self, conn: sqlite3.Connection) -> None:
        """Create tables/indexes if missing (idempotent)."""

    def drop_schema(self, conn: sqlite3.Connection) -> None:
        """Drop this indexer's tables (used when ``schema_version`` changed)."""

    def apply(self, conn: sqlite3.Connection, changes: list[FileChange], epoch: int) -> None:
        """Replace facts for ``changes`` inside the caller's open transaction (an :class:`EpochHooks` indexer
        may finish the work in ``finish_epoch``)."""


@runtime_checkable
class EpochHooks(Protocol):
    """Optional: bracket the ``apply`` calls of one epoch (all inside the same open transaction)."""

    def begin_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        """Before the epoch's first ``apply``; drops anything left over from an epoch that was rolled back."""

    def finish_epoch(self, conn: sqlite3.Connection, epoch: int) -> None:
        """After the epoch's last ``apply``: complete every deferred write before the transaction commits."""
