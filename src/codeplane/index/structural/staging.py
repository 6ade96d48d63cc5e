"""Handing the big fact tables from extraction to the writer as a serialized SQLite database.

Scopes, binds, definitions and references are most of a file's rows (a cold index of Django: 1.2 million).
Binding them one by one into ``executemany`` on the single writer thread cost more than extracting them.
Instead the extraction worker inserts them into an in-memory database (in parallel, off the writer) and sends
its bytes; the writer attaches them (``deserialize``) and copies each table with one ``INSERT … SELECT``,
turning per-file positions into database ids through a small table of per-file id bases.

Rows of a batch are staged in file order, and a batch holds a contiguous run of the writer's files, so rows
land in the same order, with the same ids, as inserting them one by one would give.
"""

from __future__ import annotations

import itertools
import pickle
import sqlite3
from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol

from codeplane.core.collector import collector_paused
from codeplane.index.structural.extract import Outcome, extract_many, to_wire
from codeplane.index.structural.schema import ROLE_CODE, TIER_CODE

#: The writer's schema name for the attached batch (attached once per connection, then reused).
SCHEMA = "st_staged"
#: ``serialize``/``deserialize`` need an SQLite built with them (the default since 3.36); without them the rows
#: travel pickled and go through temporary tables: slower, same result.
SERIALIZE = hasattr(sqlite3.Connection, "serialize")
_TABLES = {
    "scope_rows": "file, local, parent, kind, sl, sc, el, ec",
    "bind_rows": "file, local, scope, name, target_kind, target_uid, certainty, reason",
    "def_rows": "file, uid, kind, name, lexical, sl, sc, el, ec, nl, nc, sig, display, parent_uid, scope, name_lc",
    "ref_rows": "file, local, scope, token, sl, sc, el, ec, role, tier, bind, target, via, member, shape",
}
#: Per file of the batch being copied: its ``st_file`` id and where its scope, bind and ref ids start.
_IDS = "temp.st_staged_ids"
_COPY = {
    "st_scope": "SELECT m.scope_base + r.local, m.file_id, CASE WHEN r.parent >= 0 THEN m.scope_base + r.parent END, "
                "r.kind, r.sl, r.sc, r.el, r.ec FROM {s}.scope_rows r",
    "st_bind": "SELECT m.bind_base + r.local, m.file_id, m.scope_base + r.scope, r.name, r.target_kind, "
               "r.target_uid, r.certainty, r.reason FROM {s}.bind_rows r",
    # qualified_name starts as the lexical path; linking prefixes the module name.
    "st_def": "SELECT r.uid, m.file_id, r.kind, r.name, r.lexical, r.lexical, r.sl, r.sc, r.el, r.ec, r.nl, r.nc, "
              "r.sig, r.display, r.parent_uid, m.scope_base + r.scope, r.name_lc FROM {s}.def_rows r",
    "st_ref(ref_id, file_id, scope_id, token_text, start_line, start_col, end_line, end_col, role_code, tier_code, "
    "bind_id, target_uid, via_import_uid, is_member, receiver_shape, local_tier_code, local_target_uid)":
        "SELECT m.ref_base + r.local, m.file_id, m.scope_base + r.scope, r.token, r.sl, r.sc, r.el, r.ec, r.role, "
        "r.tier, CASE WHEN r.bind >= 0 THEN m.bind_base + r.bind END, r.target, r.via, r.member, r.shape, r.tier, "
        "r.target FROM {s}.ref_rows r",
}


class FileIds(NamedTuple):
    file_id: int
    scope_base: int
    bind_base: int
    ref_base: int


class Staged(NamedTuple):
    """One batch's staged rows: the files in order, their (scopes, binds, refs) counts, the database bytes
    (``serialized``), or, where this SQLite cannot serialize, the pickled rows of each table."""

    paths: tuple[str, ...]
    counts: tuple[tuple[int, int, int], ...]
    data: bytes
    serialized: bool = True


class StagedOutcomes(NamedTuple):
    """Outcomes whose staged row lists are emptied (the rows travel in ``staged``)."""

    outcomes: list[Outcome]
    staged: Staged | None


def extract_staged(items: list[tuple[str, str]]) -> StagedOutcomes:
    """Extract ``items`` and stage their big tables; the unit of work of the extraction workers."""
    with collector_paused():
        staged = stage(extract_many(items))
        return StagedOutcomes([to_wire(o) for o in staged.outcomes], staged.staged)


def stage(outcomes: list[Outcome], *, serialize: bool = SERIALIZE) -> StagedOutcomes:
    db = sqlite3.connect(":memory:", isolation_level=None)
    try:
        for table, columns in _TABLES.items():
            db.execute(f"CREATE TABLE {table} ({columns})")
        db.execute("BEGIN")
        paths: list[str] = []
        counts: list[tuple[int, int, int]] = []
        light: list[Outcome] = []
        role_code, tier_code = ROLE_CODE, TIER_CODE
        tables: dict[str, list[tuple[object, ...]]] = {t: [] for t in _TABLES}
        scopes, binds, defs, refs = (tables[t] for t in _TABLES)
        for outcome in outcomes:
            facts = outcome.facts
            if facts is None:
                light.append(outcome)
                continue
            file = len(paths)
            paths.append(facts.path)
            counts.append((len(facts.scopes), len(facts.binds), len(facts.refs)))
            scopes += [(file, i, *row) for i, row in enumerate(facts.scopes)]
            binds += [(file, i, *row) for i, row in enumerate(facts.binds)]
            defs += [(file, *row, row[2].lower()) for row in facts.defs]
            refs += [(file, i, scope, token, sl, sc, el, ec, role_code[role], tier_code[tier], bind, target, via,
                      member, shape)
                     for i, (scope, token, sl, sc, el, ec, role, tier, _certainty, bind, target, via, member, shape)
                     in enumerate(facts.refs)]
            light.append(outcome._replace(facts=facts._replace(defs=[], scopes=[], binds=[], refs=[])))
            if len(refs) >= _PENDING_ROWS:
                _flush(db, tables)
        _flush(db, tables)
        db.execute("COMMIT")
        if not paths:
            return StagedOutcomes(light, None)
        if serialize:
            return StagedOutcomes(light, Staged(tuple(paths), tuple(counts), db.serialize()))
        return StagedOutcomes(light, Staged(tuple(paths), tuple(counts), pickle.dumps(_rows(db)), serialized=False))
    finally:
        db.close()


#: Rows per ``INSERT`` statement: one statement of many rows costs SQLite a quarter less than as many single-row
#: steps (``executemany``), and the staging is most of what a worker does besides parsing.
_ROWS_PER_STATEMENT = 64
#: References held before they are inserted (with the other tables' rows): a bound on a worker's memory.
_PENDING_ROWS = 50_000


def _flush(db: sqlite3.Connection, tables: dict[str, list[tuple[object, ...]]]) -> None:
    for table, rows in tables.items():
        if rows:
            _insert(db, table, rows)
            rows.clear()


def _insert(db: sqlite3.Connection, table: str, rows: list[tuple[object, ...]]) -> None:
    width = len(rows[0])
    one = f"({','.join('?' * width)})"
    whole = len(rows) - len(rows) % _ROWS_PER_STATEMENT
    if whole:
        statement = f"INSERT INTO {table} VALUES {','.join([one] * _ROWS_PER_STATEMENT)}"
        flat = list(itertools.chain.from_iterable(rows[:whole]))
        step = width * _ROWS_PER_STATEMENT
        for start in range(0, len(flat), step):
            db.execute(statement, flat[start:start + step])
    db.executemany(f"INSERT INTO {table} VALUES {one}", rows[whole:])


def _rows(db: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    return {table: db.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall() for table in _TABLES}


def counts_by_path(batches: Iterable[Staged]) -> dict[str, tuple[int, int, int]]:
    return {path: count for batch in batches for path, count in zip(batch.paths, batch.counts, strict=True)}


def _attached(conn: sqlite3.Connection) -> bool:
    """Whether the batch schema is attached to ``conn`` (attaching it now if needed and possible)."""
    if any(name == SCHEMA for _, name, _ in conn.execute("PRAGMA database_list")):
        return True
    try:
        # Allowed inside the open transaction; DETACH is not, so it stays attached to the writer connection.
        conn.execute(f"ATTACH DATABASE ':memory:' AS {SCHEMA}")
    except sqlite3.OperationalError:
        return False
    return True


def _load(conn: sqlite3.Connection, batch: Staged, attached: bool) -> str:
    """Make ``batch``'s rows readable by ``conn``; returns the schema holding them."""
    if batch.serialized and attached:
        conn.deserialize(batch.data, name=SCHEMA)
        return SCHEMA
    # The slow way (an old SQLite): the rows go through temporary tables.
    if batch.serialized:
        source = sqlite3.connect(":memory:")
        try:
            source.deserialize(batch.data)
            rows = _rows(source)
        finally:
            source.close()
    else:
        rows = pickle.loads(batch.data)
    for table, columns in _TABLES.items():
        conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {table} ({columns})")
        conn.execute(f"DELETE FROM temp.{table}")
        conn.executemany(f"INSERT INTO temp.{table} VALUES ({','.join('?' * (columns.count(',') + 1))})",
                         rows[table])
    return "temp"


class Rewrite(Protocol):
    def __call__(self, conn: sqlite3.Connection, source: str, paths: Sequence[str]) -> None: ...


def copy(conn: sqlite3.Connection, batches: Sequence[Staged], ids: dict[str, FileIds],
         rewrite: Rewrite | None = None) -> None:
    """Insert the staged rows of ``batches`` (in order) into the ``st_`` tables with database ids: the rows of
    the files in ``ids``, copied whole; each batch is then handed to ``rewrite`` (readable in the schema it
    is given) for the files already indexed (``rewrite.py``)."""
    if not batches:
        return
    attached = SERIALIZE and _attached(conn)
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {_IDS.split('.', 1)[1]} (file INTEGER PRIMARY KEY, "
                 "file_id INTEGER, scope_base INTEGER, bind_base INTEGER, ref_base INTEGER)")
    for batch in batches:
        source = _load(conn, batch, attached)
        conn.execute(f"DELETE FROM {_IDS}")
        conn.executemany(f"INSERT INTO {_IDS} VALUES (?,?,?,?,?)",
                         [(file, *ids[path]) for file, path in enumerate(batch.paths) if path in ids])
        for table, select in _COPY.items():
            # CROSS JOIN keeps the staged table as the outer loop: rows are copied in their staged order.
            conn.execute(f"INSERT INTO {table} {select.format(s=source)} CROSS JOIN {_IDS} m ON m.file = r.file "
                         "ORDER BY r.rowid")
        if rewrite is not None:
            rewrite(conn, source, batch.paths)
    if attached:
        conn.deserialize(_EMPTY, name=SCHEMA)  # free the last batch's memory


def _empty() -> bytes:
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE TABLE empty (x)")  # a database with no table at all cannot be serialized
        return db.serialize()
    finally:
        db.close()


_EMPTY = _empty() if SERIALIZE else b""
