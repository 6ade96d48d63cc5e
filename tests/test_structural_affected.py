"""Incremental relinking (``linking.py``, ``affected.py``) against a cold build of the same tree.

Each scenario builds a tree, applies a batch that changes what *unchanged* files import (an export renamed,
a module deleted or moved, a package losing its ``__init__.py``, a star re-export growing), and then
compares every structural fact a query reads with a cold build of the resulting tree, in a second database.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from codeplane.index.structural.queries import StructuralQueries
from tests.structural_tree import StructuralTree


class Tree(StructuralTree):
    def facts(self) -> dict[str, object]:
        """Everything a references/definitions/imports/anchors query answers from, keyed by path, not id."""
        conn = self.conn
        paths = dict(conn.execute("SELECT file_id, path FROM st_file"))
        refs = sorted((paths[f], line, col, token, tier, target, certainty) for f, line, col, token, tier, target,
                      certainty in conn.execute("SELECT file_id, start_line, start_col, token_text, ref_tier, "
                                                "target_uid, certainty FROM st_ref"))
        defs = sorted(conn.execute("SELECT def_uid, qualified_name, name FROM st_def"))
        imports = sorted((paths[f], name, source, target, alt, paths.get(res), paths.get(res_alt)) for
                         f, name, source, target, alt, res, res_alt in conn.execute(
                             "SELECT file_id, imported_name, source_literal, target_key, alt_key, resolved_file_id, "
                             "resolved_alt_file_id FROM st_import"))
        exports = sorted((paths[f], name, def_uid) for f, name, def_uid in conn.execute(
            "SELECT file_id, exported_name, def_uid FROM st_export_entry"))
        keys = sorted((key, paths[f], rank) for key, f, rank in conn.execute(
            "SELECT key, file_id, rank FROM st_module_key"))
        ref_at = {r: (paths[f], line, col) for r, f, line, col in conn.execute(
            "SELECT ref_id, file_id, start_line, start_col FROM st_ref")}
        groups = sorted((token, shape, total, [ref_at[i] for i in json.loads(ids)]) for token, shape, total, ids in
                        conn.execute("SELECT member_token, receiver_shape, total_count, exemplar_ids "
                                     "FROM st_anchor_group"))
        return {"refs": refs, "defs": defs, "imports": imports, "exports": exports, "keys": keys, "groups": groups}


@contextmanager
def _tree() -> Iterator[Tree]:
    tree = Tree()
    try:
        yield tree
    finally:
        tree.conn.close()


def _cold(files: dict[str, str]) -> dict[str, object]:
    with _tree() as cold:
        cold.apply(files)
        return cold.facts()


LIB = ("def helper(x):\n    return x\n\n\ndef other():\n    return helper(1)\n\n\n"
       "class Box:\n    def put(self):\n        pass\n")
BASE = {
    "app/__init__.py": "",
    "app/lib.py": LIB,
    "app/mid.py": "from app.lib import helper, Box\nfrom app.lib import *\n\n__all__ = ['helper', 'Box']\n",
    "app/star.py": "from app.lib import *\n",
    "app/user.py": ("from app.mid import helper, Box\nfrom app import lib\nimport app.lib as L\n"
                    "from app.star import other\n\n\n"
                    "def use(obj):\n    helper(2)\n    lib.helper(3)\n    L.other()\n    Box().put()\n"
                    "    other()\n    obj.put()\n    lib.Box\n"),
    "app/far.py": "from app.user import use\n\n\ndef go(obj):\n    use(obj)\n    obj.put()\n",
    "other/solo.py": "def alone(obj):\n    obj.put()\n    return 1\n",
    # Imports a name the star re-export does not have yet ("star re-export grows, importer unchanged").
    # Star re-exports ``mid`` (whose ``__all__`` decides what ``*`` takes); ``mid_user`` imports through it.
    "app/mid_star.py": "from app.mid import *\n",
    "app/mid_user.py": "from app.mid_star import Box, helper\n\n\ndef run():\n    Box().put()\n    helper(4)\n",
    "app/late.py": "from app.star import later\nfrom app import star\n\n\ndef wait():\n    later()\n    star.later()\n",
}
for n in range(12):  # a crowd of member refs, so anchor groups have more than ten members
    BASE[f"app/crowd_{n:02}.py"] = "def f(obj):\n" + "".join(f"    obj.put({i})\n" for i in range(3))

PLAIN = ("def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n\n\n"
         "class Crate:\n    def put(self):\n        pass\n")
PLAIN_USER = ("from app.plain import alpha, Crate\nimport app.plain as P\n\n\n"
              "def f():\n    alpha()\n    P.beta()\n    P.gamma()\n    P.alpha()\n    Crate().put()\n")
RE = "from app.plain import alpha, beta\n"
RE_USER = ("from app.re import alpha, beta\nimport app.re as R\n\n\n"
           "def g():\n    alpha()\n    beta()\n    R.alpha()\n    R.beta()\n")

SCENARIOS: dict[str, list[tuple[dict[str, str], tuple[str, ...]]]] = {
    "export renamed, then restored": [
        ({"app/lib.py": LIB.replace("def helper", "def helper2").replace("helper(1)", "helper2(1)")}, ()),
        ({"app/lib.py": LIB}, ()),
    ],
    "definition changes its identity": [({"app/lib.py": LIB.replace("def helper(x)", "def helper(x, y=0)")}, ())],
    "imported module deleted": [({}, ("app/lib.py",))],
    "imported module moved": [({"app/lib2.py": LIB}, ("app/lib.py",))],
    "module deleted, then added back": [({}, ("app/lib.py",)), ({"app/lib.py": LIB}, ())],
    "package loses its __init__": [({}, ("app/__init__.py",))],
    "star re-export grows": [({"app/lib.py": LIB + "\n\ndef later():\n    return 2\n",
                               "app/user.py": BASE["app/user.py"].replace("import other", "import other, later")},
                              ())],
    "star re-export grows, importer unchanged": [({"app/lib.py": LIB + "\n\ndef later():\n    return 2\n"}, ())],
    # Rewritten files whose chase inputs stay the same are skipped for their importers (``linking._same_inputs``).
    "imported module's bodies edited": [({"app/lib.py": LIB.replace("    return x\n", "    y = x\n    return y\n"),
                                          "app/mid.py": BASE["app/mid.py"] + "# note\n"}, ())],
    "__all__ narrowed, names kept": [({"app/mid.py": BASE["app/mid.py"].replace("'helper', 'Box'", "'helper'")}, ())],
    "imported module emptied": [({"app/lib.py": "# nothing left\n"}, ())],
    "re-exporter edited, importers not": [({"app/mid.py": "from app.lib import Box\n\n__all__ = ['Box']\n"}, ())],
    "exemplar files edited": [({f"app/crowd_{n:02}.py": "def f(obj):\n    pass\n" + "".join(
        f"    obj.put({i})\n" for i in range(3)) for n in range(0, 12, 3)}, ("app/crowd_01.py",))],
    # A new file ranks first in the ``put`` group and holds the newest ref ids; rewriting it gives its new refs
    # (another token, or the same token elsewhere) the very ids its old exemplars had.
    "rewritten exemplar file's ids reused by another token": [
        ({"app/aaa.py": "def a(obj):\n" + "".join(f"    obj.put({i})\n" for i in range(4))}, ()),
        ({"app/aaa.py": "def a(obj):\n" + "".join(f"    obj.take({i})\n" for i in range(4))}, ())],
    "rewritten exemplar file's ids reused by the same token": [
        ({"app/aaa.py": "def a(obj):\n" + "".join(f"    obj.put({i})\n" for i in range(4))}, ()),
        ({"app/aaa.py": "def a(obj):\n    pass\n\n\n" + "".join(f"    obj.put({i})\n" for i in range(2))}, ())],
    "last exemplar's file deleted": [({}, ("app/crowd_03.py",))],
    # Modules without star re-exports: an importer's refs are re-chased only for names whose answer moved.
    "a plain module gains a name, then changes and loses others": [
        ({"app/plain.py": PLAIN, "app/plain_user.py": PLAIN_USER, "app/re.py": RE, "app/re_user.py": RE_USER}, ()),
        ({"app/plain.py": PLAIN + "\n\ndef gamma():\n    return 3\n"}, ()),
        ({"app/plain.py": PLAIN.replace("def alpha()", "def alpha(z=1)").replace(
            "def beta():\n    return 2\n", "")}, ())],
    "a plain re-exporter's name moves with its source": [
        ({"app/plain.py": PLAIN, "app/re.py": RE, "app/re_user.py": RE_USER}, ()),
        ({"app/plain.py": PLAIN.replace("def alpha()", "def alpha(z=1)")}, ()),
        ({"app/re.py": RE.replace("alpha, beta", "beta")}, ())],
    "many changes at once": [({"app/lib2.py": LIB.replace("class Box", "class Crate"), "app/new.py":
                               "from app.lib2 import helper\nhelper(0)\n",
                               "app/crowd_00.py": "def f(obj):\n    obj.put()\n"}, ("app/lib.py", "app/crowd_05.py"))],
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_an_incremental_relink_answers_like_a_cold_build(name: str) -> None:
    with _tree() as tree:
        tree.apply(dict(BASE))
        states = [tree.facts()]
        for files, deleted in SCENARIOS[name]:
            tree.apply(files, deleted)
            states.append(tree.facts())
            assert states[-1] == _cold(tree.files)
    assert any(s != states[0] for s in states[1:])  # the scenario did change something a query answers


def test_an_unchanged_importer_follows_an_export_that_moved() -> None:
    """The incremental pass still reaches refs of files it did not rewrite (not only the changed file's)."""
    with _tree() as tree:
        tree.apply(dict(BASE))
        q = StructuralQueries(tree.conn)

        def tier(line: int, token: str) -> tuple[str, str | None]:
            found = [(r.ref_tier, r.target_uid) for r in q.list_refs_in_file("app/user.py", limit=500)
                     if r.start_line == line and r.token_text == token]
            assert found, (line, token)
            return found[0]

        assert tier(8, "helper")[0] == "STRONG" and tier(9, "helper")[0] == "STRONG"
        tree.apply({"app/lib.py": LIB.replace("def helper", "def helper2").replace("helper(1)", "helper2(1)")})
        assert tier(8, "helper")[0] != "STRONG" and tier(9, "helper")[0] != "STRONG"
        tree.apply({"app/lib.py": LIB})
        helper = q.list_defs_by_qualified_name("app.lib.helper", limit=2)[0].def_uid
        assert tier(8, "helper") == ("STRONG", helper) and tier(9, "helper") == ("STRONG", helper)
