"""A regex is narrowed to candidate files only as the engine that matches it reads it (QA21 #3).

The required terms came from the stdlib ``re`` parser while the ``regex`` engine matched: ``[[:alpha:]]dle`` (for
``re`` a set then the literal ``]dle``) was narrowed to files holding the token ``dle`` and found nothing,
``(?:needle){e<=1}`` (a fuzzy match) likewise, and ``\\p{Han}+`` and ``\\X`` were refused as invalid.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from codeplane.index.query import compile_query
from tests.builders import ServerHandle, call, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("syntax") / "repo", {
        "m.py": "def needle():\n    return 1\n",
        "typo.py": "def neexle():\n    pass\n",
        "han.md": "title 漢字 here\n",
        "other.txt": "nothing to see\n",
    })
    with running_server(repo) as handle:
        yield handle


@pytest.mark.parametrize(("query", "expected"), [
    ("[[:alpha:]]dle", [("m.py", 1)]),
    ("need[[:alpha:]]e", [("m.py", 1)]),
    ("(?:needle){e<=1}", [("m.py", 1), ("typo.py", 1)]),
    (r"def\{e<=1}", []),  # an escaped brace: literal text for both parsers
    (r"\p{Han}+", [("han.md", 1)]),
    (r"e\X漢", [("han.md", 1)]),
])
async def test_a_regex_finds_what_the_regex_engine_matches(server: ServerHandle, query: str,
                                                          expected: list[tuple[str, int]]) -> None:
    async with mcp_client(server) as client:
        found = await call(client, "search", {"query": query, "syntax": "regex"})
    assert sorted((h["path"], h["line"]) for h in found.get("results", [])) == expected


def test_an_ordinary_regex_is_still_narrowed_by_its_terms() -> None:
    assert [f.text for f in compile_query(r"def needle_\d+\(", "regex").fragments] == ["def", "needle_"]
    assert [f.text for f in compile_query(r"\{e<=1\}x{2,3}", "regex").fragments] == ["e", "1", "x"]
    assert compile_query("[[:alpha:]]dle", "regex").fragments == ()
