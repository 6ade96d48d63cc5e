"""The structural indexer against a real SQLite database: linking, incremental updates, contexts, queries."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.index.structural.queries import StructuralQueries
from tests.structural_tree import StructuralTree


class Harness:
    def __init__(self) -> None:
        self.tree = StructuralTree()
        self.conn = self.tree.conn
        self.indexer = self.tree.indexer
        self.q = StructuralQueries(self.conn)

    @property
    def epoch(self) -> int:
        return self.tree.epoch

    def apply(self, files: dict[str, str], deleted: tuple[str, ...] = ()) -> int:
        """One epoch; its number."""
        self.tree.apply(files, deleted)
        return self.tree.epoch

    def ref(self, path: str, line: int, token: str) -> tuple[str, str | None]:
        refs = [r for r in self.q.list_refs_in_file(path, limit=10_000)
                if r.start_line == line and r.token_text == token]
        assert refs, (path, line, token)
        return refs[0].ref_tier, refs[0].target_uid

    def tiers(self) -> set[tuple[str, int, int, str, str, str | None]]:
        """Every reference's (path, line, column, token, tier, target): to compare with a fresh build."""
        return {(p, line, col, token, tier, target) for p, line, col, token, tier, target in self.conn.execute(
            "SELECT f.path, r.start_line, r.start_col, r.token_text, r.ref_tier, r.target_uid FROM st_ref r "
            "JOIN st_file f ON f.file_id = r.file_id")}

    def uid(self, qualified: str) -> str:
        found = self.q.list_defs_by_qualified_name(qualified, limit=2)
        assert len(found) == 1, (qualified, found)
        return found[0].def_uid


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.conn.close()


PY = {
    "pyproject.toml": "[project]\nname = 'shop'\n[project.scripts]\nshop = 'shop.cli:main'\n",
    "shop/__init__.py": "from .models import Cart, total as compute\n__all__ = ['Cart', 'compute']\n",
    "shop/models.py": "class Cart:\n    def add(self, item):\n        return total([item])\n\n\ndef total(items):\n"
                      "    return sum(items)\n",
    "shop/cli.py": "import shop\nfrom shop import Cart, compute\nfrom shop import models\n"
                   "import shop.models as sm\n\n\ndef main():\n    cart = Cart()\n    cart.add(1)\n"
                   "    models.total([])\n    sm.Cart\n"
                   "    shop.Cart\n    return compute([1])\n",
}


def test_imports_link_references_to_definitions_across_files(h: Harness) -> None:
    h.apply(PY)
    cart, total = h.uid("shop.models.Cart"), h.uid("shop.models.total")
    assert h.ref("shop/cli.py", 2, "Cart") == ("STRONG", cart)  # through the package's re-export
    assert h.ref("shop/cli.py", 8, "Cart") == ("STRONG", cart)
    assert h.ref("shop/cli.py", 13, "compute") == ("STRONG", total)  # alias of an alias
    assert h.ref("shop/cli.py", 10, "total") == ("STRONG", total)  # member of an imported submodule
    assert h.ref("shop/cli.py", 11, "Cart") == ("STRONG", cart)  # ``import shop.models as sm``
    assert h.ref("shop/cli.py", 12, "Cart") == ("STRONG", cart)  # ``import shop`` then ``shop.Cart``
    assert h.ref("shop/cli.py", 9, "add")[0] == "ANCHORED"  # a method on an instance: not provable
    assert h.ref("shop/models.py", 3, "total") == ("PROVEN", total)
    refs = h.q.list_refs_by_def_uid(total, limit=100)
    assert [r.ref_tier for r in refs] == sorted((r.ref_tier for r in refs), key=["PROVEN", "STRONG"].index)
    importers = {i.path for i in h.q.list_importers("shop/models.py", limit=10)}
    assert importers == {"shop/__init__.py", "shop/cli.py"}
    assert {i.path for i in h.q.list_imports_by_source("shop", limit=10)} == {"shop/cli.py"}


def test_editing_one_file_relinks_only_its_dependants(h: Harness) -> None:
    first = h.apply({**PY, "other/standalone.py": "def alone():\n    return 1\n"})
    old_total = h.uid("shop.models.total")
    second = h.apply({"shop/models.py": PY["shop/models.py"].replace("def total(items):", "def total(items, k=0):")})
    new_total = h.uid("shop.models.total")
    assert new_total != old_total  # the signature is part of the identity
    assert h.ref("shop/cli.py", 13, "compute") == ("STRONG", new_total)
    epochs = dict(h.conn.execute("SELECT path, epoch FROM st_file"))
    assert epochs["shop/models.py"] == second
    assert epochs["shop/cli.py"] == first and epochs["other/standalone.py"] == first
    snapshot = {p for (p,) in h.conn.execute("SELECT file_path FROM st_snapshot_file WHERE epoch_id = ?", (second,))}
    assert snapshot == {"shop/models.py"}
    assert [d.name for d in h.q.list_def_snapshots("shop/models.py", first, limit=10)] == ["Cart", "add", "total"]
    assert h.indexer.last_report is not None and h.indexer.last_report.files == 1


def test_deleting_a_module_drops_strong_links_and_adding_it_back_restores_them(h: Harness) -> None:
    h.apply(PY)
    h.apply({}, deleted=("shop/models.py",))
    assert h.ref("shop/cli.py", 8, "Cart")[0] == "PROVEN"  # still bound to its import, nothing beyond
    assert h.q.list_def_snapshots("shop/models.py", h.epoch, limit=10) == []
    h.apply({"shop/models.py": PY["shop/models.py"]})
    assert h.ref("shop/cli.py", 8, "Cart") == ("STRONG", h.uid("shop.models.Cart"))


def test_a_late_init_file_renames_modules_and_links_imports(h: Harness) -> None:
    h.apply({"lib/util.py": "def helper():\n    return 1\n", "app.py": "from lib.util import helper\nhelper()\n"})
    # ``lib`` is a namespace package importable from the repository root (PEP 420); its module is named
    # ``util`` as pytest would import it, ``lib.util`` only as an alias
    assert h.ref("app.py", 2, "helper") == ("STRONG", h.uid("util.helper"))
    h.apply({"lib/__init__.py": ""})
    assert h.ref("app.py", 2, "helper") == ("STRONG", h.uid("lib.util.helper"))


def test_javascript_imports_link_through_relative_paths(h: Harness) -> None:
    h.apply({
        "src/util/index.ts": "export function join(a: string) { return a; }\nexport * from './more';\n",
        "src/util/more.ts": "export const extra = 1;\n",
        "src/app.ts": "import { join, extra } from './util';\nimport * as u from './util/index';\n"
                      "join('x'); u.join('y'); extra;\n",
    })
    join = h.uid("src/util/index.join")
    assert h.ref("src/app.ts", 3, "join") == ("STRONG", join)
    assert [(r.ref_tier, r.target_uid) for r in h.q.list_refs_in_file("src/app.ts", limit=100)
            if r.start_line == 3 and r.is_member] == [("STRONG", join)]
    assert h.ref("src/app.ts", 3, "extra") == ("STRONG", h.uid("src/util/more.extra"))


def test_anchor_groups_count_everything_and_keep_ten_exemplars_in_order(h: Harness) -> None:
    body = "".join(f"    obj.run({i})\n" for i in range(15))
    h.apply({"b.py": f"def f(obj):\n{body}", "a.py": "def g(obj):\n    obj.run()\n"})
    group = h.q.get_anchor_group(0, "run", "obj.")
    assert group is not None and group.total_count == 16 and len(group.exemplar_ids) == 10
    refs = {r.ref_id: (r.path, r.start_line) for p in ("a.py", "b.py") for r in h.q.list_refs_in_file(p, limit=100)}
    assert [refs[i] for i in group.exemplar_ids] == [("a.py", 2), *[("b.py", n) for n in range(2, 11)]]


def test_contexts_fence_punch_holes_probe_and_route(h: Harness) -> None:
    h.apply({
        "package.json": json.dumps({"name": "root", "workspaces": ["packages/*"]}),
        "packages/web/package.json": "{}", "packages/web/index.js": "export const a = 1;\n",
        "tools/script/package.json": "{}", "tools/script/run.js": "console.log(1)\n",
        "py/pyproject.toml": "[project]\nname='x'\n", "py/broken.py": "def (:\n",
        "README.md": "# x\n",
    })
    contexts = {(c["family"], c["root_path"]): c for c in h.q.list_contexts(limit=100)}
    assert contexts[("javascript", "")]["tier"] == 1
    assert contexts[("javascript", "packages/web")]["probe_status"] == "valid"
    assert contexts[("javascript", "tools/script")]["probe_status"] == "detached"  # not a workspace member
    assert contexts[("python", "py")]["probe_status"] == "failed"  # every sample is a syntax error
    assert contexts[("sql", "")]["probe_status"] == "empty"
    units = dict(h.conn.execute("SELECT path, unit_id FROM st_file"))
    web = contexts[("javascript", "packages/web")]["context_id"]
    assert units["packages/web/index.js"] == web  # the deepest valid root owns it
    assert units["tools/script/run.js"] == 0  # inside a detached context: the no-owner zone
    assert units["README.md"] == contexts[("markdown", "")]["context_id"]


def test_every_list_query_is_bounded(h: Harness) -> None:
    h.apply(PY)
    for bad in (0, -1, 100_001):
        with pytest.raises(CodePlaneError):
            h.q.list_defs_by_name("Cart", limit=bad)
    overlapping = h.q.defs_overlapping("shop/models.py", [(3, 3)], limit=10)
    assert [d.qualified_name for d in overlapping] == ["shop.models.Cart", "shop.models.Cart.add"]
    assert [d.lexical_path for d in h.q.defs_at("shop/models.py", 3)] == ["Cart", "Cart.add"]


def _groups(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    return sorted(conn.execute("SELECT unit_id, member_token, receiver_shape, total_count, exemplar_ids "
                               "FROM st_anchor_group"))


def test_incremental_anchor_groups_equal_a_full_rebuild(h: Harness) -> None:
    from codeplane.index.structural import anchors

    lines = "".join(f"    obj.run({i})\n    self.save()\n" for i in range(8))
    h.apply({"a.py": f"def f(obj, self):\n{lines}", "b.py": f"def g(obj, self):\n{lines}",
             "c.py": "import b\n\ndef h(obj):\n    obj.run()\n    b.g\n"})
    h.apply({"a.py": "def f(obj):\n    obj.stop()\n"})  # a.py held the first exemplars of obj.run
    h.apply({"d.py": "def k(obj):\n    obj.run()\n"}, deleted=("c.py",))
    h.apply({"b.py": f"def g(obj, self):\n    pass\n{lines}"})  # every ref of b.py moves a line down
    h.apply({"pkg/pyproject.toml": "[project]\nname = 'p'\n", "pkg/e.py": "def e(obj):\n    obj.run()\n"})
    h.apply({"pyproject.toml": "[project]\nname = 'x'\n"})  # every Python file moves to a new unit
    assert {u for (u,) in h.conn.execute("SELECT DISTINCT unit_id FROM st_anchor_group")} != {0}
    incremental = _groups(h.conn)
    anchors.rebuild_all(h.conn)
    assert incremental == _groups(h.conn)


def test_a_line_inserted_above_the_last_exemplar_keeps_groups_exact(h: Harness) -> None:
    from codeplane.index.structural import anchors

    def exact() -> list[tuple[object, ...]]:
        incremental = _groups(h.conn)
        anchors.rebuild_all(h.conn)
        assert incremental == _groups(h.conn)
        return incremental

    body = "def f(obj):\n" + "    obj.run()\n" * 4
    h.apply({f"a{n}.py": body for n in range(5)})  # 20 members: a0, a1 and half of a2 are the exemplars
    h.apply({"a2.py": "import os\n" + body})  # every ref of a2 moves down a line: refilled from a0-a2 alone
    assert [g[3] for g in exact()] == [20]
    h.apply({"a2.py": "def f(obj):\n    obj.run()\n"})  # a2 keeps one: a3's refs must enter the exemplars
    assert [g[3] for g in exact()] == [17]
    h.apply({"a0.py": "x = 1\n" + body, "a9.py": body}, deleted=("a1.py",))
    assert [g[3] for g in exact()] == [17]


def test_a_big_cold_index_ranks_the_same_anchor_groups_in_sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    from codeplane.index.structural import session

    lines = "".join(f"    obj.run({i})\n    self.save()\n    x.y.run()\n" for i in range(6))
    files = {f"m{n}.py": f"def f{n}(obj, self, x):\n{lines}" for n in range(5)}
    files.update({"sub/pyproject.toml": "[project]\nname = 's'\n", "sub/s.py": f"def s(obj, self, x):\n{lines}",
                  "c.py": "import m1\n\ndef h(obj):\n    obj.run()\n    m1.f1\n"})
    found = []
    for threshold in (10**9, 1):  # Python's grouping, then SQLite's ranking for every cold index
        monkeypatch.setattr(session, "_RANK_IN_SQLITE", threshold)
        harness = Harness()
        harness.apply(files)
        found.append(_groups(harness.conn))
        harness.conn.close()
    assert found[0] == found[1] and len(found[0]) >= 4
    assert any(json.loads(str(g[4])) and int(str(g[3])) > 10 for g in found[0])  # exemplars cut at ten


def test_include_and_exclude_globs_match_whole_paths() -> None:
    from codeplane.index.structural.contexts.globs import INCLUDE_SPECS, UNIVERSAL_EXCLUDES, matches

    assert matches(INCLUDE_SPECS["python"], "pkg/mod.py") and not matches(INCLUDE_SPECS["python"], "LICENSE.python")
    assert not matches(INCLUDE_SPECS["javascript"], "package.json")
    assert matches(INCLUDE_SPECS["docker"], "deploy/Dockerfile") and matches(INCLUDE_SPECS["docker"], "x.Dockerfile")
    assert matches(UNIVERSAL_EXCLUDES, "web/node_modules/react/index.js")
    assert not matches(("apps/api/**",), "apps/api2/main.py") and matches(("apps/api/**",), "apps/api/main.py")
