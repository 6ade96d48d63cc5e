"""A regex's time budget bounds one match, not a whole long line paged out over many calls (QA21 #2).

``regex``'s timeout counts the process's CPU time from the iterator's creation. The cursor keeps the iterator of
the line it stopped in, so paging with ``a`` through a line of a million ``a`` answered 3006 ("nested
quantifiers...") at page ~120: the server's work between pages had spent the budget.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from codeplane.index.search import LexicalScope
from codeplane.index.service_models import LexicalRequest
from tests.builders import call, make_repo, mcp_client, running_server
from tests.index_helpers import running_index

pytestmark = pytest.mark.anyio


def _burn_cpu(seconds: float) -> None:
    began = time.process_time()
    while time.process_time() - began < seconds:
        sum(range(1000))


def test_cpu_spent_between_pages_does_not_refuse_a_regex(tmp_path: Path) -> None:
    count = 20_000
    repo = make_repo(tmp_path / "repo", {"big.txt": "a" * count + " needle " + "b" * 10 + "\n"})
    request = LexicalRequest(query="a", syntax="regex", scope=LexicalScope(paths=("big.txt",)))
    with running_index(repo) as index:
        page = index.search_lexical(request, limit=100)
        columns = [h.column for h in page.hits]
        _burn_cpu(1.2)  # other calls' work: the budget of the iterator the cursor keeps is spent
        while page.next_cursor is not None:
            page = index.search_lexical(request, limit=100, cursor=page.next_cursor)
            columns += [h.column for h in page.hits]
    assert columns == list(range(1, count + 1))


async def test_every_hit_of_a_long_line_is_paged_out_once_through_the_server(tmp_path: Path) -> None:
    count = 40_000
    repo = make_repo(tmp_path / "repo", {"big.txt": "a" * count + " needle " + "b" * 100 + "\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            args = {"query": "a", "syntax": "regex", "limit": 100, "scope": {"paths": ["big.txt"]}}
            found = await call(client, "search", args)
            columns = [h["column"] for h in found["results"]]
            while found["pagination"].get("next_cursor"):
                found = await call(client, "search", {**args, "cursor": found["pagination"]["next_cursor"]})
                columns += [h["column"] for h in found["results"]]
    assert columns == list(range(1, count + 1))
