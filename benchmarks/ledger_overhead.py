"""Ledger overhead per tool call (issue 7 target: ≤ 1 ms p50).

Two measurements, each with a baseline from the same run:
1. ``describe`` over MCP against two servers on the same repo-shaped temp dirs, one with the ledger
   recording (default) and one with ``tasks.ledger_enabled=false``; calls alternate between the two in
   rounds so machine noise hits both alike. The p50 difference is the end-to-end recording cost.
2. In process: the task tracker's ``before_call`` + ``after_call`` for a read call and for a mutation
   with a diff (which also stores an artifact), recording on vs off. This isolates the ledger write
   (one SQLite transaction + hash chain) from HTTP noise.

    uv run python benchmarks/ledger_overhead.py
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.calls import CallInfo, CallKind, CallOutcome, MutationReport
from codeplane.core.config import TasksConfig
from codeplane.tasks import Ledger, TaskTracker, TrackerSettings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import p50, pct, table

CPL = [sys.executable, "-m", "codeplane.cli"]
ROUNDS, PER_ROUND = 10, 100


def make_repo(root: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)


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


async def describe_rounds(on_port: int, off_port: int) -> tuple[list[float], list[float]]:
    async with Client(f"http://127.0.0.1:{on_port}/mcp") as on, Client(f"http://127.0.0.1:{off_port}/mcp") as off:
        for client in (on, off):
            for _ in range(20):
                await client.call_tool("describe", {})
        times: dict[str, list[float]] = {"on": [], "off": []}
        for index in range(ROUNDS):
            order = [("on", on), ("off", off)] if index % 2 == 0 else [("off", off), ("on", on)]
            for name, client in order:
                for _ in range(PER_ROUND):
                    began = time.perf_counter()
                    res = await client.call_tool("describe", {})
                    times[name].append((time.perf_counter() - began) * 1000.0)
                    assert not res.is_error
        return times["on"], times["off"]


def tracker_times(state: Path, *, record: bool, kind: CallKind, repeat: int = 3000) -> list[float]:
    config = TasksConfig(ledger_enabled=record, max_mutations=1_000_000, read_budget_calls=1_000_000)
    tracker = TaskTracker(Ledger(state / "ledger.db"), TrackerSettings.from_config(config),
                          artifacts=ArtifactStore(state / "artifacts", 48))
    tracker.start()
    out = []
    for i in range(repeat):
        info = CallInfo(tool="write_source" if kind == "mutation" else "search", kind=kind, session_id="bench",
                        request_id=f"req_{i}", started_ms=0, op_detail="edits=1 actions=update dry_run=false")
        report = MutationReport(changed_paths=((f"src/m{i % 50}.py", f"{i:064x}"),), insertions=3, deletions=1,
                                short_diff=f"--- a/src/m.py\n+++ b/src/m.py\n-old {i}\n+new {i}\n",
                                repo_before=f"rf_{i}", repo_after=f"rf_{i + 1}") if kind == "mutation" else None
        began = time.perf_counter()
        tracker.before_call(info)
        tracker.after_call(CallOutcome(info=info, duration_ms=1.0, ok=True, result_bytes=2048, mutation=report))
        out.append((time.perf_counter() - began) * 1000.0)
    tracker.stop()
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        on_root, off_root = base / "on", base / "off"
        make_repo(on_root)
        make_repo(off_root)
        on_proc, on_port = start(on_root)
        off_proc, off_port = start(off_root, "--set", "tasks.ledger_enabled=false")
        try:
            with_ledger, without = asyncio.run(describe_rounds(on_port, off_port))
        finally:
            for proc in (on_proc, off_proc):
                proc.terminate()
                proc.wait()
        rows = []
        for kind in ("read", "mutation"):
            on = tracker_times(base / f"t-on-{kind}", record=True, kind=kind)
            off = tracker_times(base / f"t-off-{kind}", record=False, kind=kind)
            rows.append([f"tracker before+after ({kind})", p50(on), pct(on, 0.99), p50(off), p50(on) - p50(off),
                         p50(on) / p50(off)])
    table("Ledger overhead per call (ms)",
          ["measure", "p50 recording", "p99 recording", "p50 not recording (baseline)", "overhead p50",
           "ratio"],
          [["describe over MCP", p50(with_ledger), pct(with_ledger, 0.99), p50(without),
            p50(with_ledger) - p50(without), p50(with_ledger) / p50(without)], *rows])
    print("\nTarget: overhead p50 ≤ 1 ms.")


if __name__ == "__main__":
    main()
