"""A scoped search narrows its candidates two ways (``RankedCandidates.within``): up to ``PREFETCH_MAX`` matching
documents are fetched and the scope's kept; beyond, a term set of the scope's paths narrows the query. Both must
give the same hits, pages and estimates, and ``path_matcher`` must select what ``pathspec`` selects.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codeplane.index.globs import path_matcher, scope_spec
from codeplane.index.lexical_rank import RankedCandidates
from codeplane.index.search import LexicalScope
from codeplane.index.service_models import LexicalRequest
from tests.builders import make_repo
from tests.index_helpers import running_index

_FILES = {
    **{f"pkg/sub{n % 3}/m{n:02}.py": f"needle = {n}\n" + "other = needle\n" * (n % 4) for n in range(30)},
    **{f"docs/d{n}.md": "the needle here\n" for n in range(5)},
    "tests/pkg/test_m.py": "from pkg import needle\n",
    "pkg/notes.txt": "needle\n",
}

_SCOPES = [("pkg/",), ("pkg/sub1/",), ("*.md",), ("pkg/", "!pkg/sub2/"), ("/pkg/*/m0*.py",), ("**/pkg/*.py",),
           ("!docs/",), ("nothing/",)]


def _pages(service: object, scope: tuple[str, ...]) -> list[tuple[list[tuple[str, int, int]], int]]:
    request = LexicalRequest(query="needle", syntax="identifier", scope=LexicalScope(paths=scope))
    pages, cursor = [], None
    while True:
        page = service.search_lexical(request, limit=7, cursor=cursor)  # type: ignore[attr-defined]
        pages.append(([(h.path, h.line, h.column) for h in page.hits], page.total))
        cursor = page.next_cursor
        if cursor is None:
            return pages


def test_prefetched_and_term_set_narrowing_answer_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", _FILES)
    with running_index(repo) as service:
        fetched = {scope: _pages(service, scope) for scope in _SCOPES}
        monkeypatch.setattr(RankedCandidates, "PREFETCH_MAX", 0)
        by_set = {scope: _pages(service, scope) for scope in _SCOPES}
    assert by_set == fetched
    for scope, pages in fetched.items():  # every line holding the word, in the scope's files (rg -w -g ...)
        selected = path_matcher(scope)
        expected = {(path, number) for path, text in _FILES.items() if selected and selected(path)
                    for number, line in enumerate(text.splitlines(), 1) if re.search(r"\bneedle\b", line)}
        assert {(path, line) for hits, _ in pages for path, line, _ in hits} == expected, scope
    assert len(fetched[("pkg/", "!pkg/sub2/")][0][0]) == 7
    assert fetched[("nothing/",)] == [([], 0)]


@pytest.mark.parametrize("globs", [("src/",), ("*.py",), ("!*.txt",), ("src/", "!src/x/"), ("/a/b.py",),
                                   ("**/tests/*.py", "!**/tests/test_a.py"), ("*.{py,txt}",), ("./src/m.py",),
                                   ("a/**/b",), ("foo",), ("#comment", "a/")])
def test_path_matcher_selects_what_pathspec_selects(globs: tuple[str, ...]) -> None:
    paths = ["src/x.py", "a/src/y.txt", "src/x/a.py", "a/b.py", "x/a/b.py", "t/tests/test_a.py", "tests/test_b.py",
             "r.txt", "src/m.py", "a/c/d/b", "a/b", "foo", "x/foo/y.py", "foo.py", "#comment"]
    spec, selected = scope_spec(globs), path_matcher(globs)
    assert spec is not None and selected is not None
    assert [p for p in paths if selected(p)] == [p for p in paths if spec.match_file(p)]
