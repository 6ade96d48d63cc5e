"""The tracing seam: ``span(name, **attrs)`` marks a step of whatever tool call is running (spec §13.3).

Subsystems wrap their main steps (an index query, a mutation commit, a git operation, a test run) in
``with span("index.search", files=3):``. When no trace is active - a background reconcile, ``cpl init``,
a unit test - ``span`` returns one shared do-nothing context manager: one ``ContextVar.get`` is all it
costs. The server starts a trace per tool call (``server/observability``); the span tree lives in the
call's context, so it follows the call into worker threads started with ``anyio.to_thread`` (which copies
the context) and never leaks into another call.

This is deliberately a small model of its own rather than the OpenTelemetry API: the hot path stays a
few attribute writes, nothing is imported that the server does not need, and the trace is a plain
dataclass tree the dashboard can render. Export to OTLP, when configured, replays finished traces
through the OpenTelemetry SDK (``server/observability/otlp.py``).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field

#: A trace keeps at most this many spans; later ones are counted in ``Trace.dropped_spans`` (a loop that
#: opens a span per file must not grow one call's trace without bound).
MAX_SPANS = 256

AttrValue = str | int | float | bool
_span_ids = itertools.count(1)
_trace_prefix = f"{os.getpid():08x}"
_trace_ids = itertools.count(1)


@dataclass(eq=False)
class Span:
    """One timed step. Times are wall-clock nanoseconds derived from one monotonic origin per trace."""

    name: str
    span_id: int
    parent_id: int | None
    start_ns: int
    end_ns: int | None = None
    attrs: dict[str, AttrValue] = field(default_factory=dict)
    error: str | None = None

    @property
    def duration_ms(self) -> float:
        return ((self.end_ns or self.start_ns) - self.start_ns) / 1e6

    def set(self, **attrs: AttrValue | None) -> None:
        """Add attributes (``None`` values are skipped, so callers need no ``if``)."""
        for key, value in attrs.items():
            if value is not None:
                self.attrs[key] = value


@dataclass(eq=False)
class Trace:
    """The span tree of one tool call; ``spans[0]`` is the root."""

    trace_id: str
    wall_origin_ns: int
    perf_origin_ns: int
    spans: list[Span] = field(default_factory=list)
    dropped_spans: int = 0
    finished: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def begin(cls, name: str, *, start_wall_ns: int | None = None, **attrs: AttrValue) -> Trace:
        """A new trace whose root span starts now (or at ``start_wall_ns``, for a call already under way)."""
        wall, perf = time.time_ns(), time.perf_counter_ns()
        trace = cls(trace_id=f"{_trace_prefix}{next(_trace_ids):024x}", wall_origin_ns=wall, perf_origin_ns=perf)
        start = wall if start_wall_ns is None else min(start_wall_ns, wall)
        trace.spans.append(Span(name, next(_span_ids), None, start, attrs=dict(attrs)))
        return trace

    @property
    def root(self) -> Span:
        return self.spans[0]

    def now_ns(self) -> int:
        return self.wall_origin_ns + (time.perf_counter_ns() - self.perf_origin_ns)

    def open(self, name: str, parent: Span, attrs: dict[str, AttrValue]) -> Span | None:
        """A child of ``parent`` starting now; ``None`` if the trace is finished or full."""
        with self._lock:
            if self.finished:
                return None
            if len(self.spans) >= MAX_SPANS:
                self.dropped_spans += 1
                return None
            child = Span(name, next(_span_ids), parent.span_id, self.now_ns(), attrs=attrs)
            self.spans.append(child)
            return child

    def close(self, span: Span, error: str | None = None) -> None:
        span.end_ns = self.now_ns()
        if error is not None and span.error is None:
            span.error = error

    def finish(self, end_ns: int | None = None) -> None:
        """End the root (and any span left open) and freeze the trace; later spans are ignored."""
        with self._lock:
            end = self.now_ns() if end_ns is None else end_ns
            for span in self.spans:
                if span.end_ns is None:
                    span.end_ns = max(end, span.start_ns)
            self.finished = True


#: (trace, the span new spans nest under) for the call running in this context.
_active: ContextVar[tuple[Trace, Span] | None] = ContextVar("codeplane_trace", default=None)
_NOOP: AbstractContextManager[None] = nullcontext()


def span(name: str, **attrs: AttrValue) -> AbstractContextManager[Span | None]:
    """Time ``name`` as a child of the current span; a shared no-op when no trace is active."""
    active = _active.get()
    if active is None:
        return _NOOP
    return _child(active, name, attrs)


@contextmanager
def _child(active: tuple[Trace, Span], name: str, attrs: dict[str, AttrValue]) -> Iterator[Span | None]:
    trace, parent = active
    child = trace.open(name, parent, attrs)
    if child is None:
        yield None
        return
    token = _active.set((trace, child))
    try:
        yield child
    except BaseException as exc:
        trace.close(child, error=type(exc).__name__)
        raise
    else:
        trace.close(child)
    finally:
        _active.reset(token)


def current_span() -> Span | None:
    """The innermost open span of this context's trace, to add attributes to (``None`` without a trace)."""
    active = _active.get()
    return None if active is None else active[1]


def activate(trace: Trace, parent: Span) -> None:
    """Make ``parent`` the span that ``span()`` nests under in the current context (the server's observer
    calls this around the handler; it is not a context manager because dispatch calls it in two halves)."""
    _active.set((trace, parent))


def deactivate() -> None:
    _active.set(None)


def active_trace() -> Trace | None:
    active = _active.get()
    return None if active is None else active[0]
