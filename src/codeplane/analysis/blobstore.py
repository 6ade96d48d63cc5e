"""Blob facts that survive a restart: ``.codeplane/semantic_diff.db``, (path, blob id) -> ``FileDefs``.

A derived cache, never a source of truth: rows carry the version of everything that shapes them
(CodePlane, the grammar pack, the structural facts' schema, this module's layout: a checkout of CodePlane that
changes extraction keeps its package version), other versions are never read and are dropped on
open, the oldest-used rows go beyond ``MAX_ROWS``, and any SQLite failure (damage, a full disk, a
read-only file system) deletes the file once and otherwise leaves the diff running on the in-memory cache.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import zlib
from importlib import metadata
from pathlib import Path

from codeplane.analysis.models import DefState, FileDefs
from codeplane.core.logging import get_logger
from codeplane.index.structural.schema import SCHEMA_VERSION

log = get_logger(__name__)

#: Bump when ``FileDefs``/``DefState`` or how their hashes are computed changes.
LAYOUT = 2
MAX_ROWS = 50_000


def _version() -> str:
    parts = [f"layout{LAYOUT}", f"schema{SCHEMA_VERSION}"]
    for dist in ("codeplane", "tree-sitter-language-pack"):
        try:
            parts.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist}=?")
    return ";".join(parts)


def _encode(defs: FileDefs) -> bytes:
    rows = [list(d.__dict__.values()) for d in defs.defs]
    return zlib.compress(json.dumps([defs.status, defs.language, rows], separators=(",", ":")).encode(), 1)


def _decode(path: str, payload: bytes) -> FileDefs:
    status, language, rows = json.loads(zlib.decompress(payload))
    return FileDefs(path, language, status, tuple(DefState(*row) for row in rows))


class BlobFactsStore:
    def __init__(self, db: Path, *, max_rows: int = MAX_ROWS) -> None:
        self._db = db
        self._max = max_rows
        self._version = _version()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._failed = False
        self.hits = 0

    def _open(self) -> sqlite3.Connection | None:
        if self._conn is not None or self._failed:
            return self._conn
        for attempt in (1, 2):
            try:
                conn = sqlite3.connect(self._db, check_same_thread=False, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=OFF")  # a cache: damage is dropped, never trusted
                conn.execute("CREATE TABLE IF NOT EXISTS facts (path TEXT NOT NULL, blob TEXT NOT NULL, version TEXT "
                             "NOT NULL, used REAL NOT NULL, payload BLOB NOT NULL, PRIMARY KEY (path, blob)) "
                             "WITHOUT ROWID")
                conn.execute("CREATE INDEX IF NOT EXISTS facts_used ON facts(used)")
                conn.execute("DELETE FROM facts WHERE version != ?", (self._version,))
                self._conn = conn
                return conn
            except sqlite3.Error as exc:
                log.warning("semantic_diff cache unusable", path=str(self._db), error=str(exc), attempt=attempt)
                self._drop_file()
        self._failed = True
        return None

    def _drop_file(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                Path(f"{self._db}{suffix}").unlink(missing_ok=True)
            except OSError:
                pass

    def _fail(self, exc: sqlite3.Error) -> None:
        log.warning("semantic_diff cache failed; continuing in memory", path=str(self._db), error=str(exc))
        if self._conn is not None:
            self._conn.close()
        self._conn = None
        self._failed = True
        self._drop_file()

    def get(self, path: str, blob_id: str) -> FileDefs | None:
        with self._lock:
            conn = self._open()
            if conn is None:
                return None
            try:
                row = conn.execute("SELECT payload FROM facts WHERE path = ? AND blob = ? AND version = ?",
                                   (path, blob_id, self._version)).fetchone()
                if row is None:
                    return None
                conn.execute("UPDATE facts SET used = ? WHERE path = ? AND blob = ?", (time.time(), path, blob_id))
                self.hits += 1
                return _decode(path, row[0])
            except (sqlite3.Error, ValueError, zlib.error, TypeError) as exc:
                self._fail(exc if isinstance(exc, sqlite3.Error) else sqlite3.DatabaseError(str(exc)))
                return None

    def put(self, path: str, blob_id: str, defs: FileDefs) -> None:
        with self._lock:
            conn = self._open()
            if conn is None:
                return
            try:
                conn.execute("INSERT OR REPLACE INTO facts(path, blob, version, used, payload) VALUES (?, ?, ?, ?, ?)",
                             (path, blob_id, self._version, time.time(), _encode(defs)))
            except sqlite3.Error as exc:
                self._fail(exc)

    def put_many(self, items: list[tuple[str, str, FileDefs]]) -> None:
        """``put`` for a batch in one transaction: a transaction per row was ~4 % of a cold diff."""
        if not items:
            return
        with self._lock:
            conn = self._open()
            if conn is None:
                return
            now = time.time()
            try:
                with conn:
                    conn.execute("BEGIN")
                    conn.executemany("INSERT OR REPLACE INTO facts(path, blob, version, used, payload) VALUES "
                                     "(?, ?, ?, ?, ?)",
                                     [(path, blob_id, self._version, now, _encode(defs))
                                      for path, blob_id, defs in items])
            except sqlite3.Error as exc:
                self._fail(exc)

    def prune(self) -> None:
        """Keep the ``max_rows`` most recently used rows (called once per diff, not per file)."""
        with self._lock:
            conn = self._open()
            if conn is None:
                return
            try:
                (count,) = conn.execute("SELECT count(*) FROM facts").fetchone()
                if count > self._max:
                    conn.execute("DELETE FROM facts WHERE (path, blob) IN (SELECT path, blob FROM facts "
                                 "ORDER BY used LIMIT ?)", (count - self._max,))
            except sqlite3.Error as exc:
                self._fail(exc)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
