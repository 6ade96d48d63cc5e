"""Snapshot pagination (spec §23.6): a query's full, ordered answer is kept and served page by page.

Every page of one cursor chain comes from the same stored list, so concurrent writes never shift,
duplicate or drop a hit between pages. Cursors are opaque, bound to the query that created them,
expire after an hour and are evicted least-recently-used beyond a fixed number of stored items.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from codeplane.core.errors import CodePlaneError, ErrorCode

T = TypeVar("T")

CURSOR_TTL_SEC = 3600.0
#: Upper bound on items kept across all live cursors (memory bound; the oldest cursors go first).
MAX_STORED_ITEMS = 200_000


@dataclass(frozen=True)
class Snapshot(Generic[T]):
    items: tuple[T, ...]
    total: int
    epoch: int
    query_key: str
    created: float
    truncated: bool = False


@dataclass(frozen=True)
class Page(Generic[T]):
    items: tuple[T, ...]
    next_cursor: str | None
    total: int
    epoch: int
    truncated: bool = False


def _encode(snapshot_id: str, offset: int) -> str:
    raw = json.dumps({"s": snapshot_id, "o": offset}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str) -> tuple[str, int]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        return str(data["s"]), int(data["o"])
    except (ValueError, KeyError, TypeError) as exc:
        raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor is malformed",
                             details={"cursor": cursor[:100]}) from exc


class CursorStore(Generic[T]):
    """Thread-safe store of query snapshots keyed by opaque cursor ids."""

    def __init__(self, *, ttl_sec: float = CURSOR_TTL_SEC, max_items: int = MAX_STORED_ITEMS) -> None:
        self._ttl = ttl_sec
        self._max_items = max_items
        self._snapshots: OrderedDict[str, Snapshot[T]] = OrderedDict()
        self._stored = 0
        self._lock = threading.Lock()

    def first_page(self, items: Sequence[T], *, total: int, epoch: int, query_key: str, limit: int,
                   truncated: bool = False) -> Page[T]:
        """Page 1 of a fresh answer; stores the rest only if there is a next page."""
        frozen = tuple(items)
        if len(frozen) <= limit:
            return Page(frozen, None, total, epoch, truncated)
        snapshot_id = secrets.token_hex(8)
        with self._lock:
            self._snapshots[snapshot_id] = Snapshot(frozen, total, epoch, query_key, time.monotonic(), truncated)
            self._stored += len(frozen)
            self._evict()
        return Page(frozen[:limit], _encode(snapshot_id, limit), total, epoch, truncated)

    def next_page(self, cursor: str, *, query_key: str, limit: int) -> Page[T]:
        """The page a cursor points at. 1005 if it is unknown, expired, or from another query."""
        snapshot_id, offset = _decode(cursor)
        with self._lock:
            self._expire()
            snapshot = self._snapshots.get(snapshot_id)
            if snapshot is not None:
                self._snapshots.move_to_end(snapshot_id)
        if snapshot is None:
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor expired or is unknown; run the query again",
                                 details={"cursor": cursor[:100]})
        if snapshot.query_key != query_key:
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor belongs to a different query",
                                 details={"cursor": cursor[:100]})
        if offset < 0 or offset > len(snapshot.items):
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor offset is out of range",
                                 details={"cursor": cursor[:100]})
        end = offset + limit
        following = _encode(snapshot_id, end) if end < len(snapshot.items) else None
        return Page(snapshot.items[offset:end], following, snapshot.total, snapshot.epoch, snapshot.truncated)

    def _expire(self) -> None:
        cutoff = time.monotonic() - self._ttl
        for key in [k for k, s in self._snapshots.items() if s.created < cutoff]:
            self._stored -= len(self._snapshots.pop(key).items)

    def _evict(self) -> None:
        self._expire()
        while self._stored > self._max_items and len(self._snapshots) > 1:
            _, oldest = self._snapshots.popitem(last=False)
            self._stored -= len(oldest.items)
