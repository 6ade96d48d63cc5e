"""Lexical ranking depends on the tree, not on its history: an index kept up to date incrementally (edits, a
``git mv``, a restart) answers every search (hits, order, scores, totals, pages) as a cold index of the same tree.

Tantivy's BM25 counts deleted documents in its statistics until a merge: one ``git mv tests test_suite`` of
identical bytes moved ``Path``'s scores from 5.6022 to 5.471 and put a test file in the first page, and a restart
kept it so (QA30 finding 2)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import tantivy

from codeplane.core.layout import RepoLayout
from codeplane.index.lexical import SCORING_FIELDS, LexicalIndex
from codeplane.index.search import LexicalScope
from codeplane.index.service import IndexService
from codeplane.index.service_models import LexicalRequest
from tests.builders import make_repo
from tests.index_helpers import running_index

QUERIES = (("Path", "identifier"), ("path", "text"), ("return None", "phrase"), ("def \\w+_path", "regex"),
           ("conv", "text"), ("value", "identifier"))


def _files() -> dict[str, str]:
    files: dict[str, str] = {}
    for n in range(24):
        body = "".join(f"    value = Path('p{k}')  # path {k}\n" for k in range(n % 7 + 1))
        files[f"src/mod{n:02d}.py"] = (f"from pathlib import Path\n\n\ndef make_path_{n}(value):\n{body}"
                                       + "    return None\n" * (n % 3) + "    return value\n")
        files[f"tests/test_mod{n:02d}.py"] = (f"def test_path_{n}():\n    assert Path('x{n}')\n    conv = {n}\n"
                                              + "    return None\n" * (n % 2))
    files["docs/notes.txt"] = "Path path PATH conv value\n" * 40
    return files


def _pages(index: IndexService, query: str, syntax: str, limit: int) -> list[Any]:
    """Every page of a query: hits with scores, the total stated and whether another page follows."""
    request = LexicalRequest(query=query, syntax=syntax, scope=LexicalScope())  # type: ignore[arg-type]
    page = index.search_lexical(request, limit=limit)
    pages = []
    while True:
        pages.append(([(h.path, h.line, h.column, h.score) for h in page.hits], page.total,
                      page.next_cursor is not None))
        if page.next_cursor is None:
            return pages
        page = index.search_lexical(request, limit=limit, cursor=page.next_cursor)


def _answers(index: IndexService) -> dict[tuple[str, str, int], list[Any]]:
    return {(q, s, limit): _pages(index, q, s, limit) for q, s in QUERIES for limit in (5, 100)}


def _cold(repo: Path, tmp_path: Path, name: str) -> dict[tuple[str, str, int], list[Any]]:
    copy = tmp_path / name
    shutil.copytree(repo, copy, symlinks=True)
    shutil.rmtree(RepoLayout(copy).state_dir, ignore_errors=True)
    with running_index(copy) as index:
        return _answers(index)


def test_edits_a_git_mv_and_a_restart_leave_every_search_as_a_cold_index_of_the_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", _files())
    with running_index(repo) as index:
        before = _answers(index)
        assert before == _cold(repo, tmp_path, "cold0")
        subprocess.run(["git", "mv", "tests", "test_suite"], cwd=repo, check=True, capture_output=True)
        for round_ in range(5):
            with (repo / "src/mod03.py").open("a") as handle:
                handle.write(f"# path note {round_}\n")
            index.reconcile()
        (repo / "src/mod05.py").unlink()
        index.reconcile()
        moved = _answers(index)
    cold = _cold(repo, tmp_path, "cold1")
    assert moved == cold
    paths = {hit[0] for page in moved[("Path", "identifier", 100)] for hit in page[0]}
    assert "test_suite/test_mod00.py" in paths and "src/mod05.py" not in paths
    with running_index(repo) as index:
        assert _answers(index) == cold


def test_the_scoring_fields_are_named_by_their_number_in_the_schema(tmp_path: Path) -> None:
    """An explanation names a field by its number: ``SCORING_FIELDS`` must follow ``_schema``'s order."""
    lexical = LexicalIndex(tmp_path / "tantivy")
    lexical.open()
    try:
        lexical.add(1, "a.py", "python", "Path path\n")
        lexical.commit()
        searcher = lexical._index.searcher()
        for number, field in SCORING_FIELDS.items():
            query = tantivy.Query.term_query(lexical._schema, field, "Path" if field == "cased" else "path")
            [(_, address)] = searcher.search(query, limit=1).hits
            assert f"field={number}," in query.explain(searcher, address).to_json()
    finally:
        lexical.close()
