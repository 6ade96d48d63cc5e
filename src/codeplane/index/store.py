"""``index.db``: the file table, epochs and meta in SQLite (WAL) (spec §5, §7.6, DECISIONS D5).

One writer connection, used only by whoever holds the index service's writer lock; any number of
read-only connections, one per thread, each reading a consistent snapshot inside ``read()``.
A failed integrity check or a different store schema version is not fatal: the file is removed and
rebuilt from disk (§5.8 "wipe and reindex"), with a warning.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.logging import get_logger
from codeplane.core.stores import drop_store

log = get_logger(__name__)

#: Bump when the tables below change shape; an old ``index.db`` is then rebuilt from disk.
STORE_SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    language TEXT,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    file_sha256 TEXT NOT NULL,
    line_count INTEGER NOT NULL,
    indexed_epoch INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS files_by_hash ON files(content_hash);
CREATE TABLE IF NOT EXISTS epochs (
    id INTEGER PRIMARY KEY,
    published_ms INTEGER NOT NULL,
    reason TEXT NOT NULL,
    added INTEGER NOT NULL,
    modified INTEGER NOT NULL,
    deleted INTEGER NOT NULL,
    renamed INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL
);
"""

_FILE_COLUMNS = ("id, path, kind, language, size, mtime_ns, inode, content_hash, file_sha256, line_count, "
                 "indexed_epoch")

#: Epoch history kept in ``epochs`` (older rows are pruned when a new epoch is published).
EPOCH_HISTORY = 1000


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One row of the file table: what the index last saw of a universe path."""

    id: int
    path: str
    kind: str
    language: str | None
    size: int
    mtime_ns: int
    inode: int
    content_hash: str
    file_sha256: str
    line_count: int
    indexed_epoch: int


def _record(row: tuple[object, ...]) -> FileRecord:
    return FileRecord(*row)  # type: ignore[arg-type]


class IndexStore:
    """Owns ``index.db``. Not thread-safe for writes: callers serialise them (the writer lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._local = threading.local()
        self._generation = 0
        self.rebuilt_reason: str | None = None

    # -- lifecycle -------------------------------------------------------------------------------------
    def open(self) -> None:
        """Open (creating or rebuilding as needed). Sets ``rebuilt_reason`` when the old file was dropped."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.rebuilt_reason = None
        conn: sqlite3.Connection | None = None
        try:
            conn = self._connect()
            problem = self._problem(conn)
        except sqlite3.DatabaseError as exc:
            problem = f"cannot open: {exc}"
        if conn is None or problem is not None:
            if conn is not None:
                conn.close()
            log.warning("index.db is unusable; rebuilding it from disk", reason=problem)
            self._remove_files()
            conn = self._connect()
            self.rebuilt_reason = problem
        conn.executescript(_SCHEMA)
        if self.get_meta("store_schema", conn) is None:
            self.set_meta("store_schema", str(STORE_SCHEMA_VERSION), conn)
        self._conn = conn
        self._generation += 1

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._generation += 1

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL keeps WAL commits atomic across a process crash (what epochs rely on) without an fsync
        # per commit; a power loss may drop the newest epochs, which the next start's reconcile redoes.
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _problem(self, conn: sqlite3.Connection) -> str | None:
        check = conn.execute("PRAGMA quick_check").fetchone()
        if check is None or check[0] != "ok":
            return f"integrity check failed: {check[0] if check else 'no answer'}"
        has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if has_meta is None:
            return None
        found = self.get_meta("store_schema", conn)
        if found is not None and found != str(STORE_SCHEMA_VERSION):
            return f"store schema version {found} != {STORE_SCHEMA_VERSION}"
        return None

    def _remove_files(self) -> None:
        drop_store(self.path)  # also a directory where the file belongs

    @property
    def conn(self) -> sqlite3.Connection:
        """The writer connection (only under the index service's writer lock)."""
        if self._conn is None:
            raise RuntimeError("index store is not open")
        return self._conn

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection for this thread, inside one read transaction (a consistent snapshot)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "generation", -1) != self._generation:
            if conn is not None:
                conn.close()
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None, timeout=30)
            self._local.conn = conn
            self._local.generation = self._generation
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("ROLLBACK")

    # -- meta ------------------------------------------------------------------------------------------
    def get_meta(self, key: str, conn: sqlite3.Connection | None = None) -> str | None:
        row = (conn or self.conn).execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str, conn: sqlite3.Connection | None = None) -> None:
        (conn or self.conn).execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def get_json(self, key: str, default: object = None) -> object:
        raw = self.get_meta(key)
        return default if raw is None else json.loads(raw)

    # -- file table ------------------------------------------------------------------------------------
    def all_records(self, conn: sqlite3.Connection | None = None) -> dict[str, FileRecord]:
        rows = (conn or self.conn).execute(f"SELECT {_FILE_COLUMNS} FROM files")
        return {r[1]: _record(r) for r in rows}

    def records_for(self, paths: Iterable[str], conn: sqlite3.Connection | None = None) -> dict[str, FileRecord]:
        """Rows at or under each path (a path may name a directory)."""
        db = conn or self.conn
        found: dict[str, FileRecord] = {}
        for path in paths:
            if not path:
                return self.all_records(db)
            rows = db.execute(
                f"SELECT {_FILE_COLUMNS} FROM files WHERE path = ? OR (path > ? AND path < ?)",
                (path, path + "/", path + "0"),  # '0' sorts right after '/': the subtree's key range
            )
            found.update((r[1], _record(r)) for r in rows)
        return found

    def record(self, path: str, conn: sqlite3.Connection | None = None) -> FileRecord | None:
        row = (conn or self.conn).execute(f"SELECT {_FILE_COLUMNS} FROM files WHERE path = ?", (path,)).fetchone()
        return None if row is None else _record(row)

    def epoch(self, conn: sqlite3.Connection | None = None) -> int:
        raw = self.get_meta("epoch", conn)
        return int(raw) if raw is not None else 0
