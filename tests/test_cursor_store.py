"""The cursor store's bounds (§23.6): cursors expire after their TTL and the least recently used go first once
the stored items pass the budget (counted as snapshots come, go and grow, not summed anew on every call)."""

from __future__ import annotations

import time

from codeplane.core.errors import CodePlaneError
from codeplane.index.cursors import CursorStore


def _open(store: CursorStore[int], key: str, size: int = 60) -> str:
    cursor = store.first_page(list(range(size)), total=size, epoch=1, query_key=key, limit=10).next_cursor
    assert cursor is not None
    return cursor


def _refused(store: CursorStore[int], cursor: str, key: str) -> bool:
    try:
        store.next_page(cursor, query_key=key, limit=10)
    except CodePlaneError as exc:
        assert exc.code == 1005
        return True
    return False


def test_past_the_item_budget_the_least_recently_used_cursor_goes_first() -> None:
    store: CursorStore[int] = CursorStore(max_items=150)
    a, b = _open(store, "a"), _open(store, "b")
    follow = store.next_page(a, query_key="a", limit=10).next_cursor  # a is used: b is now the oldest use
    assert follow is not None
    c = _open(store, "c")  # 180 items > 150: one snapshot goes
    assert _refused(store, b, "b")
    assert store.next_page(follow, query_key="a", limit=10).items == tuple(range(20, 30))
    assert store.next_page(c, query_key="c", limit=10).items == tuple(range(10, 20))


def test_a_cursor_expires_after_its_ttl_and_the_rest_stay() -> None:
    store: CursorStore[int] = CursorStore(ttl_sec=0.2)
    old = _open(store, "old")
    time.sleep(0.3)
    fresh = _open(store, "fresh")  # storing expires the old one
    assert _refused(store, old, "old")
    assert store.next_page(fresh, query_key="fresh", limit=10).items == tuple(range(10, 20))
