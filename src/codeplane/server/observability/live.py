"""The live picture of one server (spec §13.1's four questions), as JSON for the dashboard's poll and for
``cpl status --follow``: health, index freshness, call rates and latency percentiles per tool, open tasks
with budget use and convergence flags, recent test runs, process resources.
"""

from __future__ import annotations

import os
import resource
from collections import Counter
from typing import TYPE_CHECKING, Any

from codeplane import __version__
from codeplane.core.clock import now_ms
from codeplane.repo.workspace import head_info
from codeplane.server.observability.traces import OperationFilter

if TYPE_CHECKING:
    from codeplane.server.services import Services

#: Open tasks shown (the status section caps them too).
MAX_TASKS = 20
MAX_TEST_RUNS = 10


def _process() -> dict[str, Any]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    try:
        open_fds: int | None = len(os.listdir("/proc/self/fd"))
    except OSError:
        open_fds = None
    rss: int | None = None
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            rss = int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        rss = usage.ru_maxrss * 1024
    return {"rss_bytes": rss, "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3), "open_fds": open_fds}


def _index(services: Services, now: int) -> dict[str, Any]:
    index = services.index
    last = index.last_update
    status = index.status()
    try:
        head = head_info(services.root).head
    except Exception:  # noqa: BLE001 - a broken ref: show the index's view only
        head = None
    return {
        "state": status.get("state"), "ready": index.ready, "epoch": index.epoch,
        "last_reconcile_ms": last.at_ms if last else None,
        "last_reconcile_age_s": round((now - last.at_ms) / 1000, 1) if last else None,
        "last_reconcile_duration_ms": last.duration_ms if last else None,
        "pending_changes": index.pending_count, "watcher": index.watcher_state,
        "indexed_head": index.indexed_head, "head": head,
        "head_drift": bool(index.ready and head is not None and head != index.indexed_head),
        "files": status.get("file_count"), "indexed_files": status.get("indexed_files"),
        "error": status.get("error"), "warnings": status.get("warnings") or [],
    }


def _tasks(services: Services, now: int) -> list[dict[str, Any]]:
    status = services.tasks.status()
    ring = services.observability.ring
    out = []
    for task in list(status.get("open_tasks") or [])[:MAX_TASKS]:
        ops, _ = ring.query(OperationFilter(task_id=task["task_id"]), limit=500)
        fingerprints = Counter(op.failure_fingerprint for op in ops if op.failure_fingerprint)
        limits, counters, read = task["limits"], task["counters"], task["read_budget"]
        read_limits = status.get("read_limits") or {}
        elapsed = max(0, limits["max_duration_sec"] - task["remaining_duration_sec"])
        use = {
            "mutations": [counters["mutation_count"], limits["max_mutations"]],
            "test_runs": [counters["test_run_count"], limits["max_test_runs"]],
            "duration_sec": [elapsed, limits["max_duration_sec"]],
            "read_calls": [read["calls"], read_limits.get("max_calls")],
            "read_bytes": [read["bytes"], read_limits.get("max_bytes")],
        }
        out.append({
            "task_id": task["task_id"], "session_id": task["session_id"], "implicit": task["implicit"],
            "opened_at_ms": task["opened_at_ms"], "budget": task["budget"], "use": use,
            "max_use_pct": max(round(100 * a / b, 1) for a, b in use.values() if b),
            "operations": len(ops),
            # Cadence (§13.3): calls per minute since the task opened, and the pause since its last call.
            "per_min": round(60 * len(ops) / max(1.0, elapsed), 2),
            "idle_s": round((now - ops[0].started_ms) / 1000, 1) if ops else None,
            "no_op": sum(op.no_op for op in ops),
            "non_progress": sum(op.non_progress for op in ops),
            "repeated_failures": {fp: n for fp, n in sorted(fingerprints.items()) if n > 1},
        })
    return out


def _test_runs(services: Services) -> list[dict[str, Any]]:
    runs = []
    for run in services.testing.recent_runs(MAX_TEST_RUNS):
        counts = run.counts
        runs.append({"run_id": run.run_id, "state": run.state, "started_ms": run.started_at,
                     "duration_ms": (run.finished_at - run.started_at) if run.finished_at else None,
                     "targets": len(run.targets), "passed": counts.passed, "failed": counts.failed,
                     "error": counts.error, "skipped": counts.skipped, "progress": run.progress_percentage,
                     "fingerprint": run.fingerprint})
    return runs


def live_snapshot(services: Services, *, window_s: int = 300) -> dict[str, Any]:
    now = now_ms()
    obs = services.observability
    ready, ready_reason = services.readiness.now()
    return {
        "now_ms": now,
        "server": {"repo": str(services.root), "repo_id": services.repo_id, "pid": services.pid,
                   "version": __version__, "uptime_ms": now - services.started_at_ms,
                   "ready": ready, "ready_reason": ready_reason,
                   "last_error": services.last_error, "observability": obs.enabled,
                   "otlp_export": obs.export is not None,
                   **({"otlp_failing": failing} if obs.export is not None and (failing := obs.export.failing) else {})},
        "index": _index(services, now),
        "calls": obs.window.summary(window_s=window_s, bucket_s=max(1, window_s // 30), now=now),
        "tasks": _tasks(services, now),
        "test_runs": _test_runs(services),
        "process": _process(),
        "traces_kept": len(obs.ring),
    }
