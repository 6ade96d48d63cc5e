"""``cpl status --follow``: the dashboard's live picture in the terminal (rich ``Live``), polled over HTTP.

The same JSON the dashboard polls (``/dashboard/api/live``, ``/dashboard/api/operations``), so the two
never disagree; the CLI never reaches into a running server any other way. With ``--json`` each poll is
one JSON line (for scripts). While no server answers, the view says so and keeps polling.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
from rich.console import Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from codeplane.cli.output import console
from codeplane.cli.probe import auth_headers, probe
from codeplane.cli.status_cmd import progress_line
from codeplane.core.layout import RepoLayout

POLL_S = 1.0
RECENT_OPS = 12
LOG_LINES = 6


def fetch(port: int, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The live picture plus the newest operations, from the server on ``port`` (``headers``: its token)."""
    base = f"http://127.0.0.1:{port}"
    live: dict[str, Any] = httpx.get(f"{base}/dashboard/api/live", timeout=5, headers=headers).json()
    ops = httpx.get(f"{base}/dashboard/api/operations", params={"limit": RECENT_OPS}, timeout=5,
                    headers=headers).json()
    live["recent_operations"] = ops.get("operations", [])
    return live


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.1f} ms" if value >= 10 else f"{value:.2f} ms"


def _log_tail(layout: RepoLayout) -> list[str]:
    path = layout.log_file
    if not path.is_file():
        return []
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 16_384))
        lines = handle.read().decode("utf-8", errors="replace").splitlines()[-LOG_LINES:]
    out = []
    for line in lines:
        try:
            record = json.loads(line)
            extra = " ".join(f"{k}={v}" for k, v in record.items() if k not in ("ts", "level", "event"))
            out.append(f"{record.get('ts', '')} {record.get('level', '')} {record.get('event', '')} {extra}".strip())
        except (ValueError, AttributeError):
            out.append(line)
    return out


def render(live: dict[str, Any], logs: list[str]) -> RenderableType:
    if live.get("booting"):
        status = live["status"]
        building = progress_line((status.get("index") or {}).get("progress"))
        return Text.assemble((str(status.get("ready_reason") or "starting"), "yellow"),
                             f"  {status.get('repo')}  pid {status.get('pid')}  "
                             f"up {int(status.get('uptime_ms') or 0) // 1000} s",
                             f"\n{building}" if building else "")
    server, index, calls = live["server"], live["index"], live["calls"]
    # Text.assemble, never markup: the repo path and reasons are data (``[...]`` in them is not a tag).
    health = ("healthy", "green") if server["ready"] and not index.get("error") else \
        (str(server.get("ready_reason") or "starting"), "yellow")
    otlp = ("  OTLP export failing", "yellow") if server.get("otlp_failing") else \
        "  OTLP export on" if server.get("otlp_export") else ""
    head = Text.assemble(health, f"  {server['repo']}  pid {server['pid']}  up {server['uptime_ms'] // 1000} s  "
                         f"v{server['version']}", otlp)
    age = index.get("last_reconcile_age_s")
    index_line = Text.assemble(
        f"index {index.get('state')}  epoch {index.get('epoch')}  last reconcile "
        f"{'never' if age is None else f'{age} s ago'}  pending {index.get('pending_changes')}  "
        f"watcher {index.get('watcher')}", (" (index behind HEAD)", "yellow") if index.get("head_drift") else "")
    proc = live.get("process") or {}
    rss = proc.get("rss_bytes")
    resources = (f"memory {rss / 2**20:.1f} MiB  " if rss else "") + \
        f"cpu {proc.get('cpu_seconds')} s  open files {proc.get('open_fds')}  traces kept {live.get('traces_kept')}"

    tools = Table(title=f"calls, last {calls['window_s'] // 60} min", expand=True, title_justify="left")
    for column in ("tool", "calls", "per min", "errors", "p50", "p95", "p99"):
        tools.add_column(column, justify="left" if column == "tool" else "right")
    for name, stats in sorted(calls["tools"].items(), key=lambda item: -item[1]["calls"]):
        tools.add_row(name, str(stats["calls"]), str(stats["per_min"]),
                      Text(str(stats["errors"]), style="red") if stats["errors"] else "0",
                      _ms(stats["p50_ms"]), _ms(stats["p95_ms"]), _ms(stats["p99_ms"]))

    tasks = Table(title="open tasks", expand=True, title_justify="left")
    for column in ("task", "budget use", "mutations", "test runs", "read calls", "calls/min", "flags"):
        tasks.add_column(column)
    for task in live.get("tasks", []):
        use = task["use"]
        flags = [f"no-op x{task['no_op']}"] * bool(task["no_op"]) + \
            [f"non-progress x{task['non_progress']}"] * bool(task["non_progress"]) + \
            [f"failure {fp[:10]} x{n}" for fp, n in task["repeated_failures"].items()]
        tasks.add_row(task["task_id"], f"{task['max_use_pct']}%", "{}/{}".format(*use["mutations"]),
                      "{}/{}".format(*use["test_runs"]), "{}/{}".format(*use["read_calls"]), str(task["per_min"]),
                      Text(", ".join(flags) or "-", style="yellow" if flags else "dim"))

    ops = Table(title="recent operations", expand=True, title_justify="left")
    for column in ("time", "tool", "task", "outcome", "duration", "files"):
        ops.add_column(column)
    for op in live.get("recent_operations", []):
        outcome = op["outcome"] + (f" {op['error_code']} {op.get('error_name') or ''}" if op.get("error_code") else "")
        style = {"ok": "green", "error": "red", "refused": "yellow"}.get(op["outcome"], "")
        ops.add_row(time.strftime("%H:%M:%S", time.localtime(op["started_ms"] / 1000)), op["tool"],
                    op.get("task_id") or "-", Text(outcome, style=style), _ms(op["duration_ms"]),
                    ", ".join(op.get("files") or []) or "")

    runs = Table(title="recent test runs", expand=True, title_justify="left")
    for column in ("run", "state", "targets", "passed", "failed", "duration"):
        runs.add_column(column)
    for run in live.get("test_runs", []):
        runs.add_row(run["run_id"], run["state"], str(run["targets"]), str(run["passed"]),
                     str(run["failed"] + run["error"]), _ms(run["duration_ms"]))
    parts: list[RenderableType] = [head, index_line, Text(resources, style="dim"), tools,
                                   tasks, ops, runs]
    if logs:
        parts.append(Panel(Text("\n".join(logs), style="dim"), title="log", title_align="left"))
    return Group(*parts)


def follow(layout: RepoLayout, *, as_json: bool, iterations: int | None = None,
           sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> None:
    """Poll and redraw until Ctrl+C (or ``iterations`` polls, for tests), one poll every :data:`POLL_S`."""
    count = 0
    due = clock()

    def pace() -> None:
        # From one poll's start to the next, not POLL_S after a poll ended: a poll (probe, three requests) takes
        # a few hundred ms, and "one JSON line per second" came every 1.4 s. A poll slower than POLL_S is not
        # made up for: the next starts at once.
        nonlocal due
        now = clock()
        due = max(due + POLL_S, now)
        sleep(due - now)

    def poll() -> tuple[dict[str, Any] | None, str | None]:
        found = probe(layout)
        if not (found.running and found.answering and found.port):
            return None, found.error or "no server is running for this repository (cpl up)"
        try:
            # While it boots (its first index), only /status answers: the live picture waits for the boot.
            status = httpx.get(f"http://127.0.0.1:{found.port}/status", timeout=5, headers=auth_headers(layout))
            booting = status.json()
            if booting.get("phase") == "starting":
                return {"booting": True, "status": booting}, None
            return fetch(found.port, auth_headers(layout)), None
        except (httpx.HTTPError, ValueError) as exc:
            return None, f"{type(exc).__name__}: {exc}"

    try:
        if as_json:
            while iterations is None or count < iterations:
                live, problem = poll()
                print(json.dumps(live if live is not None else {"running": False, "error": problem}), flush=True)
                count += 1
                pace()
            return
        if not console.is_terminal:
            # Piped or logged: a live view redraws only on a terminal (it printed nothing until Ctrl+C); print each
            # picture as it comes, one after another.
            while iterations is None or count < iterations:
                live, problem = poll()
                console.print(render(live, _log_tail(layout)) if live is not None else
                              Text(f"CodePlane: {problem} - waiting"))
                count += 1
                pace()
            return
        with Live(Text("connecting..."), console=console, refresh_per_second=4, screen=False) as view:
            while iterations is None or count < iterations:
                live, problem = poll()
                view.update(render(live, _log_tail(layout)) if live is not None else
                            Text(f"CodePlane: {problem} - waiting", style="yellow"))
                count += 1
                pace()
    except KeyboardInterrupt:
        return
