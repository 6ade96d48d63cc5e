"""Snapshot pagination (spec §23.6): a query's ordered answer is kept and served page by page.

Every page of one cursor chain comes from the same stored list, so concurrent writes never shift,
duplicate or drop a hit between pages. The list is either complete when the chain starts
(:meth:`CursorStore.first_page`) or a :class:`Stream` that produces items in order as pages reach them
(:meth:`CursorStore.open_stream`), so the first page costs only what it shows; a stream keeps the last
:data:`STREAM_WINDOW` items it produced (a cursor further behind answers 1005), so paging through a huge
answer holds a window, not the whole answer. Cursors are opaque, bound to the query that created them,
expire after an hour and are evicted least-recently-used beyond a fixed number of stored items.

A cursor is short because the answer it continues stays on the server: ``<snapshot id>.<offset>``, the id
derived from the query and its epoch (the same query asked again at the same epoch gets the same cursor; the
earlier chain's cursors stay valid), the offset one this snapshot issued a cursor for (an offset edited by
hand is refused: 1005).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from codeplane.core.errors import CodePlaneError, ErrorCode

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

CURSOR_TTL_SEC = 3600.0
#: Upper bound on items kept across all live cursors (memory bound; the oldest cursors go first).
MAX_STORED_ITEMS = 200_000
#: What a stream not at its end counts for besides its items: it holds its candidates, a ranking and the text of
#: the file it stopped in (~0.4 MB each), and counted as its handful of items a server grew by 358 MB over 1,000
#: distinct searches of a small page (the hour's TTL was the only bound). At most ~200 such streams stay live.
STREAM_WEIGHT = 1_000
#: Items a stream keeps behind the newest it produced (more than any page: pages are at most 5,000 items).
STREAM_WINDOW = 20_000


class Stream(Protocol[T_co]):
    """Items produced in order on demand. ``fill(count)`` produces until ``base + len(items) >= count`` (or the end)
    and may drop items from the front, keeping at least :data:`STREAM_WINDOW`; ``base`` is the position of
    ``items[0]`` in the whole answer. ``fill`` is called under ``lock``; ``total`` may be an estimate until
    ``exhausted``. ``changed(start, end)`` (under ``lock``, ``start >= base``) names a source read earlier that
    the items ``start:end`` (or the production resumed to reach ``end``) rest on and that has changed since, so
    the page is refused rather than served from a stale read."""

    @property
    def lock(self) -> threading.Lock: ...
    @property
    def items(self) -> Sequence[T_co]: ...
    @property
    def base(self) -> int: ...
    @property
    def exhausted(self) -> bool: ...
    @property
    def truncated(self) -> bool: ...
    @property
    def total(self) -> int: ...
    def fill(self, count: int) -> None: ...
    def changed(self, start: int, end: int) -> str | None: ...


@dataclass(frozen=True)
class Snapshot(Generic[T]):
    items: Sequence[T]
    total: int
    epoch: int
    query_key: str
    created: float
    truncated: bool = False
    stream: Stream[T] | None = None
    #: Offsets this snapshot handed out a cursor for; only these are accepted back.
    issued: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class Page(Generic[T]):
    items: tuple[T, ...]
    next_cursor: str | None
    total: int
    epoch: int
    truncated: bool = False


#: Hex digits of a snapshot id (40 bits; ids are checked against the live table, never trusted).
_ID_HEX = 10


def _encode(snapshot_id: str, offset: int) -> str:
    return f"{snapshot_id}.{offset}"


def _decode(cursor: str) -> tuple[str, int]:
    snapshot_id, dot, offset = cursor.partition(".")
    if (not dot or len(snapshot_id) != _ID_HEX or any(c not in "0123456789abcdef" for c in snapshot_id)
            or not offset.isdigit() or len(offset) > 12):
        raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor is malformed",
                             details={"cursor": cursor[:100]})
    return snapshot_id, int(offset)


class CursorStore(Generic[T]):
    """Thread-safe store of query snapshots keyed by opaque cursor ids."""

    def __init__(self, *, ttl_sec: float = CURSOR_TTL_SEC, max_items: int = MAX_STORED_ITEMS) -> None:
        self._ttl = ttl_sec
        self._max_items = max_items
        #: Least recently used first (eviction order).
        self._snapshots: OrderedDict[str, Snapshot[T]] = OrderedDict()
        #: Oldest first (expiry order), by id and creation time only: an evicted snapshot's items must not stay
        #: reachable from here. An entry whose snapshot was evicted meanwhile is skipped.
        self._created: deque[tuple[float, str]] = deque()
        #: Items each snapshot counted for when last seen (a stream's grows as it is paged), and their sum:
        #: a call costs the snapshots it touches, not every snapshot an hour of queries left.
        self._counted: dict[str, int] = {}
        self._stored = 0
        self._lock = threading.Lock()

    def _store(self, snapshot: Snapshot[T], offset: int) -> str:
        """Keeps ``snapshot`` under a fresh id and returns the cursor of its page at ``offset``."""
        with self._lock:
            for attempt in itertools.count():
                seed = f"{snapshot.query_key}|{snapshot.epoch}" + (f"|{attempt}" if attempt else "")
                snapshot_id = hashlib.sha256(seed.encode()).hexdigest()[:_ID_HEX]
                same = self._snapshots.get(snapshot_id)
                if same is None:
                    break
                if same.query_key == snapshot.query_key and same.epoch == snapshot.epoch:
                    # The same query at the same epoch has the same answer: the new snapshot takes the id over,
                    # and the cursors the earlier chain holds stay valid on it.
                    snapshot.issued.update(same.issued)
                    break
            snapshot.issued.add(offset)
            self._snapshots[snapshot_id] = snapshot
            self._snapshots.move_to_end(snapshot_id)
            self._created.append((snapshot.created, snapshot_id))
            self._recount(snapshot_id, snapshot)
            self._evict()
        return _encode(snapshot_id, offset)

    def first_page(self, items: Sequence[T], *, total: int, epoch: int, query_key: str, limit: int,
                   truncated: bool = False) -> Page[T]:
        """Page 1 of a fresh answer; stores the rest only if there is a next page."""
        frozen = tuple(items)
        if len(frozen) <= limit:
            return Page(frozen, None, total, epoch, truncated)
        cursor = self._store(Snapshot(frozen, total, epoch, query_key, time.monotonic(), truncated), limit)
        return Page(frozen[:limit], cursor, total, epoch, truncated)

    def open_stream(self, stream: Stream[T], *, epoch: int, query_key: str, limit: int) -> Page[T]:
        """Page 1 of a streamed answer: produces ``limit`` items plus one (is there a next page?); the stream is
        stored only if there is."""
        with stream.lock:
            stream.fill(limit + 1)
            items = tuple(stream.items[:limit])  # base is still 0: the window is wider than any page
            more = len(stream.items) > limit
            total, truncated = stream.total, stream.truncated
        if not more:
            return Page(items, None, total, epoch, truncated)
        cursor = self._store(Snapshot(stream.items, total, epoch, query_key, time.monotonic(), truncated, stream),
                             limit)
        return Page(items, cursor, total, epoch, truncated)

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
        if offset not in snapshot.issued:
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor was not issued by this query; use the "
                                 "next_cursor an answer gave", details={"cursor": cursor[:100]})
        end = offset + limit
        stream = snapshot.stream
        if stream is None:
            items, base, total, truncated = snapshot.items, 0, snapshot.total, snapshot.truncated
            page = tuple(items[offset:end])
        else:
            with stream.lock:
                stale = stream.changed(offset, end) if offset >= stream.base else None
                if stale is not None:
                    raise CodePlaneError(ErrorCode.INVALID_CURSOR, f"{stale!r} changed since the cursor was issued "
                                         "(its hits would carry the old line numbers); search again without a "
                                         "cursor", details={"cursor": cursor[:100], "path": stale})
                if offset >= stream.base:
                    stream.fill(end + 1)
                items, base, total, truncated = stream.items, stream.base, stream.total, stream.truncated
                page = tuple(items[offset - base:end - base]) if offset >= base else ()
            with self._lock:
                if self._snapshots.get(snapshot_id) is snapshot:
                    self._recount(snapshot_id, snapshot)
                self._evict()
            if offset < base:
                raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor is too far behind the newest page of "
                                     "its query; run the query again", details={"cursor": cursor[:100]})
        if offset < 0 or offset > base + len(items):
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor offset is out of range",
                                 details={"cursor": cursor[:100]})
        following = None
        if end < base + len(items):
            with self._lock:
                snapshot.issued.add(end)
            following = _encode(snapshot_id, end)
        elif stream is not None and stream.exhausted:
            return Page(page, None, total, snapshot.epoch, truncated)
        # A stream's running estimate depends on how far any chain has read it (two clients paging one query got
        # ~51, ~53 or ~54 on the same page): a page before the last repeats the first page's estimate, so the same
        # cursor answers the same bytes, and the last page says the exact count.
        return Page(page, following, snapshot.total, snapshot.epoch, truncated)

    def _recount(self, snapshot_id: str, snapshot: Snapshot[T]) -> None:
        stream = snapshot.stream
        size = len(snapshot.items) + (STREAM_WEIGHT if stream is not None and not stream.exhausted else 0)
        self._stored += size - self._counted.get(snapshot_id, 0)
        self._counted[snapshot_id] = size

    def _drop(self, snapshot_id: str) -> None:
        del self._snapshots[snapshot_id]
        self._stored -= self._counted.pop(snapshot_id)

    def _expire(self) -> None:
        cutoff = time.monotonic() - self._ttl
        created = self._created
        while created and created[0][0] < cutoff:
            stamp, snapshot_id = created.popleft()
            if self._live(stamp, snapshot_id):
                self._drop(snapshot_id)

    def _evict(self) -> None:
        self._expire()
        while self._stored > self._max_items and len(self._snapshots) > 1:
            self._drop(next(iter(self._snapshots)))
        if len(self._created) > 2 * len(self._snapshots) + 64:  # evicted entries waiting to expire
            self._created = deque(entry for entry in self._created if self._live(*entry))

    def _live(self, stamp: float, snapshot_id: str) -> bool:
        snapshot = self._snapshots.get(snapshot_id)
        return snapshot is not None and snapshot.created == stamp
