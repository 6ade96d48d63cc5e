"""The extension point between the epoch pipeline (lexical index) and fact producers (structural index).

The index service owns reconcile, epochs and the single writer. For every batch of changed files it calls
each registered :class:`FactIndexer` inside the same SQLite transaction that publishes the epoch, so facts
and file rows change together (§7.6). Indexers must be deterministic and must not do I/O of their own
beyond the connection they are given.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Protocol


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
        """Replace facts for ``changes`` inside the caller's open transaction."""
