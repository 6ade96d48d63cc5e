"""The ledger's SQLite schema, v1 (§12.5 first schema with all columns, plus the D12 hash chain).

Append-only is enforced by the database itself, not by convention: triggers reject every UPDATE of
``operations`` and every DELETE unless the retention guard is raised inside the retention job's own
transaction (it is lowered again before that transaction commits). Closed tasks are final: a trigger
rejects any update of a task row whose state is no longer OPEN, and a task's identity columns
(id, session, opened_at, limits, repo snapshot) never change.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from pathlib import Path

from codeplane.core.errors import CodePlaneError, ErrorCode

#: Recorded in ``ledger_meta`` and checked at every open: a ledger recording a higher version (a newer CodePlane's,
#: after a downgrade) is refused before anything is written to it, since rows this version appends may break a
#: chain or a schema it does not know (the ledger is the one store that cannot be rebuilt). A lower one is migrated
#: by :func:`apply_schema`, which then records this version.
SCHEMA_VERSION = 1
#: The catalog entry a newer ledger is refused with.
NEWER_LEDGER_ERROR = ErrorCode.LEDGER_SCHEMA_NEWER

_DDL = """
CREATE TABLE IF NOT EXISTS ledger_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS ledger_guard (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  retention_active INTEGER NOT NULL DEFAULT 0
);
INSERT OR IGNORE INTO ledger_guard (id, retention_active) VALUES (1, 0);

CREATE TABLE IF NOT EXISTS tasks (
  task_id TEXT PRIMARY KEY,
  opened_at TIMESTAMP NOT NULL,
  closed_at TIMESTAMP,
  state TEXT NOT NULL CHECK (state IN ('OPEN', 'CLOSED_SUCCESS', 'CLOSED_FAILED', 'CLOSED_INTERRUPTED')),
  repo_head_sha TEXT,
  limits_json TEXT NOT NULL,
  -- beyond the §12.5 columns: the rest of the §12.2 persisted task state
  session_id TEXT NOT NULL,
  implicit INTEGER NOT NULL,
  index_version INTEGER,
  opened_at_ms INTEGER NOT NULL,
  closed_at_ms INTEGER,
  close_reason TEXT,
  limit_triggered TEXT,
  mutation_count INTEGER NOT NULL DEFAULT 0,
  test_run_count INTEGER NOT NULL DEFAULT 0,
  last_mutation_fingerprint TEXT,
  last_failure_fingerprint TEXT,
  mutated_since_failure INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks (state);
CREATE INDEX IF NOT EXISTS tasks_by_opened ON tasks (opened_at_ms);

CREATE TABLE IF NOT EXISTS operations (
  op_id INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT,
  timestamp TIMESTAMP NOT NULL,
  duration_ms INTEGER,
  op_type TEXT NOT NULL,
  success BOOLEAN NOT NULL,

  -- repo boundaries
  repo_before_hash TEXT,
  repo_after_hash TEXT,

  -- mutation summary (no content)
  changed_paths TEXT,
  diff_stats TEXT,
  short_diff TEXT,

  -- convergence signals
  mutation_fingerprint TEXT,
  failure_fingerprint TEXT,
  failure_class TEXT,
  failing_tests TEXT,
  limit_triggered TEXT,

  -- call context (content-free)
  session_id TEXT,
  kind TEXT,
  request_id TEXT,
  error_code INTEGER,
  no_op INTEGER,
  non_progress INTEGER,
  result_bytes INTEGER,
  detail TEXT,

  -- v1.5 artifact reference (the artifact may be gone; the chain never depends on it)
  artifact_id TEXT,
  artifact_sha256 TEXT,

  -- D12 hash chain
  prev_hash TEXT NOT NULL,
  row_hash TEXT NOT NULL,

  FOREIGN KEY (task_id) REFERENCES tasks (task_id)
);
CREATE INDEX IF NOT EXISTS operations_by_task ON operations (task_id);

CREATE TRIGGER IF NOT EXISTS operations_reject_update BEFORE UPDATE ON operations
BEGIN
  SELECT RAISE(ABORT, 'ledger operations are append-only: UPDATE rejected');
END;

CREATE TRIGGER IF NOT EXISTS operations_reject_delete BEFORE DELETE ON operations
WHEN (SELECT retention_active FROM ledger_guard WHERE id = 1) IS NOT 1
BEGIN
  SELECT RAISE(ABORT, 'ledger operations are append-only: DELETE rejected (only retention deletes)');
END;

CREATE TRIGGER IF NOT EXISTS tasks_reject_delete BEFORE DELETE ON tasks
WHEN (SELECT retention_active FROM ledger_guard WHERE id = 1) IS NOT 1
BEGIN
  SELECT RAISE(ABORT, 'ledger tasks are append-only: DELETE rejected (only retention deletes)');
END;

CREATE TRIGGER IF NOT EXISTS tasks_closed_are_final BEFORE UPDATE ON tasks
WHEN OLD.state <> 'OPEN'
BEGIN
  SELECT RAISE(ABORT, 'closed tasks are final: UPDATE rejected');
END;

CREATE TRIGGER IF NOT EXISTS tasks_identity_is_fixed
BEFORE UPDATE OF task_id, session_id, opened_at, opened_at_ms, limits_json, repo_head_sha, index_version,
  implicit ON tasks
BEGIN
  SELECT RAISE(ABORT, 'task identity columns never change: UPDATE rejected');
END;
"""


#: The append-only triggers, by name (``tamper.py`` looks for them before the schema is applied).
TRIGGERS = tuple(re.findall(r"CREATE TRIGGER IF NOT EXISTS (\w+)", _DDL))


def apply_schema(conn: sqlite3.Connection) -> None:
    """Create (idempotently) the v1 schema and its triggers; record the schema version (an older one's ledger is
    migrated by the same statements and then records this version). Call :func:`refuse_newer` first.

    One transaction: a statement that fails (a full disk) leaves the file as it was. Committed one statement at a
    time, a first open that failed half-way left a ledger without its triggers, which every later open reported as
    tampered with, or without ``operations``, which ``cpl doctor`` could not read."""
    # In the script itself: ``executescript`` commits a transaction opened before it.
    try:
        conn.executescript("BEGIN IMMEDIATE;\n" + _DDL)
        conn.execute("INSERT INTO ledger_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE "
                     "SET value = excluded.value WHERE CAST(value AS INTEGER) < CAST(excluded.value AS INTEGER)",
                     (str(SCHEMA_VERSION),))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite ends it itself on some errors (a full disk)
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


def recorded_version(conn: sqlite3.Connection) -> str | None:
    """The schema version a ledger records; ``None`` for a new file (nothing to check). Reads only."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ledger_meta'").fetchone() is None:
        return None
    row = conn.execute("SELECT value FROM ledger_meta WHERE key = 'schema_version'").fetchone()
    return None if row is None else str(row[0])


def newer_ledger(recorded: str | None, path: Path) -> CodePlaneError | None:
    """The refusal of a ledger whose recorded version this code does not know (higher, or not a number), naming
    both versions; ``None`` when it can be opened (and migrated)."""
    if recorded is None or (recorded.isdigit() and int(recorded) <= SCHEMA_VERSION):
        return None
    return CodePlaneError(
        NEWER_LEDGER_ERROR,
        f"{path} records ledger schema {recorded}, which this CodePlane (ledger schema {SCHEMA_VERSION}) does not "
        "know: a newer CodePlane wrote it. Run that version; this one refuses to write to it (nothing was written)",
        details={"path": str(path), "ledger_schema": recorded, "supported_schema": SCHEMA_VERSION})


def refuse_newer(conn: sqlite3.Connection, path: Path) -> None:
    """Raise :func:`newer_ledger`'s error for the ledger open on ``conn``; reads only."""
    refused = newer_ledger(recorded_version(conn), path)
    if refused is not None:
        raise refused


def refuse_newer_file(path: Path) -> None:
    """:func:`refuse_newer` for the ledger file at ``path``, opened read-only: for a start to refuse before it
    binds its port and says it serves. A file that cannot be read is the open's to judge (quarantine)."""
    if not path.is_file():
        return
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return
    try:
        recorded = recorded_version(conn)
    except sqlite3.Error:
        return
    finally:
        conn.close()
    refused = newer_ledger(recorded, path)
    if refused is not None:
        raise refused


def configure(conn: sqlite3.Connection) -> None:
    # WAL + synchronous=NORMAL: a commit is a sequential append without fsync (the WAL is synced at
    # checkpoints), which keeps the per-call cost well under a millisecond; a power cut may lose the
    # last few rows but never corrupts the chain.
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")
