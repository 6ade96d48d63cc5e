"""Opaque pagination cursors (§23.6) for ``git_log``, blame and file history.

A cursor carries the resolved start of the walk (so later commits do not shift pages: snapshot
isolation), the position, a fingerprint of the query, its creation time, and an HMAC with a per-process
key. A cursor from another query, another server process, older than an hour, or edited by hand is
refused with 1005.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import Any

from codeplane.core.errors import CodePlaneError, ErrorCode

#: §23.6: cursors live for the session or one hour, whichever is shorter.
CURSOR_TTL_S = 3600.0
_KEY = secrets.token_bytes(32)


def query_key(*parts: object) -> str:
    """Stable fingerprint of the parameters a cursor belongs to."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def encode_cursor(kind: str, query: str, state: dict[str, Any]) -> str:
    body = json.dumps({"k": kind, "q": query, "t": int(time.time()), "s": state},
                      separators=(",", ":"), sort_keys=True).encode()
    mac = hmac.new(_KEY, body, hashlib.sha256).digest()[:12]
    return base64.urlsafe_b64encode(mac + body).decode().rstrip("=")


def _invalid(reason: str) -> CodePlaneError:
    return CodePlaneError(ErrorCode.INVALID_CURSOR, f"cursor refused: {reason}; start again without a cursor",
                          details={"reason": reason})


def decode_cursor(token: str, kind: str, query: str) -> dict[str, Any]:
    """The state stored by :func:`encode_cursor`; 1005 unless kind, query, age and signature check out."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (ValueError, TypeError) as exc:
        raise _invalid("malformed") from exc
    mac, body = raw[:12], raw[12:]
    if not hmac.compare_digest(mac, hmac.new(_KEY, body, hashlib.sha256).digest()[:12]):
        raise _invalid("not issued by this server")
    data = json.loads(body)
    if data.get("k") != kind:
        raise _invalid(f"issued for {data.get('k')}, not {kind}")
    if data.get("q") != query:
        raise _invalid("issued for different parameters")
    if time.time() - float(data.get("t", 0)) > CURSOR_TTL_S:
        raise _invalid("expired")
    state = data.get("s")
    if not isinstance(state, dict):
        raise _invalid("malformed")
    return state
