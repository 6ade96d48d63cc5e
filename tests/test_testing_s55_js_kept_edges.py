"""The JS edges test selection adds to the index's (``impact_jsresolve``) are kept per index epoch (s55).

Before, every selection (``write_source``'s ``tests_affected`` included) read every JS import row of the repository
and probed ``package.json`` files on disk, so its cost grew with the repository. Now an epoch that only edited
files reads those files' rows again and keeps the rest; an added file or a marker edit reads everything. Either
way the answer is the one a fresh read gives: a kept answer is never stale."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict
from pathlib import Path
from typing import Any

from codeplane.index.service import IndexService
from codeplane.testing import impact_jsresolve as jsresolve
from tests.builders import indexed_repo

_CHECK = "test('t', () => expect(1).toBe(1));\n"
FILES = {
    "package.json": ('{"name": "kit", "private": true, "imports": {"#cfg": "./src/cfg.json"},\n'
                     ' "jest": {"modulePaths": ["<rootDir>/src"]}, "devDependencies": {"jest": "29"}}\n'),
    "src/data.json": '{"x": 1}\n',
    "src/cfg.json": '{"y": 2}\n',
    "src/a.js": "exports.a = 1;\n",
    "src/b.js": "exports.b = require('a');\n",
    "test/a.test.js": "const { a } = require('../src/a');\n" + _CHECK,
    "test/b.test.js": "const { b } = require('../src/b');\n" + _CHECK,
}
TESTS = ["test/a.test.js", "test/b.test.js"]


def _edit(repo: Path, index: IndexService, path: str, text: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text, encoding="utf-8")
    index.refresh_paths([path])


def _reach(conn: sqlite3.Connection, repo: Path, changed: str) -> tuple[dict[str, Any], bool]:
    """(the answer, whether every JS import row was read for it)."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        found = jsresolve.reach(conn, repo, ["."], [changed], TESTS)
    finally:
        conn.set_trace_callback(None)
    # Every JS import row; a carried epoch reads only the edited files' (``AND f.path IN``).
    return asdict(found), any("FROM st_import" in s and "f.language IN ('javascript'" in s and "f.path IN" not in s
                              for s in statements)


def test_kept_edges_follow_every_edit_and_read_only_what_it_wrote(tmp_path: Path) -> None:
    with indexed_repo(tmp_path / "repo", FILES) as (repo, index):
        with index.read_connection() as conn:
            answer, whole = _reach(conn, repo, "src/a.js")
            assert whole and set(answer["tests"]) == {"test/b.test.js"}, answer  # ``require('a')``: modulePaths
            assert _reach(conn, repo, "src/a.js") == (answer, False), "the same epoch: kept"
        steps = [
            # an edit adding a JSON import and a ``#`` import of a JSON file: carried, yet seen
            ("src/a.js", "require('./data.json');\nrequire('#cfg');\nexports.a = 1;\n", False, "src/data.json",
             {"test/a.test.js", "test/b.test.js"}),
            ("src/a.js", "exports.a = 1;\n", False, "src/cfg.json", set()),
            # the modulePaths edge dropped by an edit
            ("src/b.js", "exports.b = 2;\n", False, "src/a.js", set()),
            # a new file: read whole
            ("src/c.js", "module.exports = require('./cfg.json');\n", True, "src/cfg.json", set()),
            # a marker edited (package.json): read whole
            ("package.json", FILES["package.json"].replace("./src/cfg.json", "./src/data.json"), True,
             "src/data.json", set()),
            ("test/a.test.js", "require('#cfg');\n" + _CHECK, False, "src/data.json", {"test/a.test.js"}),
        ]
        for path, text, read_whole, asked, selected in steps:
            _edit(repo, index, path, text)
            with index.read_connection() as conn:
                kept, whole = _reach(conn, repo, asked)
                jsresolve._KEPT.clear()  # white box: what a first selection of this epoch answers
                fresh, _ = _reach(conn, repo, asked)
            assert whole == read_whole, path
            assert kept == fresh, path
            assert set(kept["tests"]) == selected, (path, kept)
