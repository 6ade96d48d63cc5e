"""In-process call counters for ``/metrics`` (Prometheus text) and ``/dashboard`` (spec §13.4)."""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass

from codeplane.core.calls import CallInfo, CallNotes, CallOutcome, TaskMeta


@dataclass
class _ToolStats:
    calls: int = 0
    errors: int = 0
    total_ms: float = 0.0


class CallMetrics:
    """A :class:`~codeplane.core.calls.CallObserver` that only counts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tools: dict[str, _ToolStats] = defaultdict(_ToolStats)

    def before_call(self, info: CallInfo) -> None:
        return None

    def after_call(self, outcome: CallOutcome) -> CallNotes | None:
        with self._lock:
            stats = self._tools[outcome.info.tool]
            stats.calls += 1
            stats.errors += 0 if outcome.ok else 1
            stats.total_ms += outcome.duration_ms
        return None

    def task_meta(self, session_id: str) -> TaskMeta | None:
        return None

    def snapshot(self) -> dict[str, dict[str, float]]:
        with self._lock:
            return {name: {"calls": s.calls, "errors": s.errors, "total_ms": round(s.total_ms, 3)}
                    for name, s in sorted(self._tools.items())}

    def prometheus(self) -> str:
        lines = [
            "# HELP codeplane_tool_calls_total Tool calls by tool and outcome.",
            "# TYPE codeplane_tool_calls_total counter",
        ]
        snap = self.snapshot()
        for name, s in snap.items():
            lines.append(f'codeplane_tool_calls_total{{tool="{name}",outcome="ok"}} {int(s["calls"] - s["errors"])}')
            lines.append(f'codeplane_tool_calls_total{{tool="{name}",outcome="error"}} {int(s["errors"])}')
        lines += ["# HELP codeplane_tool_duration_ms_sum Total handler time per tool.",
                  "# TYPE codeplane_tool_duration_ms_sum counter"]
        for name, s in snap.items():
            lines.append(f'codeplane_tool_duration_ms_sum{{tool="{name}"}} {s["total_ms"]}')
        return "\n".join(lines) + "\n"
