"""QA51 #2: a lexical page's ``total`` (an estimate until the last page) must not depend on how far other chains
have read the same answer: the same cursor answered ``~197`` and later ``~140``, and two clients paging one query
saw ``~51``, ``~53`` or ``~54`` on the same page. A page before the last repeats the first page's estimate; the
last page says the exact count."""

from __future__ import annotations

from pathlib import Path

from codeplane.index.service_models import LexicalRequest
from tests.builders import make_repo
from tests.index_helpers import running_index


def _files() -> dict[str, str]:
    # Hit densities that vary a lot from file to file, so an estimate from the files read so far misses the count.
    files = {}
    for i in range(120):
        hits = 1 + (i * 7919) % 23 if i % 5 else 40
        body = "".join(f"value_{j} = needle_token({j})\n" if j < hits else f"other_{j} = {j}\n" for j in range(60))
        files[f"pkg/m{i:03d}.py"] = body
    return files


def test_the_same_cursor_answers_the_same_total_however_far_others_read(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", _files())
    request = LexicalRequest(query="needle_token", syntax="identifier")
    with running_index(root) as index:
        first = index.search_lexical(request, limit=25)
        assert first.next_cursor is not None
        second = index.search_lexical(request, limit=25, cursor=first.next_cursor)
        assert second.next_cursor is not None
        page, exact = second, len(first.hits) + len(second.hits)
        while page.next_cursor is not None:  # another chain reads the answer to its end
            page = index.search_lexical(request, limit=25, cursor=page.next_cursor)
            exact += len(page.hits)
        assert page.total == exact, "the last page says the exact count"
        assert first.total != exact, "the test needs an estimate that differs from the exact count"
        again = index.search_lexical(request, limit=25, cursor=first.next_cursor)
        assert (again.hits, again.total, again.next_cursor) == (second.hits, second.total, second.next_cursor)
        assert again.total == first.total
        restarted = index.search_lexical(request, limit=25)
        assert (restarted.hits, restarted.total, restarted.next_cursor) == (first.hits, first.total,
                                                                             first.next_cursor)
