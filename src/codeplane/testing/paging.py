"""Offset cursors for test listings (§23.6): short, opaque, bound to the query they came from.

Discovery and finished runs are deterministic, so an offset into the sorted list is a stable position and the
cursor needs no stored answer: ``<seal>.<offset>`` like the index's (``index/cursors.py``), the seal a digest of
the list it points into (the query and, unless the list grows, its items) and of the offset. One issued before the
list changed, with an offset edited by hand, or past the list's end is 1005 rather than a page of another list.
"""

from __future__ import annotations

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
        seal, dot, digits = cursor.partition(".")
        if not dot or not (digits.isascii() and digits.isdigit()) or len(digits) > _OFFSET_DIGITS:
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor is malformed",
                                 details={"cursor": cursor[:100]})
        offset = int(digits)
        if seal != _seal(key, offset) or offset >= max(len(items), 1):
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor belongs to another query, or what it lists "
                                 "changed since; ask again without it", details={"cursor": cursor[:100]})
    chunk = list(items[offset:offset + limit])
    end = offset + len(chunk)
    if end >= len(items):
        return chunk, None
    return chunk, f"{_seal(key, end)}.{end}"


#: Hex digits of a cursor's seal: as many as the index's snapshot ids (``index/cursors.py``).
_SEAL_HEX = 10
#: Digits an offset may have (a list of test targets is far from 10^9 long); more is not a cursor we issued.
_OFFSET_DIGITS = 9


def _seal(key: str, offset: int) -> str:
    return hashlib.sha256(f"{key}|{offset}".encode()).hexdigest()[:_SEAL_HEX]
