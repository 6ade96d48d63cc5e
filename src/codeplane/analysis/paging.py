"""Snapshot pagination for semantic diffs (§23.6): the first page stores the whole report, later pages
read the same report, so a write between pages never shifts, repeats or drops an item.

A cursor is short because the report it continues stays on the server: ``<snapshot id>.<offset>``, like the
index's search cursors (``index/cursors.py``). The id is derived from the query and the report's content (not
from a counter: the same diff of the same state answers the same bytes, on every call and after a restart); only
offsets this snapshot issued a cursor for are accepted. Cursors are bound to the query that made them and
expire after an hour; at most ``MAX_REPORTS`` reports are kept (least recently used go first). Anything else —
edited, foreign, expired, evicted — is 1005.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from codeplane.analysis.models import DiffReport
from codeplane.core.errors import CodePlaneError, ErrorCode

TTL_SEC = 3600.0
MAX_REPORTS = 16
#: Hex digits of a snapshot id (40 bits; ids are looked up in the live table, never trusted).
_ID_HEX = 10


@dataclass(frozen=True)
class _Stored:
    report: DiffReport
    query_key: str
    created: float
    #: Offsets a cursor was issued for; only these are accepted back.
    issued: set[int] = field(default_factory=set)


def _refused(cursor: str, why: str) -> CodePlaneError:
    return CodePlaneError(ErrorCode.INVALID_CURSOR, f"the cursor {why}", details={"cursor": cursor[:100]})


def decode(cursor: str) -> tuple[str, int]:
    snapshot_id, dot, offset = cursor.partition(".")
    if (not dot or len(snapshot_id) != _ID_HEX or any(c not in "0123456789abcdef" for c in snapshot_id)
            or not offset.isdigit() or len(offset) > 12):
        raise _refused(cursor, "is malformed")
    return snapshot_id, int(offset)


class ReportStore:
    def __init__(self, max_reports: int = MAX_REPORTS, ttl_sec: float = TTL_SEC) -> None:
        self._max = max_reports
        self._ttl = ttl_sec
        self._items: OrderedDict[str, _Stored] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, report: DiffReport, query_key: str) -> str:
        """Stores ``report`` under its snapshot id (derived from the query and the report's content). A report
        already kept under that id has the same content: it stays, with the cursors it issued, as if new."""
        snapshot_id = hashlib.sha256(f"{query_key}|{_content(report)}".encode()).hexdigest()[:_ID_HEX]
        with self._lock:
            kept = self._items.pop(snapshot_id, None)
            issued = kept.issued if kept is not None and kept.query_key == query_key else set()
            self._items[snapshot_id] = _Stored(report, query_key, time.monotonic(), issued)
            while len(self._items) > self._max:
                self._items.popitem(last=False)
        return snapshot_id

    def cursor(self, snapshot_id: str, offset: int) -> str:
        """The cursor of the page of a kept report that starts at ``offset`` (recorded as issued)."""
        with self._lock:
            stored = self._items.get(snapshot_id)
            if stored is not None:
                stored.issued.add(offset)
        return f"{snapshot_id}.{offset}"

    def get(self, cursor: str, query_key: str) -> tuple[str, DiffReport, int]:
        """(snapshot id, report, offset) of ``cursor``; 1005 if unknown, expired, not issued or from another
        query."""
        snapshot_id, offset = decode(cursor)
        with self._lock:
            stored = self._items.get(snapshot_id)
            if stored is not None and time.monotonic() - stored.created > self._ttl:
                del self._items[snapshot_id]
                stored = None
            if stored is not None:
                self._items.move_to_end(snapshot_id)
        if stored is None:
            raise _refused(cursor, "expired or is unknown; run the diff again")
        if stored.query_key != query_key:
            raise _refused(cursor, "belongs to a different semantic_diff query")
        if offset not in stored.issued:
            raise _refused(cursor, "was not issued by this query; use the next_cursor an answer gave")
        return snapshot_id, stored.report, offset


def _content(report: DiffReport) -> str:
    """What a report says, less what pages fill in as they are shown (each change's affected tests, its
    ``impact``): equal for two builds of one state, whichever pages of either were shown."""
    changes = [(c.path, c.kind, c.name, c.qualified_name, c.change, c.old, c.new, c.old_path, c.lines_changed,
                c.delta_tags, c.preview, c.structural_severity, c.behavior_change_risk, c.parent)
               for c in report.changes]
    return repr((report.base, report.target, report.mode, report.files_analyzed, changes, report.files,
                 report.notes, report.affected_tests))
