"""The import graph and the walk's per-file facts carried across epochs (``impact_graph.build_graph`` with the
previous graph, ``WalkFacts.carry``): after each edit, the carried graph equals a fresh read of the same epoch
and a long-lived ``ImpactIndex`` answers what a new one answers; an added file or a marker edit reads it whole."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict
from pathlib import Path

from codeplane.index.service import IndexService
from codeplane.testing import ImpactIndex
from codeplane.testing.impact_attrs import AttributeTypes
from codeplane.testing.impact_code import PythonCode
from codeplane.testing.impact_dynamic import DynamicSites
from codeplane.testing.impact_graph import ImportGraph, build_graph, current_epoch
from codeplane.testing.impact_walkfacts import WalkFacts
from tests.builders import indexed_repo

FILES: dict[str, str] = {
    "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['src']\n",
    "src/shop/__init__.py": "",
    "src/shop/pricing.py": "def price(name):\n    return len(name)\n\n\ndef discount(x):\n    return x - 1\n",
    "src/shop/cart.py": ("from shop.pricing import price\n\n\nclass Cart:\n    def total(self, items):\n"
                         "        return sum(price(i) for i in items)\n"),
    "src/shop/ship.py": "def weight(x):\n    return x * 2\n",
    "tests/test_cart.py": "from shop.cart import Cart\n\n\ndef test_total():\n    assert Cart().total(['ab']) == 2\n",
    "tests/test_pricing.py": (
        "from shop.pricing import discount\n\n\ndef test_discount():\n    assert discount(3) == 2\n"),
    "tests/test_ship.py": "def test_weight():\n    from shop.ship import weight\n    assert weight(1) == 2\n",
    "src/shop/stock.py": "class Stock:\n    def count(self, x):\n        return 0\n",
    "tests/test_stock.py": ("from shop.stock import Stock\n\n\ndef test_count():\n    items = [1, 2]\n"
                            "    assert items.count(1) == 1 and Stock().count(1) == 0\n"),
    "tests/test_dyn.py": ("import shop.pricing as pricing\n\n\ndef test_member():\n    assert pricing.price('a') == 1\n"
                          "\n\ndef test_code():\n    code = 'import shop\\nshop.ship'\n    assert code\n"),
}
TESTS = ["tests/test_cart.py", "tests/test_dyn.py", "tests/test_pricing.py", "tests/test_ship.py",
         "tests/test_stock.py"]


def _fields(graph: ImportGraph) -> dict[str, object]:
    found = asdict(graph)
    for carried_only in ("carried_from", "changed"):
        found.pop(carried_only)
    return found


def _edit(repo: Path, index: IndexService, path: str, text: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text, encoding="utf-8")
    index.refresh_paths([path])


def _answer(impact: ImpactIndex, repo: Path, path: str, lines: tuple[int, int] | None,
            ) -> list[tuple[str, str, tuple[str, ...]]]:
    """``lines`` None: the whole file changed (module-level selection, which narrows by imports in tests)."""
    def read(rel: str) -> list[str]:
        target = repo / rel
        return target.read_text(encoding="utf-8").splitlines() if target.is_file() else []
    result = impact.affected([path], TESTS, ranges={path: [lines]} if lines else None, read_lines=read)
    return [(m.test_file, m.confidence, tuple(c.case for c in m.cases)) for m in result.matches]


def _setter_strings(repo: Path, conn: sqlite3.Connection, graph: ImportGraph, facts: WalkFacts) -> frozenset[str]:
    """The names setattr-like calls write as strings, as the walk's attribute typing reads them (white box)."""
    def read(rel: str) -> list[str]:
        return (repo / rel).read_text(encoding="utf-8").splitlines() if (repo / rel).is_file() else []
    return AttributeTypes(PythonCode(conn, graph.path_of, read, facts))._setter_strings()


def test_the_carried_graph_and_facts_answer_what_a_fresh_read_answers(tmp_path: Path) -> None:
    with indexed_repo(tmp_path / "repo", FILES) as (repo, index):
        kept = ImpactIndex(index.read_connection)
        with index.read_connection() as conn:
            graph = build_graph(conn, current_epoch(conn))
        assert _answer(kept, repo, "src/shop/pricing.py", (2, 2)) == [
            ("tests/test_cart.py", "low", ("test_total",)), ("tests/test_dyn.py", "high", ("test_code", "test_member"))]
        # a whole-file change: test_ship imports ship inside test_weight only, so only that test
        assert _answer(kept, repo, "src/shop/ship.py", None) == [("tests/test_ship.py", "high", ("test_weight",))]
        # ``items.count`` on a list is looked at through the test file's own bindings (a literal-bound local)
        assert _answer(kept, repo, "src/shop/stock.py", (3, 3)) == [
            ("tests/test_dyn.py", "low", ("test_code",)), ("tests/test_stock.py", "low", ("test_count",))]
        assert kept._facts is not None and kept._facts._file_rows
        with index.read_connection() as conn:
            assert _setter_strings(repo, conn, graph, kept._facts) == frozenset()
        steps = [
            # the test's lines move down: what its bindings answered at the old positions is stale
            ("tests/test_stock.py", "X = 1\n" + FILES["tests/test_stock.py"], True, "src/shop/stock.py", (3, 3)),
            # an edit that adds an import: cart now reaches ship, so test_cart is reached from weight
            ("src/shop/cart.py", FILES["src/shop/cart.py"].replace(
                "from shop.pricing import price\n", "from shop.pricing import price\nfrom shop.ship import weight\n"
            ).replace("price(i) for", "weight(price(i)) for"), True, "src/shop/ship.py", (2, 2)),
            # a definition renamed: the test calling the old name resolves to nothing now
            ("src/shop/pricing.py", FILES["src/shop/pricing.py"].replace("def discount", "def rebate"), True,
             "src/shop/pricing.py", (5, 6)),
            # a dynamic importer: cart may hold any module now
            ("src/shop/cart.py", "from importlib import import_module\n" + FILES["src/shop/cart.py"], True,
             "src/shop/pricing.py", (2, 2)),
            # the imports removed again
            ("src/shop/cart.py", FILES["src/shop/cart.py"], True, "src/shop/ship.py", (2, 2)),
            # a test's import inside its function moved to the module: the whole file now
            ("tests/test_ship.py", "def test_weight():\n    assert weight(1) == 2\n\n\nfrom shop.ship import weight\n",
             True, "src/shop/ship.py", None),
            # dynamic accesses spelling names, then a star import and an ``exec`` (which may bind any name)
            ("src/shop/ship.py", FILES["src/shop/ship.py"] + "\n\ndef look(o):\n    return getattr(o, 'price'), "
             "hasattr(o, 'Weight')\n", True, "src/shop/pricing.py", (2, 2)),
            ("src/shop/ship.py", "from shop.pricing import *\n" + FILES["src/shop/ship.py"] + "\n\ndef run(s):\n"
             "    exec(s)\n    return getattr(s, 'count'), setattr(s, 'price', 1)\n", True, "src/shop/stock.py",
             (3, 3)),
            # an attribute named in a string right after a setattr-like call
            ("src/shop/ship.py", FILES["src/shop/ship.py"] + "\n\ndef patch(mp, o):\n    mp.setattr(o, 'weight', 2)\n",
             True, "src/shop/ship.py", (2, 2)),
            ("src/shop/ship.py", FILES["src/shop/ship.py"], True, "src/shop/ship.py", (2, 2)),
            # a test's code string and member use gone
            ("tests/test_dyn.py", "def test_member():\n    assert True\n", True, "src/shop/pricing.py", (2, 2)),
            # a new file: read whole
            ("src/shop/extra.py", "from shop.ship import weight\n", False, "src/shop/ship.py", (2, 2)),
            # a context marker edited (import roots): read whole
            ("pyproject.toml", FILES["pyproject.toml"] + "# edited\n", False, "src/shop/pricing.py", (2, 2)),
        ]
        for path, text, carried, asked, lines in steps:
            _edit(repo, index, path, text)
            with index.read_connection() as conn:
                epoch = current_epoch(conn)
                fresh = build_graph(conn, epoch)
                graph = build_graph(conn, epoch, graph)
            assert (graph.carried_from is not None) == carried, path
            if carried:
                assert graph.changed == {graph.id_of[path]}
            assert _fields(graph) == _fields(fresh), path
            assert _answer(kept, repo, asked, lines) == _answer(ImpactIndex(index.read_connection), repo, asked,
                                                                 lines), path
            carried_facts = kept._facts  # white box: the carried index of imported names, against a fresh read
            assert carried_facts is not None
            with index.read_connection() as conn:
                for name in ("import_module", "price", "weight", "discount", "Cart"):
                    assert carried_facts.importers_of_name(conn, name) == WalkFacts().importers_of_name(
                        conn, name), (path, name)
                # the dynamic accesses by literal and the star/exec files: brought up to date, not read again
                assert carried_facts.loose_files(conn) == WalkFacts().loose_files(conn), path
                for name in ("price", "weight", "count", "nothing"):
                    assert carried_facts.dynamic_sites(conn, name) == WalkFacts().dynamic_sites(conn, name), path
                assert carried_facts._dynamic is not None
                assert carried_facts._dynamic._by_literal == DynamicSites.read(conn)._by_literal, path
                assert carried_facts.setter_strings_of is not None or not carried, path  # brought up to date
                assert _setter_strings(repo, conn, graph, carried_facts) == _setter_strings(
                    repo, conn, graph, WalkFacts()), path
                # every carried answer of a file's own query is what the query answers now
                for memo in carried_facts._file_rows.values():
                    for (sql, params), rows in memo.items():
                        assert rows == conn.execute(sql, params).fetchall(), (path, sql, params)
        # the renamed definition's old callers: the test file whose import no longer resolves is still selected
        assert ("tests/test_pricing.py" in {m[0] for m in _answer(kept, repo, "src/shop/pricing.py", (5, 6))})


def test_facts_a_walk_still_holds_are_copied_to_the_next_epoch_not_taken(tmp_path: Path) -> None:
    with indexed_repo(tmp_path / "repo", FILES) as (repo, index):
        kept = ImpactIndex(index.read_connection)
        first = _answer(kept, repo, "src/shop/pricing.py", (2, 2))
        with index.read_connection() as conn:
            graph = kept._graph_for(conn)
        with kept._facts_for(graph) as held:  # a walk of the first epoch, still running
            defs = dict(held.defs)
            assert defs
            _edit(repo, index, "src/shop/ship.py", "X = 1\n" + FILES["src/shop/ship.py"])
            assert _answer(kept, repo, "src/shop/pricing.py", (2, 2)) == first
            assert kept._facts is not held and held.defs == defs  # copied: the running walk keeps its facts
        released = kept._facts
        assert released is not None and released.defs
        _edit(repo, index, "src/shop/ship.py", FILES["src/shop/ship.py"])
        assert _answer(kept, repo, "src/shop/pricing.py", (2, 2)) == first
        # no walk held the previous epoch's facts: taken over (emptied), not copied
        taken = kept._facts
        assert taken is not None and taken is not released and taken.defs and not released.defs
