"""The tracing seam (core/tracing.py) and the OTLP conversion, in process: a span is free without a trace,
nests within one (also in worker threads that copy the context), and exports with the SDK's in-memory
exporter keeping ids, parents and timings."""

from __future__ import annotations

import asyncio
import threading

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from codeplane.core.tracing import MAX_SPANS, Trace, activate, current_span, deactivate, span
from codeplane.server.observability.otlp import OtlpExport
from codeplane.server.observability.traces import Operation, OperationFilter, TraceRing


def test_span_without_a_trace_is_a_shared_no_op() -> None:
    first, second = span("a"), span("b", x=1)
    assert first is second
    with first as nothing:
        assert nothing is None and current_span() is None


def test_spans_nest_and_follow_the_call_into_worker_threads() -> None:
    trace = Trace.begin("tools/call x")
    handler = trace.open("handler", trace.root, {})
    assert handler is not None

    def in_thread() -> None:
        with span("git.read"):
            pass

    async def call() -> None:
        activate(trace, handler)
        try:
            with span("index.search", epoch=1) as step:
                assert step is not None and current_span() is step
                step.set(hits=3, skipped=None)
                await asyncio.to_thread(in_thread)
        finally:
            deactivate()

    asyncio.run(call())
    # A thread that does not copy the context sees no trace (nothing leaks between calls).
    seen: list[object] = []
    thread = threading.Thread(target=lambda: seen.append(current_span()))
    thread.start()
    thread.join()
    assert seen == [None]
    trace.finish()
    names = {s.name: s for s in trace.spans}
    assert names["index.search"].parent_id == handler.span_id
    assert names["git.read"].parent_id == names["index.search"].span_id
    assert names["index.search"].attrs == {"epoch": 1, "hits": 3}
    assert all(s.end_ns is not None and s.end_ns >= s.start_ns for s in trace.spans)


def test_a_span_that_raises_records_the_error_and_a_finished_trace_takes_no_more_spans() -> None:
    trace = Trace.begin("root")
    activate(trace, trace.root)
    try:
        try:
            with span("mutation.commit"):
                raise ValueError("disk full")
        except ValueError:
            pass
        trace.finish()
        with span("late") as late:
            assert late is None
    finally:
        deactivate()
    assert [s.name for s in trace.spans] == ["root", "mutation.commit"]
    assert trace.spans[1].error == "ValueError"


def test_a_trace_keeps_a_bounded_number_of_spans() -> None:
    trace = Trace.begin("root")
    activate(trace, trace.root)
    try:
        for _ in range(MAX_SPANS + 10):
            with span("step"):
                pass
    finally:
        deactivate()
    assert len(trace.spans) == MAX_SPANS and trace.dropped_spans == 11


def _operation(trace: Trace, **fields: object) -> Operation:
    base: dict[str, object] = dict(trace_id=trace.trace_id, request_id="req_1", tool="search", kind="read",
                                   session_id="s", task_id="task_1", outcome="ok", started_ms=1, duration_ms=2.0)
    base.update(fields)
    return Operation(trace=trace, **base)  # type: ignore[arg-type]


def test_otlp_export_keeps_ids_parents_and_times() -> None:
    trace = Trace.begin("tools/call search")
    handler = trace.open("handler", trace.root, {"tool": "search"})
    assert handler is not None
    trace.close(handler)
    trace.finish()
    exporter = InMemorySpanExporter()
    export = OtlpExport(exporter, repo="/r", repo_id="rid", schedule_delay_ms=10)
    export.submit(_operation(trace, outcome="error", error_code=3005, error_name="INDEX_STALE"))
    assert export.flush()
    spans = {s.name: s for s in exporter.get_finished_spans()}
    root, child = spans["tools/call search"], spans["handler"]
    assert root.context is not None and child.context is not None and child.parent is not None
    assert child.parent.span_id == root.context.span_id
    assert root.context.trace_id == child.context.trace_id == int(trace.trace_id, 16)
    assert root.start_time == trace.root.start_ns and root.end_time == trace.root.end_ns
    assert root.attributes is not None and root.attributes["codeplane.error_code"] == 3005
    assert root.status.status_code.name == "ERROR"
    assert root.resource.attributes["service.name"] == "codeplane"
    export.shutdown()


def test_the_ring_drops_the_oldest_and_filters() -> None:
    ring = TraceRing(3)
    for i in range(5):
        trace = Trace.begin("r")
        trace.finish()
        ring.add(_operation(trace, tool="search" if i % 2 else "describe", started_ms=i,
                            outcome="error" if i == 4 else "ok"))
    assert len(ring) == 3 and ring.dropped == 2
    newest, total = ring.query(OperationFilter(), limit=2)
    assert total == 3 and [op.started_ms for op in newest] == [4, 3]
    assert [op.started_ms for op in ring.query(OperationFilter(outcome="error"))[0]] == [4]
    assert [op.started_ms for op in ring.query(OperationFilter(tool="search", since_ms=3))[0]] == [3]
