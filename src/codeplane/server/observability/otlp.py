"""OTLP export of finished traces (spec §13.4 programmatic access), only when ``observability.otlp_endpoint``
is set: without it this module is never imported and nothing leaves the machine (§13.6).

Traces are recorded by CodePlane's own small span model (``core/tracing.py``: cheap on every call, no SDK
on the hot path). A finished trace is converted to OpenTelemetry SDK ``ReadableSpan`` objects with the
same ids and timestamps and handed to a ``BatchSpanProcessor``, which exports them from its own thread;
a slow or absent collector costs the call path nothing but a queue append (the queue drops when full).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from codeplane import __version__
from codeplane.core.tracing import Span

if TYPE_CHECKING:
    from codeplane.server.observability.traces import Operation

_SCOPE = InstrumentationScope("codeplane", __version__)
#: Span ids are unique per process (a counter); the pid in the high bits keeps two servers' apart.
_PID_BITS = (os.getpid() & 0xFFFFFF) << 40


def _span_id(span_id: int) -> int:
    return (_PID_BITS | span_id) & 0xFFFF_FFFF_FFFF_FFFF


class OtlpExport:
    """Converts operations to OTel spans and batches them to ``exporter`` (OTLP/HTTP in the server)."""

    def __init__(self, exporter: SpanExporter, *, repo: str, repo_id: str, schedule_delay_ms: int = 1000) -> None:
        self._processor = BatchSpanProcessor(exporter, schedule_delay_millis=schedule_delay_ms)
        self._resource = Resource.create({"service.name": "codeplane", "service.version": __version__,
                                          "codeplane.repo": repo, "codeplane.repo_id": repo_id})

    @classmethod
    def http(cls, endpoint: str, headers: Mapping[str, str], *, repo: str, repo_id: str) -> OtlpExport:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        # A short timeout: a collector that is down must not hold spans (or the server's stop) for long.
        return cls(OTLPSpanExporter(endpoint=endpoint, headers=dict(headers), timeout=2), repo=repo,
                   repo_id=repo_id)

    def submit(self, op: Operation) -> None:
        trace = op.trace
        if trace is None:
            return
        trace_id = int(trace.trace_id, 16)
        contexts = {s.span_id: SpanContext(trace_id, _span_id(s.span_id), is_remote=False,
                                           trace_flags=TraceFlags(TraceFlags.SAMPLED)) for s in trace.spans}
        for span in trace.spans:
            self._processor.on_end(self._readable(span, contexts, op))

    def _readable(self, span: Span, contexts: dict[int, SpanContext], op: Operation) -> ReadableSpan:
        attrs: dict[str, str | int | float | bool] = {f"codeplane.{k}": v for k, v in span.attrs.items()}
        root = span.parent_id is None
        if root:
            attrs.update({"codeplane.tool": op.tool, "codeplane.outcome": op.outcome, "codeplane.kind": op.kind,
                          "codeplane.request_id": op.request_id, "codeplane.session_id": op.session_id})
            if op.task_id:
                attrs["codeplane.task_id"] = op.task_id
            if op.error_code is not None:
                attrs["codeplane.error_code"] = op.error_code
            if op.files:
                attrs["codeplane.files"] = ",".join(op.files)
        failed = span.error is not None or (root and op.outcome != "ok")
        status = Status(StatusCode.ERROR, span.error or op.error_name or op.outcome) if failed else Status(
            StatusCode.OK)
        return ReadableSpan(
            name=span.name, context=contexts[span.span_id],
            parent=contexts.get(span.parent_id) if span.parent_id is not None else None,
            resource=self._resource, attributes=attrs, kind=SpanKind.SERVER if root else SpanKind.INTERNAL,
            status=status, start_time=span.start_ns, end_time=span.end_ns or span.start_ns,
            instrumentation_scope=_SCOPE)

    def flush(self, timeout_ms: int = 5000) -> bool:
        return self._processor.force_flush(timeout_ms)

    def shutdown(self, wait_s: float = 2.0) -> None:
        """Export what is queued, waiting at most ``wait_s`` (traces are ephemeral: an unreachable collector
        loses the last batch rather than delaying the server's stop)."""
        worker = threading.Thread(target=self._processor.shutdown, name="cpl-otlp-shutdown", daemon=True)
        worker.start()
        worker.join(wait_s)
