"""Prometheus metrics of one server (spec §13.3 system health, §13.4 ``/metrics``), via ``prometheus_client``.

Every server owns a :class:`CollectorRegistry` (never the process-global one): tests and benchmarks run
several servers' worth of state in one process, and ``/metrics`` must show exactly this server.

Events (calls, reconciles, test runs, task transitions) update counters and histograms as they happen;
state (index freshness, watcher, open tasks) is read when Prometheus scrapes, by :class:`_StateCollector`.
Process memory, CPU and open file descriptors come from the client's ``ProcessCollector``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

#: Seconds; tool calls range from sub-millisecond reads to minutes of tests.
CALL_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
                60.0, 300.0)
INDEX_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0, 600.0)
TEST_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
#: "starting": a first build is running; the watcher starts once it is published (``IndexService``).
WATCHER_STATES = ("starting", "stopped", "running", "failed", "disabled")


@dataclass(frozen=True)
class IndexSample:
    ready: bool
    epoch: int
    #: Wall-clock ms of the last full reconcile, ``None`` before the first.
    last_reconcile_ms: int | None
    pending_changes: int
    #: Whether the HEAD the index reconciled against is not the repository's HEAD now.
    head_drift: bool
    files_by_kind: dict[str, int]
    watcher: str


@dataclass(frozen=True)
class TasksSample:
    sessions: int
    open_tasks: int


@dataclass(frozen=True)
class StateReaders:
    """How the scrape-time collector reads state; each reader may raise (that family is then skipped)."""

    index: Callable[[], IndexSample]
    tasks: Callable[[], TasksSample]
    active_test_runs: Callable[[], int]
    traces_kept: Callable[[], int]
    now_ms: Callable[[], int]


class _StateCollector(Collector):
    def __init__(self, readers: StateReaders) -> None:
        self._readers = readers

    def collect(self) -> Iterator[Metric]:
        try:
            yield from self._index(self._readers.index())
        except Exception:  # noqa: BLE001 - a scrape during start/stop: the other families still answer
            pass
        try:
            tasks = self._readers.tasks()
            yield GaugeMetricFamily("codeplane_sessions", "Sessions held in memory.", value=tasks.sessions)
            yield GaugeMetricFamily("codeplane_tasks_open", "Tasks in state OPEN.", value=tasks.open_tasks)
        except Exception:  # noqa: BLE001
            pass
        yield GaugeMetricFamily("codeplane_test_runs_active", "Test runs queued or running.",
                                value=self._readers.active_test_runs())
        yield GaugeMetricFamily("codeplane_traces_kept", "Operations kept in the in-memory trace ring.",
                                value=self._readers.traces_kept())

    def _index(self, sample: IndexSample) -> Iterator[Metric]:
        yield GaugeMetricFamily("codeplane_index_ready", "1 once the first reconcile is published.",
                                value=1 if sample.ready else 0)
        yield GaugeMetricFamily("codeplane_index_epoch", "The published index epoch.", value=sample.epoch)
        age = math.nan if sample.last_reconcile_ms is None else \
            max(0.0, (self._readers.now_ms() - sample.last_reconcile_ms) / 1000)
        yield GaugeMetricFamily("codeplane_index_last_reconcile_age_seconds",
                                "Seconds since the last full reconcile (NaN before the first).", value=age)
        yield GaugeMetricFamily("codeplane_index_pending_changes",
                                "Paths the watcher reported that are not indexed yet.", value=sample.pending_changes)
        yield GaugeMetricFamily("codeplane_index_head_drift",
                                "1 when git HEAD moved since the index last reconciled against it.",
                                value=1 if sample.head_drift else 0)
        files = GaugeMetricFamily("codeplane_index_files", "Files in the index by kind.", labels=["kind"])
        for kind, count in sorted(sample.files_by_kind.items()):
            files.add_metric([kind], count)
        yield files
        watcher = GaugeMetricFamily("codeplane_watcher_state", "The file watcher's state (1 = current).",
                                    labels=["state"])
        for state in WATCHER_STATES:
            watcher.add_metric([state], 1 if sample.watcher == state else 0)
        yield watcher


class ServerMetrics:
    """The registry and the event metrics; the observer and the index/testing listeners feed it."""

    def __init__(self, readers: StateReaders | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=self.registry)
        r = self.registry
        self.calls = Counter("codeplane_tool_calls", "Tool calls by tool, kind, outcome and error code.",
                             ["tool", "kind", "outcome", "error_code"], registry=r)
        self.latency = Histogram("codeplane_tool_call_duration_seconds", "Tool call duration (dispatch).",
                                 ["tool"], buckets=CALL_BUCKETS, registry=r)
        self.reconciles = Histogram("codeplane_index_reconcile_duration_seconds",
                                    "Index reconciles (full) and path refreshes, by kind.", ["kind"],
                                    buckets=INDEX_BUCKETS, registry=r)
        self.epochs = Histogram("codeplane_index_epoch_publish_duration_seconds",
                                "Publishing one index epoch (rows, facts and Tantivy together).",
                                buckets=INDEX_BUCKETS, registry=r)
        self.tasks_opened = Counter("codeplane_tasks_opened", "Tasks opened (implicit ones included).", registry=r)
        self.tasks_closed = Counter("codeplane_tasks_closed", "Tasks closed, by final state.", ["state"], registry=r)
        self.budget_exhausted = Counter("codeplane_task_budget_exhausted",
                                        "Calls refused because a task or read budget is used up, by budget.",
                                        ["budget"],
                                        registry=r)
        self.no_op = Counter("codeplane_no_op_calls", "Mutations that left the repository as it was.", registry=r)
        self.non_progress = Counter("codeplane_non_progress_calls",
                                    "Calls flagged non-progress (same failure fingerprint after a mutation).",
                                    registry=r)
        self.test_runs = Counter("codeplane_test_runs", "Finished test runs by final state.", ["state"], registry=r)
        self.test_run_duration = Histogram("codeplane_test_run_duration_seconds", "Finished test runs' duration.",
                                           buckets=TEST_BUCKETS, registry=r)
        if readers is not None:
            self.registry.register(_StateCollector(readers))

    def record_call(self, *, tool: str, kind: str, outcome: str, error_code: int | None, seconds: float) -> None:
        self.calls.labels(tool, kind, outcome, "" if error_code is None else str(error_code)).inc()
        self.latency.labels(tool).observe(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
