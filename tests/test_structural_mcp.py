"""Structural search modes, map_repo and the structural status through the real server and MCP client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    call_error,
    envelope,
    make_repo,
    mcp_client,
    running_server,
)

pytestmark = pytest.mark.anyio

FILES: dict[str, str | bytes] = {
    "pyproject.toml": "[project]\nname = 'shop'\n[project.scripts]\nshop = 'shop.cli:main'\n",
    "shop/__init__.py": "from .models import Cart, total\n__all__ = ['Cart', 'total']\n",
    "shop/models.py": "class Cart:\n    def add(self, item):\n        return total([item])\n\n\n"
                      "def total(items):\n    return sum(items)\n",
    "shop/cli.py": "import requests\nfrom shop import Cart, total\n\n\ndef main():\n    Cart().add(1)\n"
                   "    return total([2])\n",
    "tests/test_models.py": "from shop.models import total\n\n\ndef test_total():\n    assert total([1]) == 1\n",
    "web/src/app.ts": "import { join } from './util';\nexport function render() { return join('a'); }\n",
    "web/src/util.ts": "export function join(a: string) { return a; }\n",
    "docs/guide.md": "# Guide\n\nUse `total`.\n",
    **{f"many/m{i:02d}.py": f"def f{i}():\n    return {i}\n" for i in range(30)},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("structural_mcp") / "repo", FILES)
    with running_server(repo) as handle:
        yield handle


def _where(result: dict[str, Any]) -> list[tuple[str, int, str | None, str | None]]:
    return [(h["path"], h["line"], h["role"], h["ref_tier"]) for h in result["results"]]


async def test_references_report_tier_and_certainty_for_each_occurrence(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        result = await call(client, "search", {"query": "total", "mode": "references"})
    found = _where(result)
    assert ("shop/models.py", 3, "REFERENCE", "PROVEN") in found
    assert ("shop/cli.py", 7, "REFERENCE", "STRONG") in found
    assert ("tests/test_models.py", 5, "REFERENCE", "STRONG") in found
    tiers = [h["ref_tier"] for h in result["results"]]
    assert tiers == sorted(tiers, key=["PROVEN", "STRONG", "ANCHORED", "UNKNOWN"].index)
    assert all(h["certainty"] in ("CERTAIN", "UNCERTAIN") and h["symbol"]["def_uid"] for h in result["results"])
    first = result["results"][0]
    assert first["column"] >= 1 and first["snippet"]


async def test_symbols_by_name_prefix_qualified_name_and_uid(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        fuzzy = await call(client, "search", {"query": "tot", "mode": "symbol"})
        qualified = await call(client, "search", {"query": "models.Cart.add", "mode": "definitions"})
        uid = qualified["results"][0]["symbol"]["def_uid"]
        by_uid = await call(client, "search", {"query": uid, "mode": "definitions"})
        classes = await call(client, "search", {"query": "a", "mode": "symbol", "scope": {"kinds": ["class"]}})
        ts_only = await call(client, "search", {"query": "join", "mode": "definitions",
                                                "scope": {"languages": ["javascript"]}})
    assert fuzzy["results"][0]["symbol"]["name"] == "total"
    assert [(h["path"], h["line"]) for h in qualified["results"]] == [("shop/models.py", 2)]
    assert qualified["results"][0]["symbol"]["qualified_name"] == "shop.models.Cart.add"
    assert by_uid["results"] == qualified["results"]
    assert {h["symbol"]["kind"] for h in classes["results"]} == {"class"}
    assert [h["path"] for h in ts_only["results"]] == ["web/src/util.ts"]


async def test_symbol_pages_cover_every_match_once(server: ServerHandle) -> None:
    seen: list[str] = []
    args: dict[str, Any] = {"query": "f", "mode": "symbol", "limit": 7, "scope": {"paths": ["many/"]}}
    async with mcp_client(server) as client:
        while True:
            page = await call(client, "search", args)
            seen += [h["symbol"]["name"] for h in page["results"]]
            if not page["pagination"].get("next_cursor"):
                break
            args = {**args, "cursor": page["pagination"]["next_cursor"]}
    assert sorted(seen) == sorted(f"f{i}" for i in range(30))


async def test_references_text_names_the_symbol_once_and_marks_only_hits_off_the_usual_tier(
        server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("search", {"query": "shop.models.total", "mode": "references"})
    hits, text = envelope(res)["result"]["results"], answer_text(res)
    sym = hits[0]["symbol"]
    named = f"{sym['kind']} {sym['qualified_name']} #{sym['def_uid']}"
    assert text.count(sym["def_uid"]) == 1 and text.splitlines()[0].startswith(named), text
    roles = [f"{h['role']} {h['ref_tier']}" for h in hits]
    usual = max(set(roles), key=lambda r: (roles.count(r), r))
    assert text.splitlines()[0] == f"{named}: {usual} unless marked", text
    shown: dict[tuple[str, int], str] = {}
    path = ""
    for line in text.splitlines()[1:]:
        number, _, rest = line.partition(":")
        if number.isdigit():
            shown[(path, int(number))] = rest
        else:
            path = line
    for hit, role in zip(hits, roles, strict=True):
        assert shown[(hit["path"], hit["line"])].startswith(f"[{role}] ") == (role != usual), (hit, text)


async def test_references_of_an_unknown_symbol_is_a_typed_error(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        error = await call_error(client, "search", {"query": "no_such_symbol_anywhere", "mode": "references"})
    assert error["code"] == 3007


async def test_map_repo_answers_every_section_from_the_index(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        result = await call(client, "map_repo", {"depth": 1, "limit": 5})
        rest = await call(client, "map_repo", {"depth": 1, "limit": 5, "cursor": result["structure"]["next_cursor"]})
    structure = result["structure"]
    assert structure["file_count"] == len(FILES) + 1  # and the .cplignore that ``cpl up`` writes
    assert [n["path"] for n in structure["tree"]] == ["docs", "many", "shop", "tests", "web"]
    assert [n["path"] for n in rest["structure"]["tree"]] == [".cplignore", "pyproject.toml"]
    assert next(n for n in structure["tree"] if n["path"] == "many")["file_count"] == 30
    assert "" in structure["contexts"]
    languages = {entry["language"]: entry["file_count"] for entry in result["languages"]}
    assert languages["python"] == 34 and languages["typescript"] == 2
    assert any(e["evidence"] == "declared_script" and e["qualified_name"] == "shop.cli.main"
               for e in result["entry_points"])
    assert [m["name"] for m in result["dependencies"]["external_modules"]] == ["requests"]
    assert result["test_layout"]["test_files"] == ["tests/test_models.py"]
    assert {(p["name"], p["evidence"]) for p in result["public_api"]} >= {("Cart", "__all__literal"),
                                                                            ("total", "__all__literal")}
    families = {(c["family"], c["root_path"], c["probe_status"]) for c in result["contexts"]}
    assert ("python", "", "valid") in families


async def test_map_repo_without_depth_folds_the_tree_to_one_page_opening_code_first(server: ServerHandle) -> None:
    """No depth asked: up to 3 levels in one page; ``many/`` (30 files) would take 20 nodes past the page and stays
    closed with its count, the smaller directories open. A depth asked lists every level, paginated."""
    async with mcp_client(server) as client:
        res = await client.call_tool("map_repo", {"include": ["structure"], "limit": 20})
        deep = await call(client, "map_repo", {"include": ["structure"], "depth": 3, "limit": 20})
    folded = envelope(res)["result"]["structure"]
    assert [n["path"] for n in folded["tree"]] == [
        "docs", "docs/guide.md", "many", "shop", "shop/__init__.py", "shop/cli.py", "shop/models.py", "tests",
        "tests/test_models.py", "web", "web/src", "web/src/app.ts", "web/src/util.ts", ".cplignore",
        "pyproject.toml"]
    assert folded["folded"] is True and "next_cursor" not in folded
    text = answer_text(res)
    assert "folded to fit" in text and "many/ 30" in text
    assert len(deep["structure"]["tree"]) == 20 and deep["structure"]["next_cursor"]
    assert "folded" not in deep["structure"]
    assert [n["path"] for n in deep["structure"]["tree"][2:5]] == ["many", "many/m00.py", "many/m01.py"]


async def test_map_repo_sections_can_be_selected(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        result = await call(client, "map_repo", {"include": ["dependencies"]})
    assert result["dependencies"]
    assert "structure" not in result and "languages" not in result


async def test_map_repo_text_names_each_public_module_once_and_only_contexts_with_files(
        server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("map_repo", {"include": ["public_api", "contexts"]})
    record, text = envelope(res)["result"], answer_text(res)
    modules = [line.strip().split(": ", 1)[0] for line in text.split("public api:\n", 1)[1].splitlines()
               if line.startswith("  ")]
    assert sorted(modules) == sorted({p["path"] for p in record["public_api"]}), text
    assert all(f"{p['name']} #{p['def_uid']}" in text for p in record["public_api"]), text
    contexts = text.split("contexts: ", 1)[1]
    empty = [c for c in record["contexts"] if c["probe_status"] == "empty"]
    assert "empty;" not in contexts and (f"(+{len(empty)} empty)" in contexts if empty else True), text
    assert all(f"#{c['context_id']} {c['family']}" in contexts for c in record["contexts"] if c not in empty)


async def test_edit_is_visible_to_symbol_search_right_after_write_source(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        await call(client, "write_source", {"edits": [{"path": "shop/models.py", "action": "update",
                                                       "old_text": "def total(items):",
                                                       "new_text": "def grand_total(items):"}]})
        renamed = await call(client, "search", {"query": "grand_total", "mode": "definitions"})
        gone = await call(client, "search", {"query": "total", "mode": "definitions"})
        await call(client, "write_source", {"edits": [{"path": "shop/models.py", "action": "update",
                                                       "old_text": "def grand_total(items):",
                                                       "new_text": "def total(items):"}]})
    assert [(h["path"], h["line"]) for h in renamed["results"]] == [("shop/models.py", 6)]
    assert all(h["path"] != "shop/models.py" for h in gone.get("results", []))


async def test_status_reports_languages_failures_and_grammar_versions(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        for _ in range(600):  # the fact counts are read on a thread: the first answers may say they are pending
            described = await call(client, "describe", {})
            if not described["status"]["structural"].get("counts_pending"):
                break
            await asyncio.sleep(0.05)
    structural = described["status"]["structural"]
    assert structural["by_language"]["python"]["parsed"] == 34
    assert structural["grammars"]["tree_sitter_language_pack"] == "0.13.0"
    assert structural["grammars"]["grammar_abi"]["python"] >= 14
    assert not structural.get("parse_failures") and structural["defs"] > 0
    assert server.get("/status").json()["structural"]["state"] == "ready"


async def test_read_source_reads_a_definition_by_symbol(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        read = await call(client, "read_source", {"targets": [{"symbol": "shop.models.Cart.add"},
                                                              {"symbol": "total"}]})
        unknown = await call_error(client, "read_source", {"targets": [{"symbol": "no_such_definition"}]})
        # with path: the definition of that name in that file (shop/cli.py only imports total)
        elsewhere = await call_error(client, "read_source", {"targets": [{"symbol": "total", "path": "shop/cli.py"}]})
        there = await call(client, "read_source", {"targets": [{"symbol": "total", "path": "shop/models.py"}]})
        neither = await call_error(client, "read_source", {"targets": [{"start_line": 1}]})
        ranged = await call_error(client, "read_source", {"targets": [{"symbol": "total", "start_line": 2}]})
    method, function = read["files"]
    assert (method["path"], method["range"], method["content"]) == (
        "shop/models.py", [2, 3], "    def add(self, item):\n        return total([item])\n")
    assert (function["path"], function["range"]) == ("shop/models.py", [6, 7])
    assert unknown["code"] == elsewhere["code"] == 3007
    assert [d["path"] for d in elsewhere["details"]["suggestions"]] == ["shop/models.py"]
    assert there["files"][0]["range"] == [6, 7]
    assert neither["code"] == ranged["code"] == 1003


async def test_a_definition_read_by_symbol_comes_with_what_is_written_above_it(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "app.py": ("import functools\n\n\nclass App:\n    # The app's name.\n    @functools.cached_property\n"
                   "    @staticmethod\n    def name() -> str:\n        return 'app'\n\n\n"
                   "class Flask(App):\n    pass\n"),
        "cmp/cmp.go": ("package cmp\n\n// Diff reports\n// the differences.\n"
                       "func Diff(x, y int) string {\n\treturn \"\"\n}\n"),
        "src/lib.rs": ("/// A version.\n///\n/// ```\n/// let v = 1;\n/// ```\n#[derive(Debug, Clone)]\n"
                       "pub struct Version {\n    pub major: u64,\n}\n"),
        "web/util.ts": ("import { x } from './x';\n\n/**\n * Joins two strings.\n */\n"
                        "export function join(a: string, b: string): string {\n  return a + b;\n}\n"),
    }
    repo = make_repo(tmp_path / "repo", files)
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            read = await call(client, "read_source", {"targets": [{"symbol": s} for s in (
                "App.name", "cmp.Diff", "Version", "join")]})
            inherited = await call_error(client, "read_source", {"targets": [{"symbol": "Flask.name"}]})
    spans = {f["path"]: (f["range"], f["content"].split("\n")[0]) for f in read["files"]}
    assert spans == {"app.py": ([5, 9], "    # The app's name."), "cmp/cmp.go": ([3, 7], "// Diff reports"),
                     "src/lib.rs": ([1, 9], "/// A version."), "web/util.ts": ([3, 8], "/**")}, spans
    # Flask.name is App's, inherited: the 3007 names where ``name`` is defined
    assert inherited["code"] == 3007 and [d["qualified_name"] for d in inherited["details"]["suggestions"]] == [
        "app.App.name"]


async def test_overloads_read_by_symbol_come_as_one_span_and_two_files_still_ask(tmp_path: Path) -> None:
    """``click.core.Context.invoke``: two ``@overload`` stubs and the implementation share one qualified name, so
    the 1003 asking for "a qualified name or a def_uid" could only be answered with a def_uid. Several of one name
    in one file are read together; one name in two files still asks which."""
    overloads = ("import typing as t\n\n\nclass Context:\n"
                 "    @t.overload\n    def invoke(self, cb: int) -> int: ...\n\n"
                 "    @t.overload\n    def invoke(self, cb: str) -> str: ...\n\n"
                 "    def invoke(self, cb):\n        return cb\n")
    repo = make_repo(tmp_path / "repo", {"core.py": overloads, "a.py": "def twin():\n    pass\n",
                                         "b.py": "def twin():\n    pass\n"})
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            read = await call(client, "read_source", {"targets": [{"symbol": "core.Context.invoke"}]})
            twins = await call_error(client, "read_source", {"targets": [{"symbol": "twin"}]})
    assert read["files"][0]["range"] == [5, 12], read
    assert twins["code"] == 1003 and twins["message"].count(" #") == 2


async def test_a_cpp_method_declared_in_a_header_is_read_where_it_is_defined(tmp_path: Path) -> None:
    """``geo.Shape.length`` named 2 definitions (the header's declaration and the source file's body): the
    declaration and the definition are one entity, read where it is defined, as "go to definition" does."""
    repo = make_repo(tmp_path / "repo", {
        "geo/shape.hpp": "namespace geo {\nclass Shape {\n public:\n  double length() const;\n};\n}\n",
        "geo/shape.cpp": ("#include \"shape.hpp\"\n\nnamespace geo {\n"
                          "double Shape::length() const {\n  return 1.0;\n}\n}\n")})
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            read = await call(client, "read_source", {"targets": [{"symbol": "Shape.length"}]})
    assert (read["files"][0]["path"], read["files"][0]["range"]) == ("geo/shape.cpp", [4, 6]), read


async def test_references_include_uses_through_a_commonjs_module_object(tmp_path: Path) -> None:
    # qs: ``var utils = require('./utils'); utils.compact(obj)``, exported by ``module.exports = { compact: ... }``,
    # which linking does not read: the use was missing from the answer.
    files: dict[str, str | bytes] = {
        "package.json": '{"name": "cjs"}\n',
        "lib/utils.js": ("var compact = function compact(v) {\n  return v;\n};\n\n"
                         "module.exports = { compact: compact };\n"),
        "lib/parse.js": ("var utils = require('./utils');\nvar other = require('./other');\n\n"
                         "module.exports = function (o) {\n  return [utils.compact(o), other.compact(o)];\n};\n"),
        "lib/other.js": "module.exports = { compact: function (v) { return v; } };\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            found = await call(client, "search", {"query": "lib/utils.compact", "mode": "references", "scope": {
                "paths": ["lib/parse.js"]}})
            impact = await call(client, "refactor_impact", {"target": "compact", "path": "lib/utils.js"})
            shown = answer_text(await client.call_tool("search", {"query": "lib/utils.compact",
                                                                  "mode": "references"}))
            # ``module.exports = { compact: function ... }`` defines other.js's own ``compact``
            theirs = await call(client, "search", {"query": "lib/other.compact", "mode": "references"})
    # ``var compact = function compact(v)``: a definition and a reference on one line, the line said once with
    # both (QA 46: the line's hits of other roles were a second line, or left unsaid)
    assert [line for line in shown.splitlines() if line.startswith("1:")] == [
        "1:[DEFINITION PROVEN, REFERENCE PROVEN] var compact = function compact(v) {"], shown
    # ``other.compact`` is another module's: not listed
    assert [(h["path"], h["line"], h["column"]) for h in found["results"]] == [("lib/parse.js", 5, 17)], found
    # deleting compact breaks utils.compact too
    assert [(r["path"], r["line"], r["tier"]) for r in impact["references"] if r["path"] == "lib/parse.js"] == [
        ("lib/parse.js", 5, "module_member")], impact
    assert [(h["path"], h["line"], h["column"]) for h in theirs["results"]] == [
        ("lib/other.js", 1, 20), ("lib/parse.js", 5, 35)], theirs


async def test_a_reference_by_name_of_several_definitions_is_given_to_none_of_them(tmp_path: Path) -> None:
    # ``get_send_file_max_age`` names Flask's and Blueprint's methods: Blueprint's ``self.get_send_file_max_age``
    # was listed under Flask's def_uid, the first of the two.
    body = "    def save(self):\n        return 1\n\n    def run(self):\n        return self.save()\n"
    files = {"pkg/__init__.py": "", "pkg/a.py": f"class A:\n{body}", "pkg/b.py": f"class B:\n{body}"}
    with running_server(make_repo(tmp_path / "repo", files)) as handle:
        async with mcp_client(handle) as client:
            both = await client.call_tool("search", {"query": "save", "mode": "references"})
            one = await call(client, "search", {"query": "pkg.b.B.save", "mode": "references"})
    calls = [h for h in envelope(both)["result"]["results"] if h["role"] == "REFERENCE"]
    assert sorted((h["path"], h["line"]) for h in calls) == [("pkg/a.py", 6), ("pkg/b.py", 6)]
    assert all("symbol" not in h for h in calls), calls
    assert answer_text(both).count("\n6:return self.save()") == 2, answer_text(both)  # under no def's uid
    # Asked about one of them, a reference by name is a candidate of that one.
    assert {h["symbol"]["qualified_name"] for h in one["results"]} == {"pkg.b.B.save"}


async def test_a_definition_search_right_after_another_program_edits_the_file_answers_its_new_lines(
        tmp_path: Path) -> None:
    """A line added above a definition by another program, then at once ``search(mode=definitions)``: the hit
    kept the indexed line number and read that line's new text (``13:[function ...] @t.overload``), until the
    watcher caught up. The page's files are checked against the disk and reindexed first. The watcher is off
    here, so only that check can make the answer right (its polling reconcile waits 2 s)."""
    repo = make_repo(tmp_path / "repo", {"pkg/g.py": "import os\n\n\ndef get_current():\n    return os\n"})
    with running_server(repo, "--set", "index.watch=false") as handle:
        async with mcp_client(handle) as client:
            found = await call(client, "search", {"query": "get_current", "mode": "definitions"})
            assert [(h["path"], h["line"]) for h in found["results"]] == [("pkg/g.py", 4)]
            (repo / "pkg" / "g.py").write_text("# a header\n# more\nimport os\n\n\ndef get_current():\n    return os\n")
            found = await call(client, "search", {"query": "get_current", "mode": "definitions"})
            assert [(h["path"], h["line"], h["snippet"]) for h in found["results"]] == [
                ("pkg/g.py", 6, "def get_current():")]
            # A read by symbol spans the definition's lines as they are now, too.
            (repo / "pkg" / "g.py").write_text("import os\n\n\ndef get_current():\n    return os\n")
            read = await call(client, "read_source", {"targets": [{"symbol": "get_current"}]})
            assert read["files"][0]["content"] == "def get_current():\n    return os\n", read
