"""Snapshot pagination for semantic diffs (§23.6): the first page stores the whole report, later pages
read the same report, so a write between pages never shifts, repeats or drops an item.

Cursors are opaque (``base64({"s": id, "o": offset})``), bound to the query that made them, expire after an
hour; at most ``MAX_REPORTS`` reports are kept (least recently used go first).
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from codeplane.analysis.models import DiffReport
from codeplane.core.errors import CodePlaneError, ErrorCode

TTL_SEC = 3600.0
MAX_REPORTS = 16


@dataclass(frozen=True)
class _Stored:
    report: DiffReport
    query_key: str
    created: float


def encode(snapshot_id: str, offset: int) -> str:
    raw = json.dumps({"s": snapshot_id, "o": offset}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(cursor: str) -> tuple[str, int]:
    try:
        data = json.loads(base64.urlsafe_b64decode((cursor + "=" * (-len(cursor) % 4)).encode()))
        return str(data["s"]), int(data["o"])
    except (ValueError, KeyError, TypeError) as exc:
        raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor is malformed",
                             details={"cursor": cursor[:100]}) from exc


class ReportStore:
    def __init__(self, max_reports: int = MAX_REPORTS, ttl_sec: float = TTL_SEC) -> None:
        self._max = max_reports
        self._ttl = ttl_sec
        self._items: OrderedDict[str, _Stored] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, report: DiffReport, query_key: str) -> str:
        snapshot_id = secrets.token_hex(8)
        with self._lock:
            self._items[snapshot_id] = _Stored(report, query_key, time.monotonic())
            while len(self._items) > self._max:
                self._items.popitem(last=False)
        return snapshot_id

    def get(self, cursor: str, query_key: str) -> tuple[str, DiffReport, int]:
        """(snapshot id, report, offset) of ``cursor``; 1005 if unknown, expired or from another query."""
        snapshot_id, offset = decode(cursor)
        with self._lock:
            stored = self._items.get(snapshot_id)
            if stored is not None and time.monotonic() - stored.created > self._ttl:
                del self._items[snapshot_id]
                stored = None
            if stored is not None:
                self._items.move_to_end(snapshot_id)
        if stored is None:
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor expired or is unknown; run the diff again",
                                 details={"cursor": cursor[:100]})
        if stored.query_key != query_key:
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor belongs to a different semantic_diff query",
                                 details={"cursor": cursor[:100]})
        total = len(stored.report.changes) + len(stored.report.files)
        if not 0 <= offset <= total:
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "the cursor offset is out of range",
                                 details={"cursor": cursor[:100]})
        return snapshot_id, stored.report, offset
