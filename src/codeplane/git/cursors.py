"""Opaque pagination cursors (§23.6) for ``git_log``, blame and file history.

A cursor is a short id of a server-side entry holding the resolved start of the walk (so later commits do
not shift pages: snapshot isolation), the position, a fingerprint of the query and the time it was issued.
The id is the first :data:`CURSOR_HEX` hex digits of the SHA-256 of that entry, so the same page of the same
query always gets the same cursor (deterministic), and a cursor answers only if this process issued it: an
id edited by hand, one from another server process, from another query, older than an hour or evicted is
refused with 1005. The table holds at most :data:`MAX_CURSORS` entries, the least recently used go first.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from codeplane.core.errors import CodePlaneError, ErrorCode

#: §23.6: cursors live for the session or one hour, whichever is shorter.
CURSOR_TTL_S = 3600.0
#: Hex digits of a cursor id (48 bits: an id no one issued is never found by chance).
CURSOR_HEX = 12
#: Entries kept across all queries; each is a few hundred bytes.
MAX_CURSORS = 4096


@dataclass(frozen=True)
class _Entry:
    kind: str
    query: str
    state: dict[str, Any]
    issued: float


_table: OrderedDict[str, _Entry] = OrderedDict()
_lock = threading.Lock()


def query_key(*parts: object) -> str:
    """Stable fingerprint of the parameters a cursor belongs to."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def encode_cursor(kind: str, query: str, state: dict[str, Any]) -> str:
    body = json.dumps({"k": kind, "q": query, "s": state}, separators=(",", ":"), sort_keys=True)
    token = hashlib.sha256(body.encode()).hexdigest()[:CURSOR_HEX]
    with _lock:
        _table[token] = _Entry(kind, query, dict(state), time.monotonic())
        _table.move_to_end(token)
        while len(_table) > MAX_CURSORS:
            _table.popitem(last=False)
    return token


def _invalid(reason: str) -> CodePlaneError:
    return CodePlaneError(ErrorCode.INVALID_CURSOR, f"cursor refused: {reason}; start again without a cursor",
                          details={"reason": reason})


def decode_cursor(token: str, kind: str, query: str) -> dict[str, Any]:
    """The state stored by :func:`encode_cursor`; 1005 unless this process issued it for this kind and
    query less than an hour ago."""
    if len(token) != CURSOR_HEX or any(c not in "0123456789abcdef" for c in token):
        raise _invalid("malformed")
    with _lock:
        entry = _table.get(token)
        if entry is not None:
            _table.move_to_end(token)
    if entry is None:
        raise _invalid("not issued by this server, or evicted")
    if entry.kind != kind:
        raise _invalid(f"issued for {entry.kind}, not {kind}")
    if entry.query != query:
        raise _invalid("issued for different parameters")
    if time.monotonic() - entry.issued > CURSOR_TTL_S:
        raise _invalid("expired")
    return dict(entry.state)
