"""Rewriting an indexed file keeps its unchanged rows (``structural/rewrite.py``) and ends exactly where a cold
build of the same tree ends.

Each scenario indexes a tree, edits files in place (a line appended, a line inserted above everything, a scope
added or removed, a name renamed, an import changed), and compares every stored fact, with ids replaced by
what they point at, with a cold build of the edited tree in a second database. Rows kept are counted too, so
a change that quietly rewrote everything again would fail here as well.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from codeplane.index.structural import staging
from tests.structural_tree import StructuralTree


class Tree(StructuralTree):
    def facts(self) -> dict[str, Any]:
        """Every row of the fact tables, ids replaced by what they denote (paths, positions)."""
        conn = self.conn
        paths = dict(conn.execute("SELECT file_id, path FROM st_file"))
        scope_rows = {s: (paths[f], p, k, sl, sc, el, ec) for s, f, p, k, sl, sc, el, ec in conn.execute(
            "SELECT scope_id, file_id, parent_scope_id, kind, start_line, start_col, end_line, end_col FROM st_scope")}

        def scope(scope_id: int | None) -> object:
            if scope_id is None:
                return None
            path, parent, *rest = scope_rows[scope_id]
            return (path, *rest, scope(parent))

        bind_rows = {b: (scope(s), n) for b, s, n in conn.execute("SELECT bind_id, scope_id, name FROM st_bind")}
        return {
            "scopes": sorted(map(repr, (scope(s) for s in scope_rows))),
            "binds": sorted(repr((scope(s), n, k, t, c, r)) for s, n, k, t, c, r in conn.execute(
                "SELECT scope_id, name, target_kind, target_uid, certainty, reason_code FROM st_bind")),
            "refs": sorted(repr((paths[f], scope(s), *rest[:-1], bind_rows.get(rest[-1]))) for f, s, *rest in
                           conn.execute("SELECT file_id, scope_id, token_text, start_line, start_col, end_line, "
                                        "end_col, role, ref_tier, certainty, target_uid, via_import_uid, is_member, "
                                        "receiver_shape, local_tier, local_target_uid, bind_id FROM st_ref")),
            "defs": sorted(repr((paths[f], scope(s), *rest)) for f, s, *rest in conn.execute(
                "SELECT file_id, scope_id, def_uid, kind, name, qualified_name, lexical_path, start_line, "
                "start_col, end_line, end_col, name_line, name_col, signature_hash, display_name, parent_uid, "
                "name_lc FROM st_def")),
            "imports": sorted(repr((paths[f], scope(s), *rest)) for f, s, *rest in conn.execute(
                "SELECT file_id, scope_id, import_uid, imported_name, alias, source_literal, import_kind, "
                "certainty, target_key, resolved_file_id IS NOT NULL FROM st_import")),
            "groups": sorted((t, s, n, len(json.loads(i))) for t, s, n, i in conn.execute(
                "SELECT member_token, receiver_shape, total_count, exemplar_ids FROM st_anchor_group")),
        }


def _cold(files: dict[str, str]) -> dict[str, Any]:
    cold = Tree()
    try:
        cold.apply(files)
        return cold.facts()
    finally:
        cold.conn.close()


LIB = ("import os\nfrom app.util import helper as h\n\n\nclass Box:\n    size = 1\n\n    def put(self, item):\n"
       "        self.items = [item]\n        return h(item)\n\n\ndef make(n):\n    box = Box()\n"
       "    for i in range(n):\n        box.put(i)\n    return os.path.join('a', str(n))\n")
UTIL = "def helper(x):\n    return x\n\n\ndef other(obj):\n    obj.put(1)\n    return helper(2)\n"
GO = ("package shapes\n\nimport \"fmt\"\n\ntype Square struct{ Side int }\n\n"
      "func (s Square) Area() int {\n\treturn s.Side * s.Side\n}\n\n"
      "func Describe(s Square) string {\n\treturn fmt.Sprint(s.Area())\n}\n")
RUST = ("pub struct Counter {\n    n: u32,\n}\n\nimpl Counter {\n    pub fn bump(&mut self) -> u32 {\n"
        "        self.n += 1;\n        self.n\n    }\n}\n\npub fn run() -> u32 {\n    let mut c = Counter { n: 0 };\n"
        "    c.bump()\n}\n")
JAVA = ("package app;\n\npublic class Shelf {\n    private int count;\n\n    public int add(int n) {\n"
        "        count += n;\n        return count;\n    }\n}\n")
TS = "import { helper } from './util';\n\nexport function twice(x: number): number {\n  return helper(helper(x));\n}\n"
BASE = {"app/__init__.py": "", "app/lib.py": LIB, "app/util.py": UTIL, "shapes/shapes.go": GO,
        "src/counter.rs": RUST, "app/Shelf.java": JAVA, "web/twice.ts": TS,
        "web/util.ts": "export function helper(x: number): number {\n  return x;\n}\n"}
for _n in range(12):  # member refs enough for anchor groups with exemplars to keep
    BASE[f"app/crowd_{_n:02}.py"] = "def f(obj):\n" + "".join(f"    obj.put({i})\n" for i in range(3))

EDITS: dict[str, list[dict[str, str]]] = {
    "a line appended to every file": [{p: t + "\nscale_touch_token = 1\n" if p.endswith(".py") else t + "\n// end\n"
                                       for p, t in BASE.items() if t}],
    "a line inserted above everything": [{"app/lib.py": "# top\n" + LIB, "shapes/shapes.go": "// top\n" + GO}],
    "a scope added in the middle, then removed": [
        {"app/lib.py": LIB.replace("\n\ndef make", "\n\ndef extra(a):\n    return a\n\n\ndef make")},
        {"app/lib.py": LIB}],
    "a scope removed": [{"app/lib.py": LIB.partition("\n\n\ndef make")[0] + "\n",
                         "src/counter.rs": RUST.partition("\n\npub fn")[0]}],
    "a name renamed inside one line": [{"app/lib.py": LIB.replace("box = Box()", "bx = Box()").replace("box.", "bx."),
                                        "app/util.py": UTIL.replace("helper(2)", "helper(3)")}],
    # moved refs are paired by every field but their lines: a name of the same length at the same place differs
    "a line inserted above names renamed below": [{"app/lib.py": "# top\n" + LIB.replace("box = Box()", "bx = Box()")
                                                   .replace("box.", "bx.").replace("return h(item)", "return g(item)")
                                                   .replace("helper as h", "helper as g")
                                                   .replace("self.items", "self.itemz")}],
    "an import changed": [{"app/lib.py": LIB.replace("helper as h", "other as h")}],
    "a definition's signature changed, its users not": [{"app/util.py": UTIL.replace("helper(x)", "helper(x, y=0)")}],
    "member refs moved between exemplar files": [
        {f"app/crowd_{n:02}.py": "def f(obj):\n    pass\n" + "".join(f"    obj.put({i})\n" for i in range(3))
         for n in range(0, 12, 2)},
        {"app/crowd_00.py": "def f(obj):\n    obj.take(1)\n"}],
    "a file emptied, then given its text back": [{"app/util.py": ""}, {"app/util.py": UTIL}],
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_a_rewritten_file_ends_like_a_cold_build(name: str) -> None:
    tree = Tree()
    try:
        tree.apply(BASE)
        files = dict(BASE)
        for batch in EDITS[name]:
            tree.apply(batch)
            files.update(batch)
        assert tree.facts() == _cold(files)
    finally:
        tree.conn.close()


def _lib_refs(tree: Tree) -> dict[int, tuple[int, str, int, int]]:
    """``app/lib.py``'s refs by id: (id, token, line, column)."""
    return {r[0]: r for r in tree.conn.execute("SELECT ref_id, token_text, start_line, start_col FROM st_ref "
                                               "JOIN st_file USING (file_id) WHERE path = 'app/lib.py'")}


def test_an_appended_line_keeps_every_other_reference_row() -> None:
    tree = Tree()
    try:
        tree.apply(BASE)
        before = _lib_refs(tree)
        report = tree.apply({"app/lib.py": LIB + "\nscale_touch_token = 1\n"})
        after = _lib_refs(tree)
        assert set(before) < set(after) and all(after[i] == before[i] for i in before)  # kept, under its id
        assert [r[1] for i, r in after.items() if i not in before] == ["scale_touch_token"]
        assert (report.refs_kept, report.refs_written) == (len(before), 1)
    finally:
        tree.conn.close()


def test_a_line_inserted_in_the_middle_keeps_the_rows_above_it_and_moves_those_below() -> None:
    tree = Tree()
    try:
        tree.apply(BASE)
        before = _lib_refs(tree)
        lines = LIB.splitlines(keepends=True)
        report = tree.apply({"app/lib.py": "".join([*lines[:12], "scale_mid_token = 1\n", *lines[12:]])})
        after = _lib_refs(tree)
        above = {i for i, r in before.items() if r[2] <= 12}
        assert above and above < set(after) and all(after[i] == before[i] for i in above)
        # the rest kept their rows, one line down (their lines updated, not deleted and inserted again)
        below = set(before) - above
        assert below and all(after[i] == (i, before[i][1], before[i][2] + 1, before[i][3]) for i in below)
        assert [r[1] for i, r in after.items() if i not in before] == ["scale_mid_token"]
        assert (report.refs_kept, report.refs_written) == (len(before), len(below) + 1)
    finally:
        tree.conn.close()


def test_a_line_inserted_above_everything_moves_every_row() -> None:
    tree = Tree()
    try:
        tree.apply(BASE)
        before = _lib_refs(tree)
        report = tree.apply({"app/lib.py": "# top\n" + LIB})
        after = _lib_refs(tree)
        assert set(after) == set(before)
        assert all(after[i] == (i, token, line + 1, col) for i, (_, token, line, col) in before.items())
        assert (report.refs_kept, report.refs_written) == (len(before), len(before))
    finally:
        tree.conn.close()


def test_without_sqlite_serialize_the_rows_go_through_temp_tables_and_end_the_same(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(staging, "SERIALIZE", False)  # an SQLite built without serialize/deserialize
    tree = Tree()
    try:
        tree.apply(BASE)
        files = dict(BASE)
        for batch in (*EDITS["a scope added in the middle, then removed"], *EDITS["a line appended to every file"]):
            report = tree.apply(batch)
            files.update(batch)
        assert report.refs_kept > 0
        assert tree.facts() == _cold(files)
    finally:
        tree.conn.close()
