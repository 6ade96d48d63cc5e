"""Operator insight (spec §13): Prometheus metrics, one trace per tool call, the live window, the dashboard.

:func:`wire` is called by ``build_services``: it wraps the task tracker in the measuring observer
(:mod:`.observer`), subscribes to index reconciles and finished test runs, and starts the OTLP export
only when ``observability.otlp_endpoint`` is set. ``routes.py`` serves ``/metrics`` and ``/dashboard``;
``live.py`` is the picture both the dashboard and ``cpl status --follow`` show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from codeplane.server.observability.metrics import ServerMetrics
from codeplane.server.observability.traces import TraceRing
from codeplane.server.observability.window import CallWindow

if TYPE_CHECKING:
    from codeplane.server.observability.otlp import OtlpExport


@dataclass
class Observability:
    enabled: bool
    metrics: ServerMetrics
    ring: TraceRing
    window: CallWindow = field(default_factory=CallWindow)
    export: OtlpExport | None = None


__all__ = ["Observability"]
