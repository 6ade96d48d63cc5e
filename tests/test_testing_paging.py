"""Offset cursors of test listings name the list they point into: a cursor issued before the list changed, or
one whose offset is past its end, is 1005 (a forged offset was served; a changed selection gave duplicates)."""

from __future__ import annotations

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.testing.paging import page, query_key


def _walk(items: list[str], key: str) -> list[str]:
    seen, cursor = [], None
    while True:
        chunk, cursor = page(items, key=key, cursor=cursor, limit=3)
        seen += chunk
        if cursor is None:
            return seen


def test_a_cursor_pages_its_own_list_and_nothing_else() -> None:
    key = query_key("inspect_affected_tests", ["calc/ops.py"])
    items = [f"tests/test_{n}.py" for n in range(10)]
    assert _walk(items, key) == items
    _, cursor = page(items, key=key, cursor=None, limit=3)
    assert cursor is not None
    for changed in (items[1:], [*items, "tests/test_new.py"]):  # the selection changed between pages
        with pytest.raises(CodePlaneError) as stale:
            page(changed, key=key, cursor=cursor, limit=3)
        assert stale.value.code == 1005
    for forged in (cursor.rpartition(".")[0] + ".99", cursor.rpartition(".")[0] + ".6"):
        with pytest.raises(CodePlaneError) as past:
            page(items, key=key, cursor=forged, limit=3)
        assert past.value.code == 1005
    # A running test run's list grows between pages: its cursor names the query only.
    _, live = page(items, key=key, cursor=None, limit=3, growing=True)
    assert page([*items, "tests/test_new.py"], key=key, cursor=live, limit=3, growing=True)[0] == items[3:6]
