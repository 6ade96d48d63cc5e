"""Coverage evidence on disk: ``.codeplane/coverage.db`` (derived data, like ``test_runs.db``).

One *batch* per pytest process of a ``run_test_targets(coverage=true)`` run: the repository files it loaded,
each with the SHA-256 of the content it ran (``cov_file``), and the function units that ran in it outside any
test (``cov_outside``: imports, collection). One row per test (pytest node id, repo-relative), the newest
recording wins, with its outcome, whether it ran code that was not seen (``unseen``: a subprocess), the
scope that recorded it (``""``: its whole file ran; else the case that was selected), its place in the
process's order, and the function units it ran (``cov_hit``, indexed by unit: "which tests ran this
definition" is the question selection asks). The units of each recorded file version (``cov_version``:
``coverage_units.FileUnits``) say later what changed since.

A damaged file is dropped and started empty (``core/stores.py``): the evidence is recorded again by the next
coverage run; until then selection falls back to the static graph.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.clock import now_ms
from codeplane.core.logging import get_logger
from codeplane.core.storage import storage_code
from codeplane.core.stores import open_derived_sqlite
from codeplane.testing.coverage_units import FileUnits

log = get_logger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cov_batch (
    batch_id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    recorded_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS cov_file (
    batch_id INTEGER NOT NULL,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    PRIMARY KEY (batch_id, path)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cov_file_version ON cov_file(path, sha256);
CREATE TABLE IF NOT EXISTS cov_version (
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    units TEXT NOT NULL,
    PRIMARY KEY (path, sha256)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cov_unit (
    unit_id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    name TEXT NOT NULL,
    UNIQUE (path, name)
);
-- Columns in primary-key order: SQLite 3.40's quick_check misreads a WITHOUT ROWID table otherwise.
CREATE TABLE IF NOT EXISTS cov_outside (
    unit_id INTEGER NOT NULL,
    batch_id INTEGER NOT NULL,
    PRIMARY KEY (unit_id, batch_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cov_test (
    test_id INTEGER PRIMARY KEY,
    nodeid TEXT NOT NULL UNIQUE,
    test_file TEXT NOT NULL,
    base TEXT NOT NULL,
    batch_id INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    unseen INTEGER NOT NULL,
    scope TEXT NOT NULL,
    seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS cov_test_file ON cov_test(test_file);
CREATE TABLE IF NOT EXISTS cov_hit (
    unit_id INTEGER NOT NULL,
    test_id INTEGER NOT NULL,
    PRIMARY KEY (unit_id, test_id)
) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class RecordedTest:
    #: ``tests/test_x.py::TestC::test_y[1]`` (repo-relative file).
    nodeid: str
    test_file: str
    outcome: str
    unseen: bool
    #: ``""``: recorded while its whole file ran; else the selected case that ran it.
    scope: str
    #: (path, qualified name) of every function unit it ran.
    units: frozenset[tuple[str, str]]
    #: Its place in its process's order of tests.
    seq: int = 0

    @property
    def case(self) -> str:
        return self.nodeid.split("::", 1)[1] if "::" in self.nodeid else ""

    @property
    def base(self) -> str:
        """The case without its parameters: ``TestC::test_y``."""
        return self.case.split("[", 1)[0]


@dataclass(frozen=True)
class RecordedBatch:
    run_id: str
    #: Repository files the process loaded → SHA-256 of the content that ran.
    files: Mapping[str, str]
    #: Units of those file versions the store does not hold yet.
    versions: Mapping[tuple[str, str], FileUnits]
    outside: frozenset[tuple[str, str]]
    tests: Sequence[RecordedTest]


@dataclass(frozen=True)
class TestRow:
    __test__ = False

    test_id: int
    nodeid: str
    test_file: str
    base: str
    batch_id: int
    outcome: str
    unseen: bool
    scope: str
    seq: int


class CoverageStore:
    """Thread-safe: one connection behind a lock. Writes are one transaction per recorded run; a selection
    reads under :meth:`reading`, so a recording never lands between two of its reads."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.RLock()
        self._db, self.recovery = open_derived_sqlite(path, _setup)
        #: Counts recordings that stored something: what a selection made before may no longer hold.
        self.generation = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._lock:
            yield

    # -- writing -----------------------------------------------------------------------------------
    def record(self, batches: Sequence[RecordedBatch]) -> int:
        """Store ``batches``; a test recorded again replaces its older row. Returns tests stored; 0 when the
        store could not be written (logged: selection then goes on with what it had)."""
        stored = 0
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for batch in batches:
                    stored += self._record_batch(batch)
                self._collect_garbage()
                self._db.execute("COMMIT")
                self.generation += 1
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                kind = "storage" if storage_code(exc) is not None else "database"
                log.warning("coverage evidence not stored", failure=kind, reason=str(exc))
                return 0
        return stored

    def _record_batch(self, batch: RecordedBatch) -> int:
        db = self._db
        batch_id = int(db.execute("INSERT INTO cov_batch (run_id, recorded_ms) VALUES (?, ?)",
                                  (batch.run_id, now_ms())).lastrowid or 0)
        db.executemany("INSERT INTO cov_file (batch_id, path, sha256) VALUES (?, ?, ?)",
                       [(batch_id, p, s) for p, s in sorted(batch.files.items())])
        db.executemany("INSERT OR IGNORE INTO cov_version (path, sha256, units) VALUES (?, ?, ?)",
                       [(p, s, u.encode()) for (p, s), u in sorted(batch.versions.items())])
        units = self._unit_ids({u for t in batch.tests for u in t.units} | set(batch.outside))
        db.executemany("INSERT OR IGNORE INTO cov_outside (batch_id, unit_id) VALUES (?, ?)",
                       [(batch_id, units[u]) for u in sorted(batch.outside)])
        for test in batch.tests:
            db.execute("DELETE FROM cov_test WHERE nodeid = ?", (test.nodeid,))
            test_id = int(db.execute(
                "INSERT INTO cov_test (nodeid, test_file, base, batch_id, outcome, unseen, scope, seq) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (test.nodeid, test.test_file, test.base, batch_id, test.outcome,
                                                    int(test.unseen), test.scope, test.seq)).lastrowid or 0)
            db.executemany("INSERT OR IGNORE INTO cov_hit (unit_id, test_id) VALUES (?, ?)",
                           [(units[u], test_id) for u in sorted(test.units)])
        return len(batch.tests)

    def _unit_ids(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], int]:
        ids = {}
        for path, name in sorted(set(keys)):
            self._db.execute("INSERT OR IGNORE INTO cov_unit (path, name) VALUES (?, ?)", (path, name))
            row = self._db.execute("SELECT unit_id FROM cov_unit WHERE path = ? AND name = ?", (path, name)).fetchone()
            ids[(path, name)] = int(row[0])
        return ids

    def _collect_garbage(self) -> None:
        """Rows nothing refers to any more: hits of replaced tests, batches without tests, their files."""
        db = self._db
        db.execute("DELETE FROM cov_hit WHERE test_id NOT IN (SELECT test_id FROM cov_test)")
        db.execute("DELETE FROM cov_batch WHERE batch_id NOT IN (SELECT DISTINCT batch_id FROM cov_test)")
        db.execute("DELETE FROM cov_file WHERE batch_id NOT IN (SELECT batch_id FROM cov_batch)")
        db.execute("DELETE FROM cov_outside WHERE batch_id NOT IN (SELECT batch_id FROM cov_batch)")
        db.execute("DELETE FROM cov_version WHERE NOT EXISTS (SELECT 1 FROM cov_file f WHERE f.path = "
                   "cov_version.path AND f.sha256 = cov_version.sha256)")

    # -- reading -----------------------------------------------------------------------------------
    def empty(self) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM cov_test LIMIT 1").fetchone() is None

    def known_versions(self, keys: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
        with self._lock:
            return {k for k in set(keys) if self._db.execute(
                "SELECT 1 FROM cov_version WHERE path = ? AND sha256 = ?", k).fetchone() is not None}

    def recorded_versions(self) -> dict[tuple[str, str], list[int]]:
        """(path, SHA-256) of every recorded file version → the batches that loaded it."""
        found: dict[tuple[str, str], list[int]] = {}
        with self._lock:
            for path, sha, batch_id in self._db.execute("SELECT path, sha256, batch_id FROM cov_file"):
                found.setdefault((str(path), str(sha)), []).append(int(batch_id))
        return found

    def units_of(self, path: str, sha: str) -> FileUnits | None:
        with self._lock:
            row = self._db.execute("SELECT units FROM cov_version WHERE path = ? AND sha256 = ?",
                                   (path, sha)).fetchone()
        return FileUnits.decode(str(row[0])) if row else None

    def batch_runs(self) -> dict[int, str]:
        with self._lock:
            return {int(b): str(r) for b, r in self._db.execute("SELECT batch_id, run_id FROM cov_batch")}

    def batch_file_sha(self, batch_id: int, path: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT sha256 FROM cov_file WHERE batch_id = ? AND path = ?",
                                   (batch_id, path)).fetchone()
        return str(row[0]) if row else None

    def ran(self, units: Iterable[tuple[str, str]]) -> tuple[dict[int, set[tuple[str, str]]],
                                                             dict[int, set[tuple[str, str]]]]:
        """For these units: test id → the ones it ran, and batch id → the ones that ran outside any test."""
        wanted = sorted(set(units))
        by_test: dict[int, set[tuple[str, str]]] = {}
        by_batch: dict[int, set[tuple[str, str]]] = {}
        with self._lock:
            for path, name in wanted:
                row = self._db.execute("SELECT unit_id FROM cov_unit WHERE path = ? AND name = ?",
                                       (path, name)).fetchone()
                if row is None:
                    continue
                for (test_id,) in self._db.execute("SELECT test_id FROM cov_hit WHERE unit_id = ?", (row[0],)):
                    by_test.setdefault(int(test_id), set()).add((path, name))
                for (batch_id,) in self._db.execute("SELECT batch_id FROM cov_outside WHERE unit_id = ?", (row[0],)):
                    by_batch.setdefault(int(batch_id), set()).add((path, name))
        return by_test, by_batch

    def tests_running(self, units: Iterable[tuple[str, str]]) -> set[int]:
        """Tests that ran any of ``units`` (one query over a temporary table: there may be thousands)."""
        with self._lock:
            db = self._db
            db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted_unit (path TEXT NOT NULL, name TEXT NOT NULL)")
            db.execute("DELETE FROM wanted_unit")
            db.executemany("INSERT INTO wanted_unit (path, name) VALUES (?, ?)", sorted(set(units)))
            found = {int(t) for (t,) in db.execute(
                "SELECT DISTINCT h.test_id FROM wanted_unit w JOIN cov_unit u ON u.path = w.path AND u.name = w.name "
                "JOIN cov_hit h ON h.unit_id = u.unit_id")}
            db.execute("DELETE FROM wanted_unit")
        return found

    def tests_in(self, test_files: Iterable[str]) -> list[TestRow]:
        rows: list[TestRow] = []
        with self._lock:
            for path in sorted(set(test_files)):
                rows += [_row(r) for r in self._db.execute(
                    "SELECT test_id, nodeid, test_file, base, batch_id, outcome, unseen, scope, seq FROM cov_test "
                    "WHERE test_file = ? ORDER BY nodeid", (path,))]
        return rows

    def tests_by_id(self, test_ids: Iterable[int]) -> list[TestRow]:
        wanted = sorted(set(test_ids))
        rows: list[TestRow] = []
        with self._lock:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                rows += [_row(r) for r in self._db.execute(
                    "SELECT test_id, nodeid, test_file, base, batch_id, outcome, unseen, scope, seq FROM cov_test "
                    f"WHERE test_id IN ({','.join('?' * len(chunk))}) ORDER BY nodeid", chunk)]
        return rows

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _row(raw: Sequence[object]) -> TestRow:
    test_id, nodeid, test_file, base, batch_id, outcome, unseen, scope, seq = raw
    return TestRow(int(str(test_id)), str(nodeid), str(test_file), str(base), int(str(batch_id)), str(outcome),
                   bool(unseen), str(scope), int(str(seq)))


#: Bump when the tables change shape: an older file's tables are dropped (evidence is recorded again).
SCHEMA_VERSION = 2
_TABLES = ("cov_batch", "cov_file", "cov_version", "cov_unit", "cov_outside", "cov_test", "cov_hit")


def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    if int(conn.execute("PRAGMA user_version").fetchone()[0]) != SCHEMA_VERSION:
        for table in _TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    conn.executescript(_SCHEMA)
