"""Finished operations and their span trees, kept in a bounded ring for the dashboard (spec §13.3–13.4).

The ring is memory only and short-term by design (§13.5: the ledger is the durable record). One entry per
tool call: the call's summary (tool, task, outcome, error code, files touched, convergence flags) and its
:class:`~codeplane.core.tracing.Trace`. Queries filter by task, tool, outcome and time, newest first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

from codeplane.core.tracing import Trace

Outcome = Literal["ok", "error", "refused"]
#: Most operations one query returns.
MAX_QUERY_LIMIT = 500


@dataclass(frozen=True)
class Operation:
    """One tool call as the dashboard lists it."""

    trace_id: str
    request_id: str
    tool: str
    kind: str
    session_id: str
    task_id: str | None
    outcome: Outcome
    started_ms: int
    duration_ms: float
    error_code: int | None = None
    error_name: str | None = None
    #: Repository paths the call changed (a mutation's report), sorted, at most ``MAX_FILES``.
    files: tuple[str, ...] = ()
    files_total: int = 0
    no_op: bool = False
    non_progress: bool = False
    failure_fingerprint: str | None = None
    detail: str = ""
    trace: Trace | None = field(default=None, compare=False, repr=False)

    def summary(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id, "request_id": self.request_id, "tool": self.tool, "kind": self.kind,
            "session_id": self.session_id, "task_id": self.task_id, "outcome": self.outcome,
            "started_ms": self.started_ms, "duration_ms": round(self.duration_ms, 3),
            "error_code": self.error_code, "error_name": self.error_name, "files": list(self.files),
            "files_total": self.files_total, "no_op": self.no_op, "non_progress": self.non_progress,
            "failure_fingerprint": self.failure_fingerprint, "detail": self.detail,
        }

    def with_spans(self) -> dict[str, Any]:
        """The summary plus the span breakdown: each span's offset from the root, duration and depth."""
        out = self.summary()
        trace = self.trace
        if trace is None:
            return {**out, "spans": [], "dropped_spans": 0}
        origin = trace.root.start_ns
        depth: dict[int, int] = {}
        spans = []
        for span in trace.spans:
            level = 0 if span.parent_id is None else depth.get(span.parent_id, 0) + 1
            depth[span.span_id] = level
            spans.append({"span_id": span.span_id, "parent_id": span.parent_id, "name": span.name, "depth": level,
                          "offset_ms": round((span.start_ns - origin) / 1e6, 3),
                          "duration_ms": round(span.duration_ms, 3), "error": span.error, "attrs": span.attrs})
        return {**out, "spans": spans, "dropped_spans": trace.dropped_spans}


@dataclass(frozen=True)
class OperationFilter:
    task_id: str | None = None
    tool: str | None = None
    outcome: Outcome | None = None
    since_ms: int | None = None
    until_ms: int | None = None

    def matches(self, op: Operation) -> bool:
        return ((self.task_id is None or op.task_id == self.task_id)
                and (self.tool is None or op.tool == self.tool)
                and (self.outcome is None or op.outcome == self.outcome)
                and (self.since_ms is None or op.started_ms >= self.since_ms)
                and (self.until_ms is None or op.started_ms <= self.until_ms))


class TraceRing:
    """The last ``size`` operations, by trace id; the oldest falls out when a new one arrives."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._ops: OrderedDict[str, Operation] = OrderedDict()
        self._lock = threading.Lock()
        self.dropped = 0

    def add(self, op: Operation) -> None:
        with self._lock:
            self._ops[op.trace_id] = op
            while len(self._ops) > self.size:
                self._ops.popitem(last=False)
                self.dropped += 1

    def get(self, trace_id: str) -> Operation | None:
        with self._lock:
            return self._ops.get(trace_id)

    def __len__(self) -> int:
        return len(self._ops)

    def query(self, where: OperationFilter, limit: int = 100) -> tuple[list[Operation], int]:
        """Matching operations newest first (at most ``limit``), and how many matched in all."""
        limit = max(1, min(limit, MAX_QUERY_LIMIT))
        with self._lock:
            ops = list(self._ops.values())
        matched = [op for op in reversed(ops) if where.matches(op)]
        return matched[:limit], len(matched)

    def tools_and_tasks(self) -> tuple[list[str], list[str]]:
        """Distinct tools and task ids in the ring (the dashboard's filter choices), sorted."""
        with self._lock:
            ops = list(self._ops.values())
        return sorted({op.tool for op in ops}), sorted({op.task_id for op in ops if op.task_id})
