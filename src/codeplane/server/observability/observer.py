"""The call observer that measures every tool call: metrics, the call window and one trace per call.

It wraps the task tracker (the ledger observer) rather than sitting beside it, for two reasons: the
tracker's admission and its ledger write become spans of the call's trace (``tasks.admit``,
``tasks.record``: the storage step), and the tracker's notes (no-op, non-progress, fingerprints) and task
transitions feed the convergence metrics without the tracker knowing about metrics. The dispatcher still
sees one observer with the tracker's behaviour: the same refusals, the same notes, the same task meta.

The trace of a call: root ``tools/call <tool>`` from the dispatcher's start, ``validate`` (argument
parsing, up to ``before_call``), ``tasks.admit``, ``handler`` (the tool; subsystem spans from
``core.tracing.span`` nest under it, also across ``anyio.to_thread``), ``tasks.record``. A call refused
before ``before_call`` (unknown tool, invalid arguments) has a root and ``validate`` only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from codeplane.core.calls import CallInfo, CallNotes, CallObserver, CallOutcome, TaskMeta
from codeplane.core.logging import get_logger
from codeplane.core.tracing import Span, Trace, activate, deactivate
from codeplane.server.observability.metrics import ServerMetrics
from codeplane.server.observability.traces import Operation, Outcome, TraceRing
from codeplane.server.observability.window import CallWindow

log = get_logger(__name__)
#: Files listed on one operation (the count is always exact).
MAX_FILES = 20


@dataclass
class _Open:
    trace: Trace
    handler: Span | None = None
    refused: bool = False


class CallTelemetry:
    """A :class:`~codeplane.core.calls.CallObserver` wrapping ``inner`` (the task tracker)."""

    def __init__(self, inner: CallObserver, metrics: ServerMetrics, window: CallWindow, ring: TraceRing,
                 export: Callable[[Operation], None] | None = None) -> None:
        self.inner = inner
        self.metrics = metrics
        self.window = window
        self.ring = ring
        self._export = export
        self._open: dict[str, _Open] = {}
        self._lock = threading.Lock()

    def before_call(self, info: CallInfo) -> None:
        trace = Trace.begin(f"tools/call {info.tool}", start_wall_ns=info.started_ms * 1_000_000)
        validate = trace.open("validate", trace.root, {})
        if validate is not None:
            validate.start_ns = trace.root.start_ns
            trace.close(validate)
        state = _Open(trace)
        self._open[info.request_id] = state
        admit = trace.open("tasks.admit", trace.root, {})
        try:
            self.inner.before_call(info)
        except BaseException as exc:
            state.refused = True
            if admit is not None:
                trace.close(admit, error=type(exc).__name__)
            raise
        if admit is not None:
            trace.close(admit)
        state.handler = trace.open("handler", trace.root, {"tool": info.tool})
        if state.handler is not None:
            # The dispatcher awaits the handler in this same context, so its spans nest here.
            activate(trace, state.handler)

    def after_call(self, outcome: CallOutcome) -> CallNotes | None:
        info = outcome.info
        state = self._open.pop(info.request_id, None)
        deactivate()
        if state is None:  # refused before before_call (an unknown tool; invalid arguments are admitted)
            trace = Trace.begin(f"tools/call {info.tool}", start_wall_ns=info.started_ms * 1_000_000)
            validate = trace.open("validate", trace.root, {})
            if validate is not None:
                validate.start_ns = trace.root.start_ns
                trace.close(validate, error=outcome.error_name)
            state = _Open(trace)
        trace = state.trace
        if state.handler is not None:
            trace.close(state.handler, error=None if outcome.ok else outcome.error_name)
        record = trace.open("tasks.record", trace.root, {})
        notes: CallNotes | None = None
        try:
            notes = self.inner.after_call(outcome)
        finally:
            if record is not None:
                trace.close(record)
            meta = self._task_meta(info.session_id)
            self._finish(state, outcome, notes, meta)
        return notes

    def task_meta(self, session_id: str) -> TaskMeta | None:
        return self.inner.task_meta(session_id)

    # -- internals ---------------------------------------------------------------------------------

    def _task_meta(self, session_id: str) -> TaskMeta | None:
        try:
            return self.inner.task_meta(session_id)
        except Exception:  # metrics must never fail a call
            log.exception("task meta for metrics failed")
            return None

    def _finish(self, state: _Open, outcome: CallOutcome, notes: CallNotes | None, meta: TaskMeta | None) -> None:
        info = outcome.info
        kind: Outcome = "ok" if outcome.ok else "refused" if state.refused else "error"
        self.metrics.record_call(tool=info.tool, kind=info.kind, outcome=kind, error_code=outcome.error_code,
                                 seconds=outcome.duration_ms / 1000)
        self.window.add(info.started_ms, info.tool, outcome.duration_ms, outcome.ok)
        if state.refused and notes is not None and notes.limit_triggered:
            # The budget that refused it, as the ledger row says: a call refused because its task closed on the
            # mutations budget is not a test budget running out because the call was a test run.
            self.metrics.budget_exhausted.labels(notes.limit_triggered).inc()
        no_op = bool(notes and notes.no_op)
        non_progress = bool(notes and notes.non_progress)
        if no_op:
            self.metrics.no_op.inc()
        if non_progress:
            self.metrics.non_progress.inc()
        paths = sorted(p for p, _ in outcome.mutation.changed_paths) if outcome.mutation else []
        trace = state.trace
        root = trace.root
        root.set(tool=info.tool, kind=info.kind, outcome=kind, request_id=info.request_id,
                 session_id=info.session_id, task_id=meta.task_id if meta else None,
                 error_code=outcome.error_code, error_name=outcome.error_name,
                 files=",".join(paths[:MAX_FILES]) or None, files_total=len(paths) or None,
                 no_op=no_op or None, non_progress=non_progress or None)
        if not outcome.ok:
            root.error = outcome.error_name
        trace.finish(end_ns=max(root.start_ns + int(outcome.duration_ms * 1e6), trace.now_ns()))
        op = Operation(
            trace_id=trace.trace_id, request_id=info.request_id, tool=info.tool, kind=info.kind,
            session_id=info.session_id, task_id=meta.task_id if meta else None, outcome=kind,
            started_ms=info.started_ms, duration_ms=outcome.duration_ms, error_code=outcome.error_code,
            error_name=outcome.error_name, files=tuple(paths[:MAX_FILES]), files_total=len(paths), no_op=no_op,
            non_progress=non_progress, failure_fingerprint=(notes.failure_fingerprint if notes else None)
            or (outcome.failure.fingerprint if outcome.failure else None), detail=info.op_detail, trace=trace)
        self.ring.add(op)
        if self._export is not None:
            try:
                self._export(op)
            except Exception:  # export is best effort; the call already happened
                log.exception("trace export failed")
