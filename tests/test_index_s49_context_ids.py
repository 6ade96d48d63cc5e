"""Context ids are a function of the tree: a context that went and came back has the id a cold index gives it.

An autoincrement id depended on history: after ``examples/`` was ignored and un-ignored, ``map_repo`` said
``context_id`` 18–25 where a cold index said 7–14, and a restart kept them so (QA30 finding 3)."""

from __future__ import annotations

import sqlite3

from codeplane.index.structural.contexts import ID_SPACE, context_ids
from tests.test_structural_contexts_incremental import _apply, _fresh

BASE = {
    "pyproject.toml": "[project]\nname = 'top'\n",
    "a.py": "def run(obj):\n    return obj\n",
    "examples/one/pyproject.toml": "[project]\nname = 'one'\n",
    "examples/one/x.py": "def one():\n    return 1\n",
    "examples/two/pyproject.toml": "[project]\nname = 'two'\n",
    "examples/two/y.py": "def two():\n    return 2\n",
    "lib/pyproject.toml": "[project]\nname = 'lib'\n",
    "lib/z.py": "def solo():\n    return 1\n",
}
EXAMPLES = tuple(p for p in BASE if p.startswith("examples/"))


def _ids(conn: sqlite3.Connection) -> list[tuple[str, str, int]]:
    return sorted(conn.execute("SELECT family, root_path, context_id FROM st_context"))


def _units(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    return sorted(conn.execute("SELECT path, unit_id FROM st_file"))


def test_contexts_that_went_and_came_back_have_a_cold_index_s_ids() -> None:
    conn, indexer = _fresh()
    cold, cold_indexer = _fresh()
    try:
        _apply(conn, indexer, 1, BASE)
        _apply(conn, indexer, 2, {}, EXAMPLES)  # ignored: the files leave the index
        assert {root for _, root, _ in _ids(conn)} == {"", "lib"}
        _apply(conn, indexer, 3, {p: BASE[p] for p in EXAMPLES})  # un-ignored
        _apply(cold, cold_indexer, 1, BASE)
        assert _ids(conn) == _ids(cold)
        assert {root for _, root, _ in _ids(conn)} >= {"", "lib", "examples/one", "examples/two"}
        assert _units(conn) == _units(cold)
    finally:
        conn.close()
        cold.close()


def test_ids_depend_on_the_set_of_contexts_only_and_a_clash_takes_the_next_free_one() -> None:
    keys = [("python", ""), ("python", "lib"), ("javascript", "web")]
    ids = context_ids(keys)
    assert ids == context_ids(list(reversed(keys))) and len(set(ids.values())) == 3
    assert all(0 < cid < ID_SPACE for cid in ids.values())
    assert context_ids(keys[:2]) == {k: ids[k] for k in keys[:2]}  # a context's id survives another's coming
    clash = [("python", f"p{n}") for n in range(3000)]  # enough pairs that some hash to one slot
    assert len(set(context_ids(clash).values())) == 3000
