"""The one clock. Wall time for records, monotonic time for durations."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def monotonic() -> float:
    return time.monotonic()


def iso_utc(ms: int | None = None) -> str:
    """ISO 8601 with milliseconds and a Z suffix."""
    value = now_ms() if ms is None else ms
    stamp = datetime.fromtimestamp(value / 1000, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value % 1000:03d}Z"
