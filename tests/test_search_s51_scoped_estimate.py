"""A scoped search's ``total_estimate`` is the scope's (QA42 §4): the estimate counted every candidate of the tree
(``~30958`` for a scope holding 300 hits), the path scope being applied only as the scan went.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import ServerHandle, answer_text, call, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_FILES = {
    **{f"scoped/m{n}.py": "needle = 1\nneedle = 2  # q42\n" for n in range(3)},
    **{f"other/o{n:02}.py": "needle = 0  # q42\n" * 20 for n in range(40)},
    # TypeScript is a language narrower than its family (javascript): its files are told apart by suffix.
    **{f"web/t{n}.ts": "let needle = 1;\nneedle = 2;  // q42\n" for n in range(3)},
    **{f"web/j{n:02}.js": "needle = 0;  // q42\n" * 20 for n in range(40)},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    with running_server(make_repo(tmp_path_factory.mktemp("estimate") / "repo", _FILES)) as handle:
        yield handle


async def _all_pages(client: Any, args: dict[str, Any]) -> tuple[list[int], int]:
    """Each page's total_estimate, and the hits of every page."""
    estimates, hits, cursor = [], 0, None
    while True:
        page = await call(client, "search", {**args, **({"cursor": cursor} if cursor else {})})
        estimates.append(page["pagination"]["total_estimate"])
        hits += len(page["results"])
        cursor = page["pagination"].get("next_cursor")
        if cursor is None:
            return estimates, hits


@pytest.mark.parametrize("query", [
    {"query": "needle", "syntax": "identifier"},  # Tantivy's candidates
    {"query": r"[q][0-9]{2}", "syntax": "regex"},  # no literal to narrow by: every text file is a candidate
])
@pytest.mark.parametrize(("scope", "inside"), [
    ({"paths": ["scoped/"]}, "scoped/"), ({"paths": ["scoped/*.py"]}, "scoped/"),
    ({"paths": ["*.py", "!other/"]}, "scoped/"), ({"languages": ["typescript"]}, "web/t"),
])
async def test_a_scoped_estimate_counts_the_scope_only(server: ServerHandle, query: dict[str, Any],
                                                       scope: dict[str, list[str]], inside: str) -> None:
    exact = sum(text.count("needle" if query["syntax"] == "identifier" else "q42")
                for path, text in _FILES.items() if path.startswith(inside))
    args = {**query, "limit": 1, "scope": scope}
    async with mcp_client(server) as client:
        estimates, hits = await _all_pages(client, args)
        first = await client.call_tool("search", args)
    assert hits == exact
    # The first page has scanned one of the scope's files; the estimate is of the scope (an exact one here: its
    # files hold the same count), neither of the 40 other files' 800 hits nor of none of them.
    assert exact // 2 <= estimates[0] <= 2 * exact, estimates
    assert f"1 of ~{estimates[0]}" in answer_text(first) or f"1 of {estimates[0]}" in answer_text(first)
