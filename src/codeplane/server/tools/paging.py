"""Answers bounded in text (issue 16): no answer's text is over :data:`TEXT_LIMIT` bytes without a cursor.

A tool whose answer is one document (a file at a revision, a diff, a status, a whole file, a list of tags,
branches or stashes) splits the typed record into pages whose renderings fit :data:`PAGE_BYTES`, each page a
record of the same output schema holding its part (a blob's text chunk, a diff's files and hunk lines, a run of
list entries) and saying where it is (:class:`PagedText`). The pages of one answer are computed on the first call
and kept in a :class:`~codeplane.index.cursors.CursorStore` (one page per cursor step), so a continuation
never recomputes, shifts or repeats a part, and the cursor has the store's form (``<snapshot>.<offset>``),
bound to the query that made it. Tools that page by items on the service side keep their cursors and only
take fewer items when their rendering would not fit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field

from codeplane.index.cursors import CursorStore
from codeplane.server.tooling import ToolResult

T = TypeVar("T")

#: Most UTF-8 bytes of text an answer may have without a cursor (issue 16).
TEXT_LIMIT = 16 * 1024
#: Bytes a page's body may take: the rest of :data:`TEXT_LIMIT` is left for head, cursor and ``meta:`` lines.
PAGE_BYTES = 14 * 1024


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def chunk_text(text: str, budget: int = PAGE_BYTES) -> list[str]:
    """``text`` cut after line ends into chunks of at most ``budget`` UTF-8 bytes whose concatenation is
    ``text``; a line longer than ``budget`` is cut between characters."""
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for whole in text.splitlines(keepends=True):
        line, n = whole, size(whole)
        if used + n > budget and current:
            chunks.append("".join(current))
            current, used = [], 0
        while n > budget:
            head = line.encode("utf-8")[:budget].decode("utf-8", errors="ignore")
            chunks.append(head)
            line = line[len(head):]
            n = size(line)
        if line:
            current.append(line)
            used += n
    if current or not chunks:
        chunks.append("".join(current))
    return chunks


def items_that_fit(count: int, render_first: Callable[[int], str], budget: int = PAGE_BYTES) -> int:
    """The most of a page's ``count`` items (at least one) whose rendering, ``render_first(k)`` for the first
    ``k`` with a cursor as long as a real one, fits ``budget``: the tools that page by items take that many."""
    if count < 2 or size(render_first(count)) <= budget:
        return count
    low, high = 1, count - 1
    while low < high:
        mid = (low + high + 1) // 2
        if size(render_first(mid)) <= budget:
            low = mid
        else:
            high = mid - 1
    return low


#: Stands for a cursor while measuring a page that will have one.
CURSOR_STAND_IN = "0" * 32


def page_line(part: int, parts: int, next_cursor: str | None) -> str:
    """The line a paged text ends with: which part this is and the cursor of the next."""
    line = f"part {part}/{parts}"
    return line + (f"; next cursor: {next_cursor}" if next_cursor else "")


#: Pages a store keeps across its live cursors (a page holds up to a text's worth, not a search hit's: ~14 MB of
#: text; the oldest answers go first, the newest is always kept whole).
MAX_STORED_PAGES = 1000


class PageCursors(Generic[T]):
    """The pages of answers too long for one text, served one per call."""

    def __init__(self) -> None:
        self._store: CursorStore[tuple[int, T]] = CursorStore(max_items=MAX_STORED_PAGES)

    def first(self, pages: Sequence[T], key: str) -> tuple[T, str | None]:
        """Page 1 and the cursor of page 2 (none for a single page, which is not stored).

        The cursor names the answer's content, not only the call's arguments: the same call made after the file,
        diff or status changed took over the earlier answer's id, and its chain went on into the new answer (a
        "whole file" of 188 old and 612 new lines). The same content keeps the same id (same bytes)."""
        digest = hashlib.sha256()
        for item in pages:
            digest.update(item.model_dump_json().encode() if isinstance(item, BaseModel) else repr(item).encode())
        page = self._store.first_page(list(enumerate(pages, 1)), total=len(pages),
                                      epoch=int(digest.hexdigest()[:15], 16), query_key=key, limit=1)
        return page.items[0][1], page.next_cursor

    def next(self, cursor: str, key: str) -> tuple[T, int, int, str | None]:
        """The page ``cursor`` points at, its 1-based number, the count of pages and the next cursor (1005
        for a cursor of another query, expired or made up)."""
        page = self._store.next_page(cursor, query_key=key, limit=1)
        number, item = page.items[0]
        return item, number, page.total, page.next_cursor


class PagedText(ToolResult):
    """Where a paged answer is: its part, the count of parts and the cursor of the next."""

    part: int | None = Field(default=None, description="This answer is part `part` of `parts`; cursor continues.")
    parts: int | None = None
    next_cursor: str | None = None


P = TypeVar("P", bound=PagedText)


#: Fewest bytes an item's line takes (a 12-digit id and a name): bounds the items one part is measured over.
_MIN_LINE_BYTES = 10


def split_rendered(result: P, field: str, render: Callable[[P], str], budget: int = PAGE_BYTES,
                   max_items: int | None = None) -> list[P]:
    """``result`` as parts, each holding as many items of its list ``field`` (``max_items`` at most) as its text,
    ``render(part)`` with a part line and a cursor as long as real ones, fits in ``budget`` (one item at least);
    ``[result]`` when the whole list fits. Sized by the text, not the record: the record's 40-digit ids and
    tagger emails made parts of 44 tags in 6 KB, 15 calls where the text needed 6."""
    items = list(getattr(result, field))
    per_part = min(max_items or len(items), budget // _MIN_LINE_BYTES)
    if len(items) <= per_part and size(render(result)) <= budget:
        return [result]
    most = len(items)  # as many digits as any real part number
    runs: list[list[Any]] = []
    start = 0
    while start < len(items):
        window = items[start:start + per_part]

        def text_of(k: int, window: list[Any] = window) -> str:
            return render(result.model_copy(update={field: window[:k], "part": most, "parts": most,
                                                    "next_cursor": CURSOR_STAND_IN}))

        take = items_that_fit(len(window), text_of, budget)
        runs.append(window[:take])
        start += take
    return [result.model_copy(update={field: run}) for run in runs]


def first_parts(parts: Sequence[P], store: PageCursors[P], key: str) -> P:
    """Part 1 of ``parts`` (kept in ``store`` for the cursor); a single part is returned as it is."""
    if len(parts) < 2:
        return parts[0]
    first, next_cursor = store.first(parts, key)
    return first.model_copy(update={"part": 1, "parts": len(parts), "next_cursor": next_cursor})


def first_of_list(result: P, field: str, store: PageCursors[P], key: str, render: Callable[[P], str]) -> P:
    """``result`` with its list ``field`` cut to the items whose ``render``ed text fits, the rest kept for the
    cursor."""
    return first_parts(split_rendered(result, field, render), store, key)


def next_of_list(store: PageCursors[P], cursor: str, key: str) -> P:
    page, part, parts, next_cursor = store.next(cursor, key)
    return page.model_copy(update={"part": part, "parts": parts, "next_cursor": next_cursor})
