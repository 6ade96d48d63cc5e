"""Connects observability to the services of one server (called last by ``build_services``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from codeplane.core.clock import now_ms
from codeplane.core.logging import get_logger
from codeplane.core.redaction import redact_url
from codeplane.repo.workspace import head_info
from codeplane.server.observability import Observability
from codeplane.server.observability.metrics import IndexSample, ServerMetrics, StateReaders, TasksSample
from codeplane.server.observability.observer import CallTelemetry
from codeplane.server.observability.traces import Operation, TraceRing
from codeplane.tasks import TaskState

if TYPE_CHECKING:
    from codeplane.index.epochs import EpochSummary
    from codeplane.index.pipeline import ReconcileReport
    from codeplane.server.services import Services
    from codeplane.testing.model import RunSnapshot

log = get_logger(__name__)


def _index_sample(services: Services) -> IndexSample:
    index = services.index
    counts = index.status()

    def count(key: str) -> int:
        value = counts.get(key)
        return value if isinstance(value, int) else 0

    last = index.last_update
    indexed = index.indexed_head
    try:
        head = head_info(services.root).head
    except Exception:  # noqa: BLE001 - a broken ref: report no drift rather than fail the scrape
        head = indexed
    files = {kind: count(key) for kind, key in
             (("text", "indexed_files"), ("binary", "binary_files"), ("oversized", "oversized_files"),
              ("symlink", "symlinks"))}
    return IndexSample(ready=index.ready, epoch=index.epoch, last_reconcile_ms=last.at_ms if last else None,
                       pending_changes=index.pending_count, head_drift=index.ready and head != indexed,
                       files_by_kind=files, watcher=index.watcher_state)


def _tasks_sample(services: Services) -> TasksSample:
    status = services.tasks.status()
    return TasksSample(sessions=int(status.get("sessions") or 0), open_tasks=int(status.get("open_task_count") or 0))


def _active_test_runs(services: Services) -> int:
    testing = services.deferred_testing.peek()
    return 0 if testing is None else len(testing.active_runs())


def wire(services: Services) -> Observability:
    from codeplane.server.services import Lifecycle

    config = services.config.observability
    ring = TraceRing(config.trace_ring_size)
    # Not built yet (services.py's Deferred): no run has started. The registry reads every gauge as it registers.
    readers = StateReaders(index=lambda: _index_sample(services), tasks=lambda: _tasks_sample(services),
                           active_test_runs=lambda: _active_test_runs(services), traces_kept=lambda: len(ring),
                           now_ms=now_ms)
    # Off (overhead benchmarks): the registry keeps the process collector only.
    metrics = ServerMetrics(readers if config.enabled else None)
    obs = Observability(enabled=config.enabled, metrics=metrics, ring=ring)
    if not config.enabled:
        return obs

    def on_reconcile(report: ReconcileReport, summary: EpochSummary | None) -> None:
        metrics.reconciles.labels("full" if report.full else "paths").observe(report.duration_ms / 1000)
        if summary is not None:
            metrics.epochs.observe(summary.duration_ms / 1000)

    def on_test_run(run: RunSnapshot) -> None:
        metrics.test_runs.labels(run.state).inc()
        if run.finished_at is not None:
            metrics.test_run_duration.observe(max(0, run.finished_at - run.started_at) / 1000)

    def on_task(state: TaskState) -> None:
        if state is TaskState.OPEN:
            metrics.tasks_opened.inc()
        else:
            metrics.tasks_closed.labels(state.value).inc()

    services.tasks.on_transition = on_task
    services.index.on_reconcile(on_reconcile)
    services.deferred_testing.on_build(lambda testing: testing.on_finish(on_test_run))
    if config.otlp_endpoint:
        from codeplane.server.observability.otlp import OtlpExport

        obs.export = OtlpExport.http(config.otlp_endpoint, config.otlp_headers, repo=str(services.root),
                                     repo_id=services.repo_id)
        log.info("exporting traces over OTLP", endpoint=redact_url(config.otlp_endpoint))
        # How the export goes (a collector that is down shows here and in the log, not only on the ``cpl up``
        # console). Only with an endpoint set: describe lists every status section, and one saying nothing on
        # every answer is noise.
        export_status = obs.export.status
        services.status_sections["observability"] = lambda: {"otlp": export_status()}

    def export(op: Operation) -> None:
        if obs.export is not None:
            obs.export.submit(op)

    # The tracker keeps its place (and meaning) in the observer list; the wrapper measures around it.
    services.observers[:] = [CallTelemetry(o, metrics, obs.window, ring, export) if o is services.tasks else o
                             for o in services.observers]

    async def start() -> None:
        return None

    async def stop() -> None:
        if obs.export is not None:
            await anyio.to_thread.run_sync(obs.export.shutdown)

    services.lifecycles.append(Lifecycle("observability", start, stop))
    return obs
