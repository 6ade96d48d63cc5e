"""OTLP export of finished traces (spec §13.4 programmatic access), only when ``observability.otlp_endpoint``
is set: without it this module is never imported and nothing leaves the machine (§13.6).

Traces are recorded by CodePlane's own small span model (``core/tracing.py``: cheap on every call, no SDK
on the hot path). A finished trace is converted to OpenTelemetry SDK ``ReadableSpan`` objects with the
same ids and timestamps and handed to a ``BatchSpanProcessor``, which exports them from its own thread;
a slow or absent collector costs the call path nothing but a queue append (the queue drops when full).

The SDK reports a failed export only through Python ``logging`` (the ``cpl up`` console), so the exporter is
wrapped (:class:`_Watched`): failures are counted for ``/status``'s ``observability`` section and the dashboard,
and the log file gets one line when exporting starts failing (with the SDK's reason) and one when it recovers,
not one per batch.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from codeplane import __version__
from codeplane.core.clock import iso_utc, now_ms
from codeplane.core.logging import get_logger
from codeplane.core.redaction import redact_url, redact_urls
from codeplane.core.tracing import Span

if TYPE_CHECKING:
    from codeplane.server.observability.traces import Operation

_SCOPE = InstrumentationScope("codeplane", __version__)
#: Span ids are unique per process (a counter); the pid in the high bits keeps two servers' apart.
_PID_BITS = (os.getpid() & 0xFFFFFF) << 40
#: Where the OTLP exporters log why an export failed (a refused connection, an HTTP status).
_SDK_LOGGER = "opentelemetry.exporter"
#: A reason longer than this is cut (the SDK's can quote a whole urllib3 exception chain).
MAX_REASON = 300
log = get_logger(__name__)


class _Reasons(logging.Handler):
    """The SDK's warnings and errors logged by one thread (the processor's worker) during one export."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.thread = threading.get_ident()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.messages.append(record.getMessage())


class _Watched(SpanExporter):
    """``inner`` with its outcomes counted, and failing/recovered told to the log once each."""

    def __init__(self, inner: SpanExporter, endpoint: str) -> None:
        self._inner = inner
        self._endpoint = redact_url(endpoint)
        self._lock = threading.Lock()
        self.exported_spans = 0
        self.failed_batches = 0
        self.failed_spans = 0
        self.last_error: str | None = None
        self.last_error_ms: int | None = None
        self.failing = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        reasons = _Reasons()
        sdk_log = logging.getLogger(_SDK_LOGGER)
        sdk_log.addHandler(reasons)
        try:
            result = self._inner.export(spans)
        except Exception as exc:  # noqa: BLE001 - an exporter bug must not kill the processor's worker
            reasons.messages.append(f"{type(exc).__name__}: {exc}")
            result = SpanExportResult.FAILURE
        finally:
            sdk_log.removeHandler(reasons)
        # The first message is the cause (a refused connection, an HTTP status); the last only says "gave up".
        self._note(len(spans), result is SpanExportResult.SUCCESS, reasons.messages[0] if reasons.messages else None)
        return result

    def _note(self, count: int, ok: bool, reason: str | None) -> None:
        with self._lock:
            was_failing = self.failing
            self.failing = not ok
            if ok:
                self.exported_spans += count
            else:
                self.failed_batches += 1
                self.failed_spans += count
                self.last_error = redact_urls(reason or "the exporter reported a failure")[:MAX_REASON]
                self.last_error_ms = now_ms()
            failed_batches, last_error = self.failed_batches, self.last_error
        if not ok and not was_failing:
            log.warning("OTLP export failing", endpoint=self._endpoint, error=last_error, spans_lost=count)
        elif ok and was_failing:
            log.info("OTLP export recovered", endpoint=self._endpoint, failed_batches=failed_batches)

    def status(self) -> dict[str, Any]:
        with self._lock:
            out: dict[str, Any] = {"endpoint": self._endpoint, "exported_spans": self.exported_spans,
                                   "failed_batches": self.failed_batches, "failed_spans": self.failed_spans}
            if self.failing:
                out["failing"] = True
            if self.last_error is not None:
                out.update(last_error=self.last_error, last_error_at=iso_utc(self.last_error_ms))
            return out

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


def _span_id(span_id: int) -> int:
    return (_PID_BITS | span_id) & 0xFFFF_FFFF_FFFF_FFFF


class OtlpExport:
    """Converts operations to OTel spans and batches them to ``exporter`` (OTLP/HTTP in the server)."""

    def __init__(self, exporter: SpanExporter, *, repo: str, repo_id: str, schedule_delay_ms: int = 1000,
                 endpoint: str = "") -> None:
        self._watched = _Watched(exporter, endpoint)
        self._processor = BatchSpanProcessor(self._watched, schedule_delay_millis=schedule_delay_ms)
        self._resource = Resource.create({"service.name": "codeplane", "service.version": __version__,
                                          "codeplane.repo": repo, "codeplane.repo_id": repo_id})

    @classmethod
    def http(cls, endpoint: str, headers: Mapping[str, str], *, repo: str, repo_id: str) -> OtlpExport:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        # A short timeout: a collector that is down must not hold spans (or the server's stop) for long.
        return cls(OTLPSpanExporter(endpoint=endpoint, headers=dict(headers), timeout=2), repo=repo,
                   repo_id=repo_id, endpoint=endpoint)

    def status(self) -> dict[str, Any]:
        """Spans exported, batches and spans lost, and the last failure (``/status``'s ``observability.otlp``)."""
        return self._watched.status()

    @property
    def failing(self) -> str | None:
        """The last failure's reason while the last export failed, else ``None``."""
        return self._watched.last_error if self._watched.failing else None

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
