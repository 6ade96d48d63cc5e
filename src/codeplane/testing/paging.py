"""Offset cursors for test listings (§23.6): opaque, bound to the query they came from.

Discovery and finished runs are deterministic, so an offset into the sorted list is a stable position; the cursor
also names the list it points into (a digest), so one issued before the list changed, or past its end, is 1005
rather than a page of another list.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from typing import TypeVar

from codeplane.core.errors import CodePlaneError, ErrorCode

T = TypeVar("T")


def query_key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def page(items: Sequence[T], *, key: str, cursor: str | None, limit: int,
         growing: bool = False) -> tuple[list[T], str | None]:
    """The page of ``items`` at ``cursor`` and the cursor of the next page (None on the last page). ``growing``:
    the list is a running test run's, which gains items between pages (its cursor names the query only)."""
    if not growing:
        key = f"{key}:{hashlib.sha256(repr(list(items)).encode()).hexdigest()[:12]}"
    offset = 0
    if cursor:
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            data = json.loads(base64.urlsafe_b64decode(padded.encode()))
            offset, cursor_key = int(data["o"]), str(data["k"])
        except (ValueError, KeyError, TypeError) as exc:
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor is malformed",
                                 details={"cursor": cursor[:100]}) from exc
        if cursor_key != key or offset < 0 or offset >= max(len(items), 1):
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor belongs to another query, or what it lists "
                                 "changed since; ask again without it", details={"cursor": cursor[:100]})
    chunk = list(items[offset:offset + limit])
    end = offset + len(chunk)
    if end >= len(items):
        return chunk, None
    raw = json.dumps({"k": key, "o": end}, separators=(",", ":")).encode()
    return chunk, base64.urlsafe_b64encode(raw).decode().rstrip("=")
