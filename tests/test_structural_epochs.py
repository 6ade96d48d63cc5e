"""One epoch in many batches (a cold index) gives the same facts as one batch; the deferred work and the
dropped indexes of a cold epoch never outlive a rollback; rows staged by the extraction workers land exactly
as if written directly."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from codeplane.index.facts_api import EpochHooks, FileChange
from codeplane.index.pipeline import Prewarm
from codeplane.index.structural import bulk, staging
from codeplane.index.structural import session as epoch_session
from codeplane.index.structural.chase import Chaser
from codeplane.index.structural.extract import extract_many, to_wire
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.index.structural.schema import INDEXES
from codeplane.index.structural.session import EpochSession
from codeplane.index.structural.staging import extract_staged, stage
from codeplane.index.structural.store import write_batch
from codeplane.index.structural.workers import START_POOL_CHARS, ExtractionPool, _cost, _runs
from tests.structural_corpus import generate

CORPUS = {
    **{f"gen/{name}": text for name, text in generate(24, seed=7).items()},
    "gen/__init__.py": "from .m0 import *\n",
    "pyproject.toml": "[project]\nname = 'shop'\n",
    "shop/__init__.py": "from .models import Cart, total as compute\n__all__ = ['Cart', 'compute']\n",
    "shop/models.py": "class Cart:\n    def add(self, item):\n        return total([item])\n\n\ndef total(items):\n"
                      "    return sum(items)\n",
    "shop/cli.py": "from shop import Cart, compute\nimport shop.models as sm\n\n\ndef main(cart):\n"
                   "    cart.add(1)\n    sm.Cart\n    return compute([Cart()])\n",
    "web/package.json": json.dumps({"name": "web"}),
    "web/src/util/index.ts": "export function join(a: string) { return a; }\nexport * from './more';\n",
    "web/src/util/more.ts": "export const extra = 1;\n",
    "web/src/app.ts": "import { join, extra } from './util';\njoin('x'); extra; window.run(); other.run();\n",
}


def _changes(files: dict[str, str], tag: str = "1") -> list[FileChange]:
    return [FileChange(p, None, t, f"sha-{tag}") for p, t in sorted(files.items())]


def _dump(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    tables = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'st_%' "
                                         "AND name != 'st_state' ORDER BY name")]
    out = {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
    out["indexes"] = sorted(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' "
                                         "AND sql IS NOT NULL"))
    return out


def _fresh() -> tuple[sqlite3.Connection, StructuralIndexer]:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    indexer = StructuralIndexer(workers=1)
    indexer.create_schema(conn)
    return conn, indexer


def _epoch(conn: sqlite3.Connection, indexer: StructuralIndexer, epoch: int, batches: list[list[FileChange]]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    indexer.begin_epoch(conn, epoch)
    for batch in batches:
        indexer.apply(conn, batch, epoch)
    indexer.finish_epoch(conn, epoch)
    conn.execute("COMMIT")


def test_the_structural_indexer_takes_epoch_hooks() -> None:
    assert isinstance(StructuralIndexer(workers=1), EpochHooks)


def test_a_cold_epoch_in_many_batches_stores_what_one_batch_stores_then_edits_agree_too() -> None:
    whole, whole_indexer = _fresh()
    _epoch(whole, whole_indexer, 1, [_changes(CORPUS)])
    split, split_indexer = _fresh()
    changes = _changes(CORPUS)
    _epoch(split, split_indexer, 1, [changes[i:i + 5] for i in range(0, len(changes), 5)])
    assert _dump(split) == _dump(whole)
    assert {name for name, _ in _dump(split)["indexes"]} >= set(INDEXES)
    assert split.execute("SELECT count(*) FROM st_ref WHERE ref_tier = 'STRONG'").fetchone()[0] > 0
    assert split.execute("SELECT count(*) FROM st_anchor_group").fetchone()[0] > 0

    edit = {"shop/models.py": CORPUS["shop/models.py"].replace("def total(items):", "def total(items, k=0):")}
    gone = [FileChange("web/src/util/more.ts", None, None, "", deleted=True)]
    for conn, indexer in ((whole, whole_indexer), (split, split_indexer)):
        _epoch(conn, indexer, 2, [gone, _changes(edit, "2")])  # deletions come first, as the pipeline sends them
    assert _dump(split) == _dump(whole)
    single, single_indexer = _fresh()
    single_indexer.apply(single, _changes(CORPUS), 1)  # no hooks: one apply is a whole epoch
    single_indexer.apply(single, [*gone, *_changes(edit, "2")], 2)
    assert _dump(single) == _dump(whole)


def test_an_epoch_without_structural_changes_leaves_the_store_alone() -> None:
    conn, indexer = _fresh()
    before = _dump(conn)
    _epoch(conn, indexer, 1, [])  # e.g. a lexical repair: the hooks run, apply never does
    assert _dump(conn) == before and indexer.last_report is None


def test_a_path_twice_in_one_epoch_is_linked_in_between_as_if_in_two_epochs() -> None:
    first = {**CORPUS, "shop/models.py": "def total(items):\n    return 0\n"}
    second = {"shop/models.py": CORPUS["shop/models.py"]}
    twice, indexer = _fresh()
    _epoch(twice, indexer, 1, [_changes(first), _changes(second)])
    apart, apart_indexer = _fresh()
    apart_indexer.apply(apart, _changes(first), 1)
    apart_indexer.apply(apart, _changes(second), 1)
    assert _dump(twice) == _dump(apart)
    cart = apart.execute("SELECT def_uid FROM st_def WHERE qualified_name = 'shop.models.Cart'").fetchone()[0]
    assert twice.execute("SELECT count(*) FROM st_ref WHERE target_uid = ? AND ref_tier = 'STRONG'",
                         (cart,)).fetchone()[0] >= 2


def test_a_rolled_back_cold_epoch_leaves_the_store_and_its_indexes_as_they_were() -> None:
    conn, indexer = _fresh()
    before = _dump(conn)
    conn.execute("BEGIN IMMEDIATE")
    indexer.begin_epoch(conn, 1)
    indexer.apply(conn, _changes(CORPUS), 1)
    indexer.apply(conn, _changes({"late.py": "x = 1\n"}), 1)
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'st_ref_token'").fetchone()[0] == 0
    conn.execute("ROLLBACK")  # e.g. the Tantivy commit failed: finish_epoch never ran
    assert _dump(conn) == before
    _epoch(conn, indexer, 1, [_changes(CORPUS)])  # the next attempt starts clean
    whole, whole_indexer = _fresh()
    _epoch(whole, whole_indexer, 1, [_changes(CORPUS)])
    assert _dump(conn) == _dump(whole)


def test_rows_staged_in_several_runs_land_as_if_staged_at_once() -> None:
    changes = _changes(CORPUS)
    items = [(c.path, c.text or "") for c in changes]
    outcomes = extract_many(items)
    runs = [stage(outcomes[start:end]) for start, end in _runs([_cost(path, text) for path, text in items], 5)]
    assert len(runs) >= 4
    split, _ = _fresh()
    split.execute("BEGIN")
    write_batch(split, changes, [o for run in runs for o in run.outcomes], [r.staged for r in runs if r.staged], 1)
    split.execute("COMMIT")
    whole, _ = _fresh()
    single = stage(outcomes)
    whole.execute("BEGIN")
    write_batch(whole, changes, single.outcomes, [single.staged] if single.staged else [], 1)
    whole.execute("COMMIT")
    assert _dump(split) == _dump(whole)
    assert split.execute("SELECT count(*) FROM st_ref").fetchone()[0] == sum(len(o.facts.refs) for o in outcomes
                                                                            if o.facts is not None)


def test_rows_inserted_many_per_statement_and_in_flushes_land_as_one_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker inserts its rows many to a statement, the tail one by one, and holds at most so many references
    before inserting: the tables hold the same rows in the same order (ids) whatever those sizes."""
    changes = _changes(CORPUS)
    outcomes = extract_many([(c.path, c.text or "") for c in changes])
    assert sum(len(o.facts.refs) for o in outcomes if o.facts is not None) > 40
    dumps = []
    for per_statement, pending in ((1, 1_000_000), (5, 7), (staging._ROWS_PER_STATEMENT, staging._PENDING_ROWS)):
        monkeypatch.setattr(staging, "_ROWS_PER_STATEMENT", per_statement)
        monkeypatch.setattr(staging, "_PENDING_ROWS", pending)
        conn, _ = _fresh()
        staged = stage(outcomes)
        assert staged.staged is not None
        conn.execute("BEGIN")
        write_batch(conn, changes, staged.outcomes, [staged.staged], 1)
        conn.execute("COMMIT")
        dumps.append(_dump(conn))
    assert dumps[0] == dumps[1] == dumps[2]


def test_without_serialize_rows_go_through_temporary_tables_to_the_same_result() -> None:
    changes = _changes(CORPUS)
    outcomes = extract_many([(c.path, c.text or "") for c in changes])
    dumps = []
    for serialize in (True, False):
        conn, _ = _fresh()
        staged = stage(outcomes, serialize=serialize)
        assert staged.staged is not None and staged.staged.serialized is serialize
        conn.execute("BEGIN")
        write_batch(conn, changes, staged.outcomes, [staged.staged], 1)
        conn.execute("COMMIT")
        dumps.append(_dump(conn))
    assert dumps[0] == dumps[1]
    # A serialized batch on a connection that cannot attach it is read through a private connection.
    conn, _ = _fresh()
    staged = stage(outcomes)
    assert staged.staged is not None
    assert staging._load(conn, staged.staged, attached=False) == "temp"
    assert conn.execute("SELECT count(*) FROM temp.ref_rows").fetchone()[0] == sum(staged.staged.counts[i][2] for i
                                                                                  in range(len(staged.staged.paths)))


def test_the_worker_pool_extracts_a_big_batch_like_this_process_does() -> None:
    module = "\n\n".join(text for path, text in sorted(CORPUS.items()) if path.endswith(".py"))
    copies = START_POOL_CHARS // (8 * len(module)) + 1
    items = [(f"big/m{n}.py", f"# copy {n}\n" + module * copies) for n in range(8)]
    assert sum(len(t) for _, t in items) > START_POOL_CHARS
    pool = ExtractionPool(workers=2)
    try:
        pending = pool.submit(items)
        assert pool._pool is not None  # the workers took it
        outcomes, staged = pending.result()
    finally:
        pool.close()
    local = extract_staged(items)
    assert [o.path for o in outcomes] == [p for p, _ in items]
    assert outcomes == [to_wire(o) for o in local.outcomes]
    assert local.staged is not None and [p for s in staged for p in s.paths] == list(local.staged.paths)


def test_a_cold_epoch_read_in_bulk_stores_what_lookups_file_by_file_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """A relink reaching most files reads whole tables (chaser preload, bulk passes); on this small corpus that is
    forced, and the facts must not differ from the ones point lookups give."""
    looked_up, indexer = _fresh()
    _epoch(looked_up, indexer, 1, [_changes(CORPUS)])
    monkeypatch.setattr(bulk, "_MIN_FILES", 0)
    preloads: list[Chaser] = []
    preload = Chaser.preload

    def counted(chaser: Chaser) -> None:
        preloads.append(chaser)
        preload(chaser)

    monkeypatch.setattr(Chaser, "preload", counted)
    in_bulk, bulk_indexer = _fresh()
    _epoch(in_bulk, bulk_indexer, 1, [_changes(CORPUS)])
    assert preloads and _dump(in_bulk) == _dump(looked_up)
    assert in_bulk.execute("PRAGMA threads").fetchone()[0] == 0  # the cold build's sort threads were given back


def test_a_preloaded_chaser_answers_like_one_that_looks_rows_up() -> None:
    conn, indexer = _fresh()
    _epoch(conn, indexer, 1, [_changes(CORPUS)])
    lazy, eager = Chaser(conn), Chaser(conn)
    eager.preload()
    uids = [u for (u,) in conn.execute("SELECT import_uid FROM st_import ORDER BY import_uid")]
    names = conn.execute("SELECT file_id, exported_name FROM st_export_entry UNION "
                         "SELECT f.file_id, d.name FROM st_file f, st_def d ORDER BY 1, 2").fetchall()
    assert uids and names
    assert [eager.via(u) for u in uids] == [lazy.via(u) for u in uids]
    assert [eager.module_of(u) for u in uids] == [lazy.module_of(u) for u in uids]
    assert [eager.name_in(f, n) for f, n in names] == [lazy.name_in(f, n) for f, n in names]
    assert any(lazy.via(u) is not None for u in uids)


def test_a_big_first_build_starts_the_workers_before_its_first_batch() -> None:
    assert isinstance(StructuralIndexer(workers=1), Prewarm)
    small = ExtractionPool(workers=2)
    small.prewarm(START_POOL_CHARS - 1)  # a small tree: its batches run in this process, no workers
    assert small._pool is None
    pool = ExtractionPool(workers=2)
    try:
        pool.prewarm(START_POOL_CHARS)
        warming = pool._pool
        assert warming is not None
        deadline = time.monotonic() + 60
        while len(warming._processes) < 2 and time.monotonic() < deadline:  # started in a thread
            time.sleep(0.01)
        assert len(warming._processes) == 2
        items = [(f"m{n}.py", f"def f{n}(x):\n    return x + {n}  # {'-' * 80}\n") for n in range(1000)]
        # Once started, the pool takes batches far below the starting threshold, with the same outcomes.
        pending = pool.submit(items)
        assert pending._futures and pool._pool is warming  # the warmed workers took it
        outcomes, staged = pending.result()
        local = extract_staged(items)
        assert outcomes == [to_wire(o) for o in local.outcomes]
        assert local.staged is not None and [p for s in staged for p in s.paths] == list(local.staged.paths)
        pool.release()
        assert pool._pool is None
    finally:
        pool.close()



def test_batches_that_give_the_workers_nothing_to_parse_do_not_hold_back_the_next_ones(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two batches stay in flight so the workers always have the next one; a batch of files no grammar parses
    (translation catalogs, docs) gives them nothing, so it does not count: the writer goes on reading and submitting
    instead of writing, up to ``MAX_QUEUED`` batches. The facts are the same whatever the order of writing."""
    monkeypatch.setattr(epoch_session, "BEHIND_COST", 50_000)
    heavy = [[(f"h{b}/m{n}.py", f"def f{n}(x):\n    return x + {n}  # {'-' * 80}\n") for n in range(600)]
             for b in range(2)]
    light = [[(f"docs{b}/p{n}.txt", f"page {n}\n") for n in range(5)] for b in range(10)]
    order = [heavy[0], light[0], light[1], heavy[1], *light[2:]]
    pool = ExtractionPool(workers=2)
    conn, _ = _fresh()
    try:
        pool.prewarm(START_POOL_CHARS)
        session = EpochSession(conn, 1, pool)
        conn.execute("BEGIN IMMEDIATE")
        queued = []
        for batch in order:
            session.add(_changes(dict(batch)))
            queued.append(len(session._queue))
        session.finish()
        conn.execute("COMMIT")
    finally:
        pool.close()
    # h0 waits behind two light batches (the old rule wrote it at the third add); h1 behind them lets h0 and l0
    # be written, and l1 at the next add; then light batches pile up behind h1 until there are MAX_QUEUED (8).
    assert epoch_session.MAX_QUEUED == 8
    assert queued == [1, 2, 3, 2, 2, 3, 4, 5, 6, 7, 8, 8]
    whole, whole_indexer = _fresh()
    _epoch(whole, whole_indexer, 1, [_changes(dict(batch)) for batch in order])  # in this process, one at a time
    assert _dump(conn) == _dump(whole)
