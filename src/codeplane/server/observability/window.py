"""The live call window: rates and latency percentiles per tool over the last minutes (the dashboard chart).

Prometheus histograms answer fleet questions with buckets; an operator looking at one server wants exact
recent percentiles and a per-interval call count. Each call appends one tuple to a bounded deque; the
summary is computed only when someone asks (the dashboard polls every couple of seconds).
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

from codeplane.core.clock import now_ms

#: Calls remembered (at 100 calls/s that is over eight minutes).
MAX_CALLS = 50_000


@dataclass(frozen=True)
class _Call:
    at_ms: int
    tool: str
    duration_ms: float
    ok: bool


def percentile(sorted_values: list[float], share: float) -> float:
    """Nearest-rank percentile of an ascending list (0 for an empty one)."""
    if not sorted_values:
        return 0.0
    rank = max(0, min(len(sorted_values) - 1, round(share * (len(sorted_values) - 1))))
    return sorted_values[rank]


class CallWindow:
    def __init__(self) -> None:
        self._calls: deque[_Call] = deque(maxlen=MAX_CALLS)
        self._lock = threading.Lock()

    def add(self, at_ms: int, tool: str, duration_ms: float, ok: bool) -> None:
        self._calls.append(_Call(at_ms, tool, duration_ms, ok))  # deque.append is atomic

    def summary(self, *, window_s: int = 300, bucket_s: int = 10, now: int | None = None) -> dict[str, Any]:
        """Per tool and overall: calls, errors, calls per minute, p50/p95/p99 ms, and calls per bucket."""
        end = now_ms() if now is None else now
        start = end - window_s * 1000
        buckets = window_s // bucket_s
        with self._lock:
            calls = [c for c in list(self._calls) if c.at_ms > start]
        per_tool: dict[str, list[_Call]] = {}
        for call in calls:
            per_tool.setdefault(call.tool, []).append(call)

        def stats(items: list[_Call]) -> dict[str, Any]:
            times = sorted(c.duration_ms for c in items)
            series = [0] * buckets
            errors = [0] * buckets
            for c in items:
                index = min(buckets - 1, max(0, (c.at_ms - start) // (bucket_s * 1000)))
                series[index] += 1
                errors[index] += 0 if c.ok else 1
            return {"calls": len(items), "errors": sum(errors),
                    "per_min": round(len(items) * 60 / window_s, 2),
                    "p50_ms": round(percentile(times, 0.50), 3), "p95_ms": round(percentile(times, 0.95), 3),
                    "p99_ms": round(percentile(times, 0.99), 3), "max_ms": round(times[-1], 3) if times else 0.0,
                    "series": series, "error_series": errors}

        return {"window_s": window_s, "bucket_s": bucket_s, "end_ms": end, "all": stats(calls),
                "tools": {tool: stats(items) for tool, items in sorted(per_tool.items())}}
