"""``index.db``: the file table, epochs and meta in SQLite (WAL) (spec §5, §7.6, DECISIONS D5).

One writer connection, used only by whoever holds the index service's writer lock; any number of
read-only connections, one per thread, each reading a consistent snapshot inside ``read()``.
A failed integrity check or a different store schema version is not fatal: the file is removed and
rebuilt from disk (§5.8 "wipe and reindex"), with a warning.

How much is checked at open depends on how the file was left (issue 19: ``PRAGMA quick_check`` reads every
page, 1.2-2 s on Django's 187 MB store, most of a warm restart). A clean close (WAL checkpointed and emptied,
no corruption seen meanwhile) writes ``index.db-clean`` with the file's identity (size, inode, mtime,
ctime); open takes it away before touching the file. If it is there and still describes the file, only the
cheap check runs (header, schema, page count against the file size, the first and last row of every
table: ~2 ms); otherwise (a crash, a kill, a marker missing or stale because something wrote the file since)
the full ``quick_check`` runs as well. What the cheap check cannot see: pages garbled inside a file whose
size and timestamps did not change after a clean close (bit rot, a restore that kept the timestamps).
``cpl doctor`` always runs the full check.

A file deleted or replaced under the open store is damage too (QA44 §1): the writer went on publishing into the
unlinked inode while every new read connection failed ("unable to open database file", "disk I/O error") with
9001, for good. :meth:`IndexStore.replaced` compares the path's inode with the one opened; reads that fail on
such a file, and the indexer's periodic look (``check_replaced``), report it through ``on_damage``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.clock import monotonic
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.core.stores import drop_store
from codeplane.repo.universe import stamp_ns

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

#: Paths per ``IN (...)`` lookup: under SQLite's default limit of 32,766 bound parameters.
_IN_CHUNK = 500
_SCAN_FROM = 20_000
_FILE_COLUMNS = ("id, path, kind, language, size, mtime_ns, inode, content_hash, file_sha256, line_count, "
                 "indexed_epoch")

#: Beside ``index.db``: written by a clean close, removed by open (see the module docstring).
CLEAN_SUFFIX = "-clean"
#: SQLite result codes that mean the file itself is damaged (a store that raised one is not closed "clean").
_DAMAGE_CODES = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB
_HEADER = b"SQLite format 3\x00"

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

    def __init__(self, path: Path, *, trust_clean_close: bool = False) -> None:
        """``trust_clean_close``: keep the clean-close marker and skip the full check when it is valid
        (the server's and ``cpl init``'s store; scratch stores check fully and leave no marker)."""
        self.path = path
        self.trust_clean_close = trust_clean_close
        self._conn: sqlite3.Connection | None = None
        self._local = threading.local()
        self._generation = 0
        self._damage_seen = False
        #: The inode the writer opened: another one (or none) at ``path`` means the file was replaced (or deleted).
        self._inode: int | None = None
        #: Told when a statement finds the file damaged (the index service rebuilds it from disk, live).
        self.on_damage: Callable[[str], None] | None = None
        #: Whether the index serves reads (the index service's ready flag): a read that fails while it does not
        #: met a rebuild under way (its Tantivy index closed or not yet reopened) and is retryable, not a bug.
        self.serving: Callable[[], bool] | None = None
        self.rebuilt_reason: str | None = None
        #: How the last open checked the file: ``full`` (``quick_check``) or ``cheap`` (after a clean close).
        self.open_check = "full"
        #: Set while a first build is written straight into the file (``leave_wal``): a reader would wait for it.
        self.direct = False
        #: Set while a full check the open skipped is still owed (an adopted artifact checked after ready):
        #: a close then leaves no clean-close marker, so the next open runs it.
        self.check_owed = False

    # -- lifecycle -------------------------------------------------------------------------------------
    def open(self) -> None:
        """Open (creating or rebuilding as needed). Sets ``rebuilt_reason`` when the old file was dropped."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.rebuilt_reason = None
        self._damage_seen = False
        full = not self._take_clean_marker()
        self.open_check = "full" if full else "cheap"
        began = monotonic()
        conn: sqlite3.Connection | None = None
        try:
            conn = self._connect()
            problem = self._problem(conn, full=full)
        except sqlite3.DatabaseError as exc:
            problem = f"cannot open: {exc}"
        log.info("index.db checked", check=self.open_check, ms=round((monotonic() - began) * 1000, 1),
                 problem=problem)
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
        self._inode = self.path.stat().st_ino
        self._generation += 1

    def close(self) -> None:
        """Close the writer; a clean close (nothing pending in the WAL, no damage seen) leaves the marker."""
        if self._conn is not None:
            clean = self.trust_clean_close and not self._damage_seen and not self.check_owed \
                and self._checkpoint(self._conn)
            self._conn.close()
            self._conn = None
            self._inode = None
            if clean:
                self._write_clean_marker()
            elif self.trust_clean_close:
                log.info("index.db closed without a clean-close marker", damage_seen=self._damage_seen)
        self._generation += 1

    def note_error(self, exc: BaseException) -> None:
        """Told of a failure while the store was in use: one that says the file is damaged means the next
        open must check it fully, however this process ends."""
        if isinstance(exc, sqlite3.DatabaseError) and getattr(exc, "sqlite_errorcode", None) in _DAMAGE_CODES:
            self._damaged(f"{exc}")
        elif isinstance(exc, sqlite3.Error) and (gone := self.replaced()) is not None:
            self._damaged(f"{gone}; {exc}")

    def replaced(self) -> str | None:
        """Why ``index.db`` at its path is no longer the file the writer has open (deleted, or another file put
        there), or ``None``: it is, the store is closed, or the path cannot be looked at (not damage)."""
        if self._inode is None:
            return None
        try:
            inode = self.path.stat().st_ino
        except FileNotFoundError:
            return "the file was deleted"
        except OSError:
            return None
        return None if inode == self._inode else "the file was replaced by another"

    def check_replaced(self) -> bool:
        """The periodic look (a ``stat``): report a deleted or replaced file as damage; True if it was."""
        gone = self.replaced()
        if gone is not None:
            self._damaged(gone)
        return gone is not None

    def _damaged(self, what: str) -> None:
        self._damage_seen = True  # also: no clean-close marker for what the writer still has open
        if self.on_damage is not None:
            self.on_damage(what)

    # -- clean-close marker ----------------------------------------------------------------------------
    @property
    def _marker(self) -> Path:
        return Path(f"{self.path}{CLEAN_SUFFIX}")

    def _identity(self) -> dict[str, int] | None:
        """What changes whenever anything writes, replaces or restores ``index.db`` (ctime cannot be set back)."""
        try:
            st = self.path.stat()
            wal = Path(f"{self.path}-wal")
            wal_size = wal.stat().st_size if wal.exists() else 0
        except OSError:
            return None
        return {"size": st.st_size, "ino": st.st_ino, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns,
                "wal": wal_size}

    def _take_clean_marker(self) -> bool:
        """True if the marker says the file is as a clean close left it. Removes it first either way, so a
        crash from here on is never mistaken for a clean close; a marker that cannot be removed is distrusted."""
        marker = self._marker
        try:
            raw = marker.read_text(encoding="utf-8")
        except OSError:
            return False
        try:
            marker.unlink()
        except OSError:
            return False
        if not self.trust_clean_close:
            return False
        try:
            recorded = json.loads(raw)
        except ValueError:
            return False
        identity = self._identity()
        return identity is not None and identity["wal"] == 0 and recorded == identity

    def _checkpoint(self, conn: sqlite3.Connection) -> bool:
        """Move the WAL into the file and empty it; False if it could not be emptied (a reader held it)."""
        try:
            busy, log_frames, done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error as exc:
            self.note_error(exc)
            return False
        if busy:
            log.info("index.db checkpoint blocked by a reader", frames=log_frames, done=done)
        return bool(busy == 0)

    def _write_clean_marker(self) -> None:
        identity = self._identity()
        if identity is None or identity["wal"] != 0:
            log.info("index.db closed without a clean-close marker", wal_bytes=identity and identity["wal"])
            return
        tmp = Path(f"{self._marker}.tmp")
        try:
            tmp.write_text(json.dumps(identity, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self._marker)
        except OSError as exc:  # read-only or full: the next open checks fully, nothing else changes
            log.info("could not write index.db's clean-close marker", error=str(exc))
            tmp.unlink(missing_ok=True)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL keeps WAL commits atomic across a process crash (what epochs rely on) without an fsync
        # per commit; a power loss may drop the newest epochs, which the next start's reconcile redoes.
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _problem(self, conn: sqlite3.Connection, *, full: bool) -> str | None:
        problem = self._cheap_problem(conn)
        if problem is None and full:
            check = conn.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                problem = f"integrity check failed: {check[0] if check else 'no answer'}"
        if problem is not None:
            return problem
        has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if has_meta is None:
            return None
        found = self.get_meta("store_schema", conn)
        if found is not None and found != str(STORE_SCHEMA_VERSION):
            return f"store schema version {found} != {STORE_SCHEMA_VERSION}"
        return None

    def _cheap_problem(self, conn: sqlite3.Connection) -> str | None:
        """Truncation, garbage and a damaged schema or table edge, in a few page reads (not every page)."""
        size = self.path.stat().st_size
        if size == 0:
            return None  # a new store (an emptied one has no tables either: rebuilt all the same)
        with self.path.open("rb") as handle:
            if handle.read(len(_HEADER)) != _HEADER:
                return "integrity check failed: not an SQLite file header"
        conn.execute("PRAGMA schema_version").fetchone()
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
        wal = Path(f"{self.path}-wal")
        if pages * page_size > size and not (wal.exists() and wal.stat().st_size > 0):
            return f"integrity check failed: {pages} pages of {page_size} bytes but the file holds {size} bytes"
        tables = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                              " ORDER BY name").fetchall()
        for name, sql in tables:
            quoted = '"' + str(name).replace('"', '""') + '"'
            conn.execute(f"SELECT * FROM {quoted} LIMIT 1").fetchall()  # the table's leftmost leaf
            if "WITHOUT ROWID" not in str(sql or "").upper():
                conn.execute(f"SELECT rowid FROM {quoted} ORDER BY rowid DESC LIMIT 1").fetchall()  # rightmost
        return None

    def _remove_files(self) -> None:
        drop_store(self.path)  # also a directory where the file belongs
        self._marker.unlink(missing_ok=True)

    # -- journal ------------------------------------------------------------------------------------------
    def leave_wal(self) -> bool:
        """Before a first build into an empty file: write its pages straight into ``index.db``; True if so.

        Through the WAL, a first build writes the whole database twice: once into the WAL (one epoch is one
        transaction) and once more when the WAL is copied back (5 GB each on a 133k-file tree, and the copy ran
        beside the next epoch). A rollback journal keeps only pages that existed before the transaction (the
        empty schema's few), so the build is written once and a rollback or a crash still leaves the empty
        store. Readers wait meanwhile, which costs nothing: no query reads an index before its first build.
        SQLite refuses the switch while another connection has the file open in WAL mode: it then stays in
        WAL mode, as before.
        """
        try:
            row = self.conn.execute("PRAGMA journal_mode=DELETE").fetchone()
        except sqlite3.OperationalError:  # "database is locked"
            return False
        self.direct = row is not None and str(row[0]).lower() == "delete"
        return self.direct

    def ensure_wal(self) -> None:
        """Back to WAL mode after ``leave_wal`` (and before any later epoch, should that have failed: a reader
        was inside a transaction); logged, never raised, as the file is whole in either mode. A no-op unless
        ``leave_wal`` switched (every other epoch pays nothing)."""
        if not self.direct:
            return
        try:
            row = self.conn.execute("PRAGMA journal_mode=WAL").fetchone()
        except sqlite3.OperationalError:
            row = None
        if row is None or str(row[0]).lower() != "wal":
            log.info("index.db stays in rollback-journal mode until the next epoch", mode=row and row[0])
        else:
            self.direct = False

    @property
    def conn(self) -> sqlite3.Connection:
        """The writer connection (only under the index service's writer lock)."""
        if self._conn is None:
            raise RuntimeError("index store is not open")
        return self._conn

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection for this thread, inside one read transaction (a consistent snapshot).

        Re-entrant: a read opened inside another on the same thread shares its snapshot (e.g. ``refactor_impact``
        asks testing for the affected tests while it holds the facts it reports them for).
        """
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and conn.in_transaction and getattr(self._local, "generation", -1) == self._generation:
            yield conn
            return
        began = self._generation
        try:
            if conn is None or getattr(self._local, "generation", -1) != self._generation:
                if conn is not None:
                    conn.close()
                self._local.conn = None
                conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None, timeout=30)
                self._local.conn = conn
                self._local.generation = self._generation
            conn.execute("BEGIN")
        except sqlite3.DatabaseError as exc:  # opening a deleted file: "unable to open database file"
            self._read_failed(exc, began)
            raise
        try:
            yield conn
        except Exception as exc:
            self._read_failed(exc, began)
            raise
        finally:
            rollback(conn)

    def _read_failed(self, exc: Exception, began: int) -> None:
        """A damaged, deleted or replaced file is being rebuilt: 3004 (retryable), not 9001, meanwhile. So is what
        failed because the store was closed under the read (a rebuild began: the Tantivy index it reads is gone)."""
        if isinstance(exc, CodePlaneError):
            return
        if isinstance(exc, sqlite3.DatabaseError):
            self.note_error(exc)
            gone = self.replaced()
            if gone is not None or getattr(exc, "sqlite_errorcode", None) in _DAMAGE_CODES:
                raise CodePlaneError(ErrorCode.INDEX_NOT_READY, f"index.db is damaged ({gone or exc}); it is being "
                                     "rebuilt from disk: retry shortly", retryable=True) from exc
        if self._generation != began or (began and self._conn is None) or (self.serving and not self.serving()):
            raise CodePlaneError(ErrorCode.INDEX_NOT_READY, "the index was closed under this read (a rebuild from "
                                 "disk, or the server stopping): retry shortly", retryable=True,
                                 details={"cause": f"{type(exc).__name__}: {exc}"}) from exc

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

    def records_at(self, paths: Iterable[str], conn: sqlite3.Connection | None = None) -> dict[str, FileRecord]:
        """The rows of exactly these paths (a path with no row is left out)."""
        db = conn or self.conn
        wanted = sorted(set(paths))
        if len(wanted) > _SCAN_FROM:  # one pass over the table beats thousands of lookups
            every = self.all_records(db)
            return {path: every[path] for path in wanted if path in every}
        found: dict[str, FileRecord] = {}
        for start in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[start:start + _IN_CHUNK]
            rows = db.execute(f"SELECT {_FILE_COLUMNS} FROM files WHERE path IN ({','.join('?' * len(chunk))})",
                              chunk)
            found.update((r[1], _record(r)) for r in rows)
        return found

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


def stat_keys(conn: sqlite3.Connection) -> set[tuple[str, int, int, int, int]]:
    """``(path, size, mtime_ns, inode, is_symlink)`` of every row, the walk's view of a file: a full reconcile
    compares the two as sets (in C) and reads whole records only where they differ."""
    return set(conn.execute("SELECT path, size, mtime_ns, inode, kind = 'symlink' FROM files"))


def racy_paths(conn: sqlite3.Connection, mtime_from_ns: int) -> set[str]:
    """Paths of rows whose mtime is ``mtime_from_ns`` or later (their unchanged stat proves nothing)."""
    return {r[0] for r in conn.execute("SELECT path FROM files WHERE mtime_ns >= ?", (mtime_from_ns,))}


def mark_checked(path: Path) -> None:
    """Vouch for an ``index.db`` this process has just checked in full and closed (an adopted artifact): its
    next open skips the full check as after a clean close; any later change to the file voids the mark."""
    IndexStore(path, trust_clean_close=True)._write_clean_marker()


def differs_on_disk(conn: sqlite3.Connection, root: Path, paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` whose file on disk is not the one the table last saw (size, mtime, inode; gone or new)."""
    wanted = sorted(set(paths))
    if not wanted:
        return []
    stored = {str(p): (int(size), int(mtime), int(inode)) for p, size, mtime, inode in conn.execute(
        f"SELECT path, size, mtime_ns, inode FROM files WHERE path IN ({','.join('?' * len(wanted))})", wanted)}
    changed = []
    for path in wanted:
        try:
            st = os.lstat(root / path)
            now: tuple[int, int, int] | None = (st.st_size, stamp_ns(st), st.st_ino)
        except OSError:
            now = None
        if now != stored.get(path):
            changed.append(path)
    return changed


def rollback(conn: sqlite3.Connection) -> None:
    """End the open transaction, if SQLite has not ended it already: a full disk (``SQLITE_FULL``) or an I/O error
    rolls it back itself, and a ``ROLLBACK`` then raised "cannot rollback - no transaction is active" over the real
    error (a write's warning blamed that, not the full disk)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")

