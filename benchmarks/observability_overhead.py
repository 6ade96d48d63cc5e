"""Observability overhead per tool call (issue 18 target: ledger + metrics + traces ≤ 0.5 ms p50).

Two measurements, each with its baseline from the same run:
1. Over MCP: two servers on the same small repository, one as shipped (ledger, metrics and traces on) and
   one with ``tasks.ledger_enabled=false`` and ``observability.enabled=false``. ``describe`` (no
   subsystem spans) and ``search`` (index spans) alternate between the two in rounds so machine noise
   hits both alike; the p50 difference is the end-to-end cost.
2. In process: the observer chain the dispatcher calls - the task tracker wrapped in the measuring
   observer (``CallTelemetry``: metrics, call window, a trace with the handler and three subsystem spans,
   the ring) versus the bare tracker with the ledger off - for a read and for a mutation. This isolates
   the cost from HTTP noise.

    uv run python benchmarks/observability_overhead.py
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.calls import CallInfo, CallKind, CallObserver, CallOutcome, MutationReport
from codeplane.core.config import TasksConfig
from codeplane.core.tracing import span
from codeplane.server.observability.metrics import ServerMetrics
from codeplane.server.observability.observer import CallTelemetry
from codeplane.server.observability.traces import TraceRing
from codeplane.server.observability.window import CallWindow
from codeplane.tasks import Ledger, TaskTracker, TrackerSettings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import p50, pct, table

CPL = [sys.executable, "-m", "codeplane.cli"]
ROUNDS, PER_ROUND = 40, 25  # fine interleaving: bursts of load from other processes hit both servers
OFF = ("--set", "tasks.ledger_enabled=false", "--set", "observability.enabled=false")


def make_repo(root: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for i in range(20):
        (root / f"mod_{i}.py").write_text(f"def handle_{i}(request):\n    return request.value + {i}\n")


def start(root: Path, *extra: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([*CPL, "up", str(root), "--port", "0", "--json", *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if line.startswith("{") and json.loads(line).get("event") == "ready":
            return proc, int(json.loads(line)["port"])
        if not line and proc.poll() is not None:
            raise RuntimeError("server died")


async def rounds(on_port: int, off_port: int, tool: str, args: dict[str, Any]) -> tuple[list[float], list[float]]:
    async with Client(f"http://127.0.0.1:{on_port}/mcp") as on, Client(f"http://127.0.0.1:{off_port}/mcp") as off:
        for client in (on, off):
            for _ in range(30):
                await client.call_tool(tool, args)
        times: dict[str, list[float]] = {"on": [], "off": []}
        for index in range(ROUNDS):
            order = [("on", on), ("off", off)] if index % 2 == 0 else [("off", off), ("on", on)]
            for name, client in order:
                for _ in range(PER_ROUND):
                    began = time.perf_counter()
                    res = await client.call_tool(tool, args)
                    times[name].append((time.perf_counter() - began) * 1000.0)
                    assert not res.is_error, res
        return times["on"], times["off"]


def chain_times(state: Path, *, observed: bool, kind: CallKind, repeat: int = 3000) -> list[float]:
    config = TasksConfig(ledger_enabled=observed, max_mutations=1_000_000, read_budget_calls=1_000_000)
    tracker = TaskTracker(Ledger(state / "ledger.db"), TrackerSettings.from_config(config),
                          artifacts=ArtifactStore(state / "artifacts", 48))
    tracker.start()
    observer: CallObserver = tracker
    if observed:
        observer = CallTelemetry(tracker, ServerMetrics(), CallWindow(), TraceRing(2000))
    out = []
    for i in range(repeat):
        info = CallInfo(tool="write_source" if kind == "mutation" else "search", kind=kind, session_id="bench",
                        request_id=f"req_{i}", started_ms=int(time.time() * 1000),
                        op_detail="edits=1 actions=update dry_run=false")
        report = MutationReport(changed_paths=((f"src/m{i % 50}.py", f"{i:064x}"),), insertions=3, deletions=1,
                                short_diff=f"--- a/src/m.py\n+++ b/src/m.py\n-old {i}\n+new {i}\n",
                                repo_before=f"rf_{i}", repo_after=f"rf_{i + 1}") if kind == "mutation" else None
        began = time.perf_counter()
        observer.before_call(info)
        # What a handler does under a trace: three subsystem steps (no-ops when no trace is active).
        with span("index.wait_fresh"), span("index.search", epoch=3):
            pass
        with span("git.read"):
            pass
        observer.after_call(CallOutcome(info=info, duration_ms=1.0, ok=True, result_bytes=2048, mutation=report))
        out.append((time.perf_counter() - began) * 1000.0)
    tracker.stop()
    return out


def _ms(*values: float) -> list[object]:
    return [f"{v:.3f}" for v in values]


def main() -> None:
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        on_root, off_root = base / "on", base / "off"
        make_repo(on_root)
        make_repo(off_root)
        on_proc, on_port = start(on_root)
        off_proc, off_port = start(off_root, *OFF)
        try:
            for tool, args in (("describe", {}), ("search", {"query": "handle_7", "limit": 5})):
                on, off = asyncio.run(rounds(on_port, off_port, tool, args))
                rows.append([f"{tool} over MCP", *_ms(p50(on), pct(on, 0.99), p50(off), p50(on) - p50(off))])
        finally:
            for proc in (on_proc, off_proc):
                proc.terminate()
                proc.wait()
        for kind in ("read", "mutation"):
            on = chain_times(base / f"c-on-{kind}", observed=True, kind=kind)
            off = chain_times(base / f"c-off-{kind}", observed=False, kind=kind)
            rows.append([f"observer chain in process ({kind})",
                         *_ms(p50(on), pct(on, 0.99), p50(off), p50(on) - p50(off))])
    table("Ledger + metrics + traces overhead per call (ms)",
          ["measure", "p50 observed", "p99 observed", "p50 all off (baseline)", "overhead p50"], rows)
    print("\nTarget: overhead p50 ≤ 0.5 ms.")


if __name__ == "__main__":
    main()
