"""Checking an index artifact before anything of it is used: it is data from elsewhere (spec §6).

:func:`unpack_verified` is the whole gate. The archive streams through zstd into the staging directory, every
tar member a regular file with a name from the artifact's layout (no ``..``, no absolute path, no link, no
device, no duplicate; 3104) and, after the manifest (which must come first), listed in it with the size its header
gives — refused from its header, so a small archive cannot fill the disk before the checks below (a decompression
bomb) — each part's sha256 taken as it is written and the archive's own sha256 as it is
read, compared with the expected value once it is all read (3103: before anything written is used, and ahead
of a broken tar's 3104). ``index.db``, opened with ``trusted_schema=OFF`` (and SQLite's defensive mode where
Python exposes it), gets SQLite's ``quick_check`` (3104; when the sha256 is pinned, after ``/ready`` instead:
``artifact_integrity.py``) on threads of its own, table by table as each table's pages are unpacked (the
manifest, first in the tar, says where they end) — reading a hostile file is what the check is for, and its
verdict counts only once the checksum matched. All of that needs no indexer, so the server runs it early.
While it runs, what needs no ``index.db`` is checked: the manifest's shape and versions (3104/3105), the
unpacked parts against the manifest (same set, same sizes and sha256; 3104), Tantivy's
documents. Once it passed, ``index.db`` is required to hold exactly the schema a fresh CodePlane store
creates — no extra table, index, trigger or view — plus a file table equal to the manifest's and only
canonical paths inside the repository, and Tantivy must be at the opstamp ``index.db`` records, holding
exactly its text files. Everything is written under the staging directory the caller owns; nothing outside
it is touched. A full disk (or quota, or file-size limit) while unpacking is 5010 ``STORAGE_FULL``, not a malformed
artifact.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tarfile
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

import tantivy
import zstandard

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.storage import storage_error
from codeplane.index.artifact_format import (
    INDEX_DB,
    MANIFEST,
    TANTIVY_DIR,
    Manifest,
    is_canonical,
    is_part_name,
    layout_hint,
    parse_manifest,
    part_sizes,
)
from codeplane.index.artifact_integrity import FileArrival, check_tables
from codeplane.index.epochs import indexer_meta_key
from codeplane.index.facts_api import FactIndexer
from codeplane.index.lexical import LexicalIndex
from codeplane.index.store import STORE_SCHEMA_VERSION, IndexStore

#: Bounds against a decompression bomb: members and unpacked bytes. Each part is held to the size its manifest
#: lists (read first); these are the last resort against a manifest that lists huge parts.
MAX_MEMBERS = 10_000
MAX_UNPACKED_BYTES = 64 * 1024**3
#: The manifest itself has no listed size: the 133k-file corpus's is 27 MB (about 200 bytes a file).
MAX_MANIFEST_BYTES = 1024**3
_BLOCK = 1 << 20
#: Threads the integrity check before adoption spreads its tables over (``check_tables``): its largest table
#: (the references) sets its time from two on.
_CHECK_THREADS = 2
#: A manifest read for its layout while the unpack goes on is at most this big (the 133k-file corpus': 27 MB).
_MAX_HINTED_MANIFEST = 256 * 1024**2
#: Columns holding repository paths (``lexical_path`` is a name inside code, not a file).
_PATH_COLUMNS = frozenset({"path", "file_path", "root_path"})


def _invalid(message: str, **details: object) -> CodePlaneError:
    return CodePlaneError(ErrorCode.ARTIFACT_INVALID, message, details=dict(details))


class _HashingReader:
    """The archive as read, hashed on the way: the checksum costs no second pass over it."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        block = self._raw.read(size)
        self._digest.update(block)
        return block

    def hexdigest_of_all(self) -> str:
        """The sha256 of the whole archive: what the unpack left unread (a tar's padding, or everything after a
        failure) is read and hashed too."""
        for block in iter(lambda: self._raw.read(_BLOCK), b""):
            self._digest.update(block)
        return self._digest.hexdigest()


def _compare_checksum(archive: Path, found: str, expected: str) -> None:
    if found != expected:
        raise CodePlaneError(ErrorCode.ARTIFACT_CHECKSUM_MISMATCH,
                             f"{archive.name} has sha256 {found}, expected {expected}",
                             details={"expected": expected, "found": found})


#: Called when ``index.db``'s member begins, with what tells how much of it is written.
_OnIndexDb = Callable[[FileArrival], None]


def _unpack(archive: Path, expected_sha256: str, staging: Path,
            on_index_db: _OnIndexDb | None = None) -> dict[str, tuple[str, int]]:
    """Stream the tar into ``staging``, hashing the archive as it is read; ``{name: (sha256, size)}`` of what was
    written. The checksum is compared once the whole archive is read, before anything written is used; an
    archive whose checksum is wrong is refused for that (3103) even when its tar broke off first (3104)."""
    with archive.open("rb") as raw:
        packed = _HashingReader(raw)
        try:
            written = _unpack_stream(packed, staging, on_index_db)
        except CodePlaneError:
            _compare_checksum(archive, packed.hexdigest_of_all(), expected_sha256)
            raise
        _compare_checksum(archive, packed.hexdigest_of_all(), expected_sha256)
    return written


def _unpack_stream(packed: _HashingReader, staging: Path,
                   on_index_db: _OnIndexDb | None) -> dict[str, tuple[str, int]]:
    written: dict[str, tuple[str, int]] = {}
    #: Every part's size as the manifest lists it: each later member's header is held to it.
    listed: dict[str, int] | None = None
    total = 0
    arrival: FileArrival | None = None
    try:
        (staging / TANTIVY_DIR).mkdir(parents=True)
        with ThreadPoolExecutor(1, thread_name_prefix="codeplane-artifact-sink") as sink, \
                ThreadPoolExecutor(1, thread_name_prefix="codeplane-artifact-hash") as hasher, \
                zstandard.ZstdDecompressor().stream_reader(cast("IO[bytes]", packed), closefd=False) as stream, \
                tarfile.open(fileobj=stream, mode="r|", bufsize=_BLOCK) as tar:  # 10 KiB reads cost CPU
            for member in tar:
                name = member.name
                _check_member(member, written, listed)
                total += member.size
                if len(written) >= MAX_MEMBERS or total > MAX_UNPACKED_BYTES:
                    raise _invalid("artifact unpacks to more than the allowed size or member count")
                source = tar.extractfile(member)
                if source is None:
                    raise _invalid(f"artifact member {name!r} has no data", member=name)
                if name == INDEX_DB and on_index_db is not None:
                    arrival = FileArrival(staging / name, lambda: _layout_of(staging / MANIFEST))
                    on_index_db(arrival)
                    written[name] = (_copy_hashed(source, staging / name, sink, hasher, arrival=arrival,
                                                  size=member.size),
                                     member.size)
                    arrival.finish(True)
                else:
                    written[name] = (_copy_hashed(source, staging / name, sink, hasher), member.size)
                if name == MANIFEST:
                    listed = part_sizes((staging / MANIFEST).read_bytes())
    except OSError as exc:
        # The staging directory's file system is full (or a quota or the file-size limit is reached): the artifact
        # may be fine, and freeing space fixes it (5010, retryable), as everywhere else in CodePlane.
        full = storage_error(exc, doing="unpacking the index artifact", path=staging,
                             outcome="nothing of it was used")
        if full is not None:
            raise full from exc
        raise _invalid(f"artifact is not a readable .tar.zst: {type(exc).__name__}: {exc}") from exc
    except (tarfile.TarError, EOFError, ValueError, zstandard.ZstdError) as exc:
        raise _invalid(f"artifact is not a readable .tar.zst: {type(exc).__name__}: {exc}") from exc
    finally:
        if arrival is not None:
            arrival.finish(False)  # no-op once complete: only a failed unpack leaves it unfinished
    if MANIFEST not in written:
        raise _invalid("artifact has no manifest.json")
    return written


def _check_member(member: tarfile.TarInfo, written: dict[str, tuple[str, int]], listed: dict[str, int] | None) -> None:
    """Refuse a member from its header alone, before any of its bytes is written: a link or special file, a name
    outside the layout, a repeat, a manifest that is not first or is too big, and a part the manifest does not list
    or lists with another size (the tar reader yields exactly the header's size, so nothing bigger is written)."""
    name = member.name
    if not member.isreg():
        raise _invalid(f"artifact member {name!r} is not a regular file (links and directories are refused)",
                       member=name)
    if name != MANIFEST and not is_part_name(name):
        raise _invalid(f"artifact member {name!r} is outside the artifact's layout", member=name)
    if name in written:
        raise _invalid(f"artifact member {name!r} appears twice", member=name)
    if name == MANIFEST:
        if member.size > MAX_MANIFEST_BYTES:
            raise _invalid(f"artifact's manifest.json is {member.size} bytes (at most {MAX_MANIFEST_BYTES} are read)",
                           member=name, size=member.size)
        return
    if listed is None:
        raise _invalid(f"artifact member {name!r} comes before manifest.json, which must be first (it lists the "
                       "size of every part)", member=name)
    if name not in listed:
        raise _invalid(f"artifact member {name!r} is not listed in its manifest", member=name)
    if member.size != listed[name]:
        raise _invalid(f"part {name} is {member.size} bytes in the archive; the manifest says {listed[name]} bytes",
                       part=name, size=member.size, listed=listed[name])


def _copy_hashed(source: IO[bytes], path: Path, sink: ThreadPoolExecutor, hasher: ThreadPoolExecutor, *,
                 arrival: FileArrival | None = None, size: int = 0) -> str:
    """Write ``source`` to a new file at ``path``; its sha256. Each block is written on ``sink``'s thread and hashed
    on ``hasher``'s while this one decompresses the next: three stages (zstd, sha256 and the write all let go of the
    GIL), so the costliest sets the pace and the cores share the rest. Which one that is depends on the machine: on
    a VM whose host takes back idle memory, each new page of the page cache costs the kernel ≈2.8 s per GB written,
    against ≈1 s per GB for zstd and 0.6 s for sha256 (hashing beside the write, it waited for it).

    With ``arrival``, the file is first given its final ``size`` (a check reads it while it is written: SQLite
    refuses a file shorter than its header says) and ``arrival`` hears each block once it is on disk."""
    digest = hashlib.sha256()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags, 0o600), "wb") as out:
        if arrival is not None:
            os.ftruncate(out.fileno(), size)
        done = 0

        def write(block: bytes) -> None:
            nonlocal done
            out.write(block)
            if arrival is not None:
                out.flush()
                done += len(block)
                arrival.wrote(done)

        pending: list[Future[None]] = []
        try:
            for block in iter(lambda: source.read(_BLOCK), b""):
                for stage in pending:
                    stage.result()
                pending = [sink.submit(write, block), hasher.submit(digest.update, block)]
        finally:
            for stage in pending:
                stage.result()  # never leave a write running past the file's close (or a failure)
    return digest.hexdigest()


def _layout_of(manifest: Path) -> tuple[tuple[str, int], ...]:
    """Where ``index.db``'s tables end, from the manifest unpacked before it (``()`` if there is none to trust the
    order from: every table is then checked once the file is complete)."""
    try:
        if manifest.stat().st_size > _MAX_HINTED_MANIFEST:
            return ()
        return layout_hint(manifest.read_bytes())
    except OSError:
        return ()


def _check_parts(manifest: Manifest, written: dict[str, tuple[str, int]]) -> None:
    found = set(written) - {MANIFEST}
    missing, extra = sorted(set(manifest.parts) - found), sorted(found - set(manifest.parts))
    if missing or extra:
        raise _invalid(f"artifact parts disagree with its manifest (missing {missing}, unlisted {extra})",
                       missing=missing, extra=extra)
    for name, digest in sorted(manifest.parts.items()):
        sha, size = written[name]
        if (sha, size) != (digest.sha256, digest.size):
            raise _invalid(f"part {name} has sha256 {sha} ({size} bytes); the manifest says {digest.sha256} "
                           f"({digest.size} bytes)", part=name)


def _schema_rows(conn: sqlite3.Connection) -> list[tuple[str, str, str, str | None]]:
    return sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"),
                  key=lambda r: (r[0], r[1], r[2], r[3] or ""))


def expected_schema(scratch: Path, indexers: Sequence[FactIndexer]) -> list[tuple[str, str, str, str | None]]:
    """sqlite_master of a fresh store with every indexer's tables, created at ``scratch`` (then removed)."""
    store = IndexStore(scratch)
    store.open()
    try:
        conn = store.conn
        for indexer in indexers:
            indexer.create_schema(conn)
        return _schema_rows(conn)
    finally:
        store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{scratch}{suffix}").unlink(missing_ok=True)


def _open_untrusted(path: Path) -> sqlite3.Connection:
    """A read-only connection to an artifact's ``index.db`` with defensive settings; one that cannot be opened is
    refused (3104)."""
    try:
        return _connect_untrusted(path)
    except sqlite3.DatabaseError as exc:
        raise _invalid(f"index.db cannot be opened: {exc}") from exc


def _connect_untrusted(path: Path) -> sqlite3.Connection:
    # immutable: no locks, no -wal/-shm next to the file; query_only: nothing can write through it.
    # Not bound to its thread: the integrity check's helpers' connections are closed by the thread that waits
    # for them.
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, isolation_level=None,
                           check_same_thread=False)
    defensive = getattr(sqlite3, "SQLITE_DBCONFIG_DEFENSIVE", None)
    if defensive is not None and hasattr(conn, "setconfig"):  # Python >= 3.12
        conn.setconfig(defensive, True)
    conn.execute("PRAGMA trusted_schema=OFF")
    conn.execute("PRAGMA cell_size_check=ON")
    conn.execute("PRAGMA query_only=ON")
    # No memory map: the integrity check reads each page once, and a fault per page of a mapping costs more than
    # a read() into SQLite's cache (throwaway A/B on the 133k corpus's 4.9 GB index.db: quick_check of the
    # references alone 13.0 s mapped, 10.9 s read; sidecar adoption 30.9, 30.2 s against 28.0, 27.8 s).
    return conn


def _quoted(name: str) -> str:
    return '"{}"'.format(name.replace('"', '""'))


def _path_columns(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """``(table, column)`` of every column holding repository paths (:data:`_PATH_COLUMNS`), from the schema alone."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return [(table, r[1]) for table in tables for r in conn.execute(f"PRAGMA table_info({_quoted(table)})")
            if r[1] in _PATH_COLUMNS]


def _check_fact_paths(conn: sqlite3.Connection) -> None:
    """Every path an indexer stored (columns named ``path``/``*_path`` except names inside code) must be
    canonical and inside the repository: facts name files that tools later open."""
    for table, column in _path_columns(conn):
        for (value,) in conn.execute(f"SELECT DISTINCT {_quoted(column)} FROM {_quoted(table)}"):
            if value is None or value == "":
                continue
            if not (isinstance(value, str) and is_canonical(value)):
                raise _invalid(f"index.db's {table}.{column} names a path that escapes the repository or is "
                               f"not canonical: {value!r}", table=table, column=column, path=repr(value)[:200])


def check_index_db(path: Path, manifest: Manifest, indexers: Sequence[FactIndexer],
                   expected: list[tuple[str, str, str, str | None]]) -> int:
    """Refuse an ``index.db`` that is not exactly CodePlane's (once its :class:`IntegrityCheck` passed) — ``expected``
    is :func:`expected_schema`'s answer; returns its recorded Tantivy opstamp."""
    conn = _open_untrusted(path)
    try:
        found = _schema_rows(conn)
        if found != expected:
            extra = sorted({(r[0], r[1]) for r in found} - {(r[0], r[1]) for r in expected})
            missing = sorted({(r[0], r[1]) for r in expected} - {(r[0], r[1]) for r in found})
            raise _invalid(f"index.db's schema is not CodePlane's (unexpected {extra or 'definitions'}, "
                           f"missing {missing})", unexpected=[list(e) for e in extra],
                           missing=[list(m) for m in missing])
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        wanted = {"store_schema": str(STORE_SCHEMA_VERSION), "tantivy_inflight": "[]"}
        wanted |= {indexer_meta_key(i): str(i.schema_version) for i in indexers}
        differ = {k: meta.get(k) for k, v in wanted.items() if meta.get(k) != v}
        if differ:
            raise _invalid(f"index.db's meta disagrees with this CodePlane: {differ}", meta=differ)
        try:
            opstamp = int(meta.get("tantivy_opstamp", ""))
            int(meta.get("epoch", ""))
        except ValueError as exc:
            raise _invalid("index.db's meta has no epoch or Tantivy opstamp") from exc
        table = conn.execute("SELECT path, file_sha256 FROM files ORDER BY path").fetchall()
        if table != [(f.path, f.sha256) for f in manifest.files]:
            raise _invalid("index.db's file table differs from the manifest's")
        _check_fact_paths(conn)
        return opstamp
    except sqlite3.DatabaseError as exc:
        raise _invalid(f"index.db cannot be read: {exc}") from exc
    finally:
        conn.close()


@dataclass(frozen=True)
class _TantivyDocs:
    opstamp: int
    #: ``(file_id, path)`` of every document.
    docs: frozenset[tuple[int, str]]


def _tantivy_docs(directory: Path) -> _TantivyDocs:
    """What ``tantivy/`` holds, read without ``index.db`` (so it overlaps that file's integrity check)."""
    lexical = LexicalIndex(directory, threads=1)
    try:
        lexical.open()
        if lexical.rebuilt_reason is not None:
            raise _invalid(f"tantivy/ cannot be opened: {lexical.rebuilt_reason}")
        opstamp, count = lexical.opened_opstamp, lexical.num_docs()
    finally:
        lexical.close()
    searcher = tantivy.Index.open(str(directory)).searcher()
    hits = searcher.search(tantivy.Query.all_query(), limit=count).hits if count else []
    docs = frozenset((doc["file_id"][0], doc["path"][0]) for doc in (searcher.doc(address) for _, address in hits))
    if len(docs) != count:
        raise _invalid(f"tantivy/ holds {count} documents but {len(docs)} distinct (file id, path) pairs")
    return _TantivyDocs(opstamp, docs)


def _check_tantivy(found: _TantivyDocs, opstamp: int, index_db: Path) -> None:
    if found.opstamp != opstamp:
        raise _invalid(f"tantivy/ is at opstamp {found.opstamp}; index.db records {opstamp}")
    conn = _open_untrusted(index_db)
    try:
        texts = set(conn.execute("SELECT id, path FROM files WHERE kind = 'text'").fetchall())
    finally:
        conn.close()
    if len(found.docs) != len(texts):
        raise _invalid(f"tantivy/ holds {len(found.docs)} documents; index.db has {len(texts)} text files")
    # Search opens the path a document names: each must be a text file of the file table, with its id.
    unlisted = sorted(found.docs - texts)
    if unlisted:
        file_id, path = unlisted[0]
        raise _invalid(f"tantivy/ has a document for {path!r} (file id {file_id}) that index.db's file table "
                       "does not list as a text file", path=repr(path)[:200])


def unpack_checked(archive: Path, expected_sha256: str, staging: Path, *,
                   integrity: bool = True) -> tuple[dict[str, tuple[str, int]], IntegrityCheck | None]:
    """The costly half, needing no indexer (the server runs it early, beside its imports): the tar into
    ``staging`` with every member's name and type checked and the archive's checksum taken on the way (3103),
    and ``index.db``'s integrity (3104), begun on a thread of its own as soon as ``index.db``'s member begins: each
    table is checked once its pages are unpacked (``FileArrival``), and its verdict used only once the archive's
    checksum matched. Returns ``{part: (sha256, size)}`` and that check (``None`` when ``integrity=False``: the
    caller runs it once the server is ready, ``artifact_integrity.py``) for :func:`verify_unpacked`, whose checks
    that need no ``index.db`` overlap it."""
    begun: list[IntegrityCheck] = []

    def begin(arrival: FileArrival) -> None:
        begun.append(IntegrityCheck(staging / INDEX_DB, arrival=arrival))

    try:
        written = _unpack(archive, expected_sha256, staging, begin if integrity else None)
    except BaseException:
        for check in begun:
            check.cancel()
        raise
    if INDEX_DB in written:  # else the manifest check refuses the artifact
        _flush_behind(staging / INDEX_DB)
    return written, (begun[0] if begun else None)


class IntegrityCheck:
    """SQLite's ``quick_check`` of an untrusted ``index.db``, the first thing run on it (SQLite's advice for
    database files from elsewhere: every page of every b-tree read once, so the costliest check), on a thread of
    its own. :meth:`cancel` interrupts it: a refusal for another reason must not leave it reading a file about to
    be removed, taking a core from the cold build that follows."""

    def __init__(self, path: Path, workers: int | None = None, arrival: FileArrival | None = None) -> None:
        self._done: Future[None] = Future()
        self._arrival = arrival
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._cancelled = False
        self._workers = workers if workers is not None else max(1, min(os.cpu_count() or 1, _CHECK_THREADS))
        #: Whether the check covered the whole file (else only every table's b-trees: the caller owes the rest).
        self.whole_file = True
        #: Tables whose b-trees passed so far (checked table by table), under ``_passed_changed``.
        self._passed: set[str] = set()
        self._passed_changed = threading.Condition(self._lock)
        threading.Thread(target=self._run, args=(path,), name="codeplane-artifact-check", daemon=True).start()

    def _run(self, path: Path) -> None:
        try:
            self._check(path)
            self._done.set_result(None)
        except BaseException as exc:  # noqa: BLE001 - delivered to whoever waits on result()
            self._done.set_exception(exc)

    def _check(self, path: Path) -> None:
        try:
            problem, self.whole_file = check_tables(lambda: self._open(path), self._workers, self._table_passed,
                                                    self._arrival)
        except sqlite3.DatabaseError as exc:
            raise _invalid(f"index.db cannot be read: {exc}") from exc
        finally:
            with self._lock:
                conns, self._conns = self._conns, []
            for conn in conns:
                conn.close()
        if problem is not None:
            raise _invalid(problem)

    def _open(self, path: Path) -> sqlite3.Connection:
        conn = _open_untrusted(path)
        with self._lock:
            if self._cancelled:
                conn.close()
                raise _invalid("index.db's integrity check was cancelled")
            self._conns.append(conn)
        return conn

    def _table_passed(self, table: str) -> None:
        with self._passed_changed:
            self._passed.add(table)
            self._passed_changed.notify_all()

    def wait_for(self, tables: Iterable[str]) -> None:
        """Wait until ``tables`` passed (checked table by table), or the whole check ended; raises what it found."""
        wanted = set(tables)
        with self._passed_changed:
            while not wanted <= self._passed and not self._done.done():
                self._passed_changed.wait(0.05)
        if not wanted <= self._passed:
            self._done.result()

    def result(self) -> None:
        """Wait for the check; raises what it found (3104)."""
        self._done.result()

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            for conn in self._conns:
                conn.interrupt()
        if self._arrival is not None:
            self._arrival.finish(False)  # wakes a check still waiting for pages (no-op once the file is whole)
        self._done.exception()  # wait for the thread to let go of the file


def _flush_behind(path: Path) -> None:
    """Start writing ``path``'s pages to disk on a thread, while the checks read them from the page cache.

    The swap fsyncs the file before renaming it into place (the commit point); without this, that fsync (or
    the first SQLite commit on the file) would wait for all of it (≈0.1 s for Django's 186 MB) on the
    critical path. Nothing waits for this thread; a removed staging directory only ends it early."""

    def flush() -> None:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass  # the swap's own fsync reports what matters
        finally:
            os.close(fd)

    threading.Thread(target=flush, name="codeplane-artifact-flush", daemon=True).start()


def verify_unpacked(staging: Path, written: dict[str, tuple[str, int]], indexers: Sequence[FactIndexer],
                    integrity: IntegrityCheck | None = None) -> Manifest:
    """The rest: manifest shape and versions, parts against the manifest, Tantivy's documents — all while
    ``integrity`` (``index.db``'s ``quick_check``, begun by :func:`unpack_checked`) runs — then, once it passed,
    ``index.db`` itself and Tantivy against it (3104/3105)."""
    # A fresh store's schema costs little CPU but a few fsyncs: built on a thread while the manifest is parsed.
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="codeplane-artifact-schema") as pool:
            expected = pool.submit(expected_schema, staging / "expected-schema.db", indexers)
            manifest = parse_manifest((staging / MANIFEST).read_bytes(), indexers)
            _check_parts(manifest, written)
            docs = _tantivy_docs(staging / TANTIVY_DIR)
            schema = expected.result()
            if integrity is not None:
                # Nothing reads a table of index.db before its b-trees passed: these checks read the schema, meta,
                # the file table and the tables holding paths, not the references, whose check takes longest.
                integrity.wait_for(["sqlite_schema"])
                integrity.wait_for(_tables_read_by_checks(staging / INDEX_DB))
            opstamp = check_index_db(staging / INDEX_DB, manifest, indexers, schema)
            _check_tantivy(docs, opstamp, staging / INDEX_DB)
            if integrity is not None:
                integrity.result()
    except BaseException:
        if integrity is not None:
            integrity.cancel()
        raise
    return manifest


def _tables_read_by_checks(index_db: Path) -> list[str]:
    """The tables :func:`check_index_db` and :func:`_check_tantivy` read: ``meta``, ``files`` and every table with a
    path column (:func:`_check_fact_paths`), found from the schema alone (its b-tree checked first)."""
    conn = _open_untrusted(index_db)
    try:
        return sorted({"meta", "files"} | {table for table, _ in _path_columns(conn)})
    except sqlite3.DatabaseError as exc:
        raise _invalid(f"index.db cannot be read: {exc}") from exc
    finally:
        conn.close()


def unpack_verified(archive: Path, expected_sha256: str, staging: Path,
                    indexers: Sequence[FactIndexer]) -> Manifest:
    """Run every check; on success ``staging`` holds ``index.db`` and ``tantivy/`` ready to swap in.

    Raises 3103/3104/3105; the caller removes ``staging`` either way.
    """
    written, integrity = unpack_checked(archive, expected_sha256, staging)
    return verify_unpacked(staging, written, indexers, integrity)
