"""A move has a documentation sweep, as a rename has (QA50 #2, spec §8.3/§8.11, "no silent misses").

``refactor_move`` of ``pkg/core.py`` (or of the symbol ``pkg.core.add``) answered "covers 1/1 occurrences" with no doc
edit while GUIDE.md still said `pkg.core`, ``from pkg.core import add`` and pkg/core.py; applied, the guide stayed
stale and nothing said so. A move's mentions of the old dotted module path and of the old file path in documentation
files are now doc edits weighed as a rename's (code blocks and inline code high, prose lower), applied per
``refactor.doc_sweep`` and counted in the coverage.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.config import CodePlaneConfig
from tests.builders import answer_text, call, cpl_env, envelope, make_repo, mcp_client, running_server
from tests.refactor_builders import refactor_env

GUIDE = ("# Guide\n\nThe module `pkg.core` holds `add`.\n\n```python\nfrom pkg.core import add\n```\n\n"
         "See pkg/core.py for the code.\n")
FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def add(a, b):\n    return a + b\n",
    "tests/test_core.py": "from pkg.core import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "GUIDE.md": GUIDE,
}


async def _doc_edits(client: Any, refactor_id: str) -> list[tuple[str, int, str, str, str]]:
    page = await call(client, "refactor_inspect", {"refactor_id": refactor_id, "kind": ["doc"],
                                                   "certainty": ["high", "medium", "low"]})
    return sorted((i["edit"]["path"], i["edit"]["line"], i["edit"]["old_text"], i["edit"]["new_text"],
                   i["edit"]["certainty"]) for i in page["items"])


@pytest.mark.anyio
async def test_a_file_move_proposes_and_applies_the_doc_edits_of_its_module_and_path(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("refactor_move", {"from_path": "pkg/core.py", "to_path": "pkg/calc.py"})
            preview, text = envelope(res)["result"], answer_text(res)
            assert preview["counts"]["doc"] == 3 and preview["coverage"]["by_reason"] == {"doc_file": 3}
            # The head counts the files the edits change (the moved module, the importing test), not GUIDE.md: its
            # doc edits have a line of their own; the coverage does not read complete (1 code edit of 4).
            assert "ready, 1 edits in 2 files [" in text and "\ndoc edits: 3 in 1 files (apply_docs: true to apply)\n" \
                in text and "\ncovers 1/4 occurrences" in text, text
            assert await _doc_edits(client, preview["refactor_id"]) == [
                ("GUIDE.md", 3, "pkg.core", "pkg.calc", "high"), ("GUIDE.md", 6, "pkg.core", "pkg.calc", "high"),
                ("GUIDE.md", 9, "pkg/core.py", "pkg/calc.py", "medium")]
            applied = await call(client, "refactor_apply", {"refactor_id": preview["refactor_id"], "apply_docs": True})
            assert applied["applied_edits"] == 1 and applied["applied_doc_edits"] == 3
    assert (repo / "GUIDE.md").read_text() == GUIDE.replace("pkg.core", "pkg.calc").replace("pkg/core.py",
                                                                                            "pkg/calc.py")
    assert (repo / "tests/test_core.py").read_text().startswith("from pkg.calc import add\n")


@pytest.mark.anyio
async def test_a_symbol_move_proposes_the_doc_edits_of_lines_naming_the_symbol(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("refactor_move", {"symbol": "pkg.core.add", "to_path": "pkg/calc.py"})
            preview, text = envelope(res)["result"], answer_text(res)
            assert preview["counts"]["doc"] == 2 and "\ncovers 3/5 occurrences" in text, text
            # The module stays: named beside the symbol it is a step lower; the file's mention names no symbol.
            assert await _doc_edits(client, preview["refactor_id"]) == [
                ("GUIDE.md", 3, "pkg.core", "pkg.calc", "medium"), ("GUIDE.md", 6, "pkg.core", "pkg.calc", "high")]
            cancelled = await call(client, "refactor_cancel", {"refactor_id": preview["refactor_id"]})
            assert cancelled["cancelled"]
            assert (repo / "GUIDE.md").read_text() == GUIDE, "a preview writes nothing"
            again = await call(client, "refactor_move", {"symbol": "pkg.core.add", "to_path": "pkg/calc.py"})
            applied = await call(client, "refactor_apply", {"refactor_id": again["refactor_id"], "apply_docs": True})
            assert applied["applied_doc_edits"] == 2
    assert (repo / "GUIDE.md").read_text() == GUIDE.replace("pkg.core", "pkg.calc")
    assert "See pkg/core.py" in (repo / "GUIDE.md").read_text()


@pytest.mark.anyio
async def test_apply_now_says_which_docs_it_left_and_auto_apply_writes_them(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("refactor_move", {"from_path": "pkg/core.py", "to_path": "pkg/calc.py",
                                                           "apply": True})
            record, text = envelope(res)["result"], answer_text(res)
    assert record["applied"]["applied_doc_edits"] == 0 and (repo / "GUIDE.md").read_text() == GUIDE
    assert text.endswith("\nwarning: 3 doc edits not applied (refactor.doc_sweep.auto_apply is off): GUIDE.md:3, "
                         "GUIDE.md:6, GUIDE.md:9"), text
    # With auto_apply, as for a rename: doc edits all high are applied with the code (a medium one would hold the
    # plan for a judgment).
    certain = GUIDE.split("See ", maxsplit=1)[0]
    auto = make_repo(tmp_path / "auto", {**FILES, "GUIDE.md": certain})
    with running_server(auto, env=cpl_env({"CODEPLANE__REFACTOR__DOC_SWEEP__AUTO_APPLY": "true"})) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("refactor_move", {"from_path": "pkg/core.py", "to_path": "pkg/calc.py",
                                                           "apply": True})
            record, text = envelope(res)["result"], answer_text(res)
    assert record["applied"]["applied_doc_edits"] == 2 and "warning" not in text, text
    assert (auto / "GUIDE.md").read_text() == certain.replace("pkg.core", "pkg.calc")


PRECISE = {
    **FILES,
    "pkg/core2.py": "def two():\n    return 2\n",
    "docs/guide.md": ("Neither `pkg.core2` nor `mypkg.core` nor `pkg.core-extras` is it, nor src/pkg/core.py,\n"
                      "mypkg/core.py or pkg/core.pyc; but [the code](../pkg/core.py) is, and so is `/pkg/core.py`.\n"
                      "Call pkg.core.add, not pkg.core.sub.\n"),
    "README.rst": "See ./pkg/core.py and ``pkg.core``.\n\nThe package pkg.core is small.\n",
    "notes.py": "# pkg.core in a code file is the code planner's\n",
}


def _planned_docs(env: Any, refactor_id: str) -> list[tuple[str, int, int, str, str, str]]:
    page = env.service.inspect(refactor_id, certainties=("high", "medium", "low"), kinds=("doc",))
    return sorted((i.edit.path, i.edit.line, i.edit.column, i.edit.old_text, i.edit.new_text, i.edit.certainty)
                  for i in page.items)


def test_doc_mentions_match_whole_names_and_whole_path_segments(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", PRECISE) as env:
        preview = env.service.move("pkg/core.py", "pkg/calc.py")
        docs = _planned_docs(env, preview.refactor_id)
        assert [d for d in docs if d[0] != "GUIDE.md"] == [
            ("README.rst", 1, 4, "./pkg/core.py", "./pkg/calc.py", "medium"),
            ("README.rst", 1, 24, "pkg.core", "pkg.calc", "high"),
            ("README.rst", 3, 12, "pkg.core", "pkg.calc", "medium"),
            ("docs/guide.md", 2, 46, "../pkg/core.py", "../pkg/calc.py", "medium"),
            ("docs/guide.md", 2, 77, "/pkg/core.py", "/pkg/calc.py", "high"),
            ("docs/guide.md", 3, 5, "pkg.core", "pkg.calc", "medium"),
            ("docs/guide.md", 3, 23, "pkg.core", "pkg.calc", "medium")], docs
        env.service.apply(preview.refactor_id, apply_docs=True)
        guide = env.read("docs/guide.md")
        assert guide.startswith(PRECISE["docs/guide.md"].split("\n")[0] + "\nmypkg/core.py or pkg/core.pyc; but "
                                "[the code](../pkg/calc.py) is, and so is `/pkg/calc.py`.\n"), guide
        assert env.read("README.rst") == "See ./pkg/calc.py and ``pkg.calc``.\n\nThe package pkg.calc is small.\n"
        assert env.read("notes.py") == PRECISE["notes.py"], "a code file's comment is not a documentation file"


def test_a_symbol_move_leaves_the_modules_other_names_and_weighs_a_shared_import_low(tmp_path: Path) -> None:
    files = {**PRECISE, "pkg/core.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
             "docs/api.md": ("```python\nfrom pkg.core import add, sub\nfrom pkg.core import sub\n"
                             "from pkg.core import add as plus\n```\n")}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move_symbol("pkg.core.add", "pkg/calc.py")
        docs = [d for d in _planned_docs(env, preview.refactor_id) if d[0] != "GUIDE.md"]
        assert docs == [("docs/api.md", 2, 5, "pkg.core", "pkg.calc", "low"),
                        ("docs/api.md", 4, 5, "pkg.core", "pkg.calc", "high"),
                        ("docs/guide.md", 3, 5, "pkg.core.add", "pkg.calc.add", "medium")], docs
        assert preview.coverage is not None and preview.coverage.by_reason == {"doc_file": 5}


def test_with_the_doc_sweep_off_the_mentions_are_low_code_candidates(tmp_path: Path) -> None:
    config = CodePlaneConfig()
    config = config.model_copy(update={"refactor": config.refactor.model_copy(update={
        "doc_sweep": config.refactor.doc_sweep.model_copy(update={"enabled": False})})})
    with refactor_env(tmp_path / "repo", FILES, config) as env:
        preview = env.service.move("pkg/core.py", "pkg/calc.py")
        assert preview.counts["doc"] == 0 and preview.counts["low"] == 3
        assert preview.coverage is not None and (preview.coverage.in_plan, preview.coverage.lexical_occurrences,
                                                 preview.coverage.low_candidates) == (1, 4, 3)
        env.service.apply(preview.refactor_id)
        assert env.read("GUIDE.md") == GUIDE, "low candidates are applied only by id"


def test_a_directory_move_and_a_js_move_rewrite_the_paths_docs_name(tmp_path: Path) -> None:
    files = {**FILES, "web/util.ts": "export const pad = (s: string) => s.padStart(2);\n",
             "web/main.ts": "import { pad } from './util';\nconsole.log(pad('1'));\n",
             "docs/layout.md": "- `pkg/` holds pkg/core.py; `pkg.core` is its module.\n- web/util.ts pads.\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        moved = env.service.move("pkg", "lib/pkg")
        code = {e.new_text for e in moved.edits}
        docs = [d for d in _planned_docs(env, moved.refactor_id) if d[0] == "docs/layout.md"]
        module = next(iter(code))  # the code's new module name, whatever root it resolves to
        assert re.fullmatch(r"[\w.]*pkg\.core", module), code
        assert docs == [("docs/layout.md", 1, 3, "pkg/", "lib/pkg/", "high"),
                        ("docs/layout.md", 1, 15, "pkg/core.py", "lib/pkg/core.py", "medium"),
                        ("docs/layout.md", 1, 29, "pkg.core", module, "high")], docs
        env.service.cancel(moved.refactor_id)
        js = env.service.move("web/util.ts", "web/lib/util.ts")
        assert [d for d in _planned_docs(env, js.refactor_id) if d[0] == "docs/layout.md"] == [
            ("docs/layout.md", 2, 2, "web/util.ts", "web/lib/util.ts", "medium")]
