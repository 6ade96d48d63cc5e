"""What one MCP tool call costs beyond its handler (issue 19 item 3: MCP end to end p50 ≤ 5 ms for search).

The real server (``cpl up --port 0 --json``) on a small generated repository and on the Django 5.2.8 sdist
(committed to a temp git repo). ``describe`` and a lexical identifier ``search`` (limit 20) are timed:

- end to end with the official ``mcp`` client, in both protocol modes it speaks: the default (2026-07-28,
  one self-contained POST per call) and ``mode="legacy"`` (2025-11-25: initialize, a session header, SSE
  answers);
- a raw JSON-RPC POST with ``httpx`` (no client SDK), for both modes, and a ``GET /health`` with the same
  client: the HTTP floor (uvicorn, the guard, the client, loopback TCP, with nothing behind);
- in this process, on the same repository once the server has stopped (the stack booted as ``cpl up`` boots
  it): the whole ASGI app for the same POST (guard, Starlette, the SDK's session manager and runner, our
  dispatch), our ``dispatch()`` alone, and the tool handler alone (for search also the ``query_time_ms`` its
  record reports).

Beside each wall time, the server process's CPU per call (user + system from ``/proc/<pid>/stat`` over each
batch): on a loaded machine wall times mostly measure the scheduler, CPU time what a call costs.

The split table subtracts neighbouring p50s: client SDK = mcp client - raw POST; HTTP/transport (uvicorn,
TCP, the raw client) = raw POST - in-process ASGI; server SDK = ASGI - dispatch; our dispatch (argument
validation, observers, lean dump, rendering) = dispatch - handler. Baseline in the same run: ``rg -w -F``
for the same identifiers on Django.

``--baseline-src DIR`` also starts a second server per repository from another source tree (e.g. ``git
archive`` of an older commit's ``src``) on its own clone and interleaves the end-to-end rounds with it, so
before/after share the machine's load.

    uv run python benchmarks/mcp_overhead.py [--rounds 8] [--per-round 25] [--small-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from mcp import Client
from mcp_types import Implementation

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, p50, pct, sdist, table

CPL = [sys.executable, "-m", "codeplane.cli"]
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
#: Identifiers of ordinary frequency (tens of hits, not thousands: the page cost is the index work's subject).
DJANGO_WORDS = ("get_or_create", "select_related", "prefetch_related", "bulk_create", "contribute_to_class",
                "get_prep_value", "resolve_expression", "deconstruct", "get_absolute_url", "natural_key")
SMALL_WORDS = tuple(f"handler_{i}" for i in range(1, 11))
CALLS = ("describe", "search")
MODES = ("client default", "client legacy", "raw POST default", "raw POST legacy")
#: An HTTP round trip with nothing behind it (uvicorn, the guard, the raw client): what any call costs at least.
FLOOR = "raw GET /health"


# -- repositories -------------------------------------------------------------------------------------------
def _commit(root: Path) -> None:
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=GIT_ENV, capture_output=True)


def small_repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    for i in range(1, 31):
        (root / "pkg" / f"m{i}.py").write_text(
            f"def handler_{i}(x):\n    return x + {i}\n\n\nclass Widget{i}:\n    def run(self):\n"
            f"        return handler_{i}(1)\n")
    _commit(root)
    return root


def django_repo(root: Path) -> Path:
    shutil.copytree(sdist("django", "5.2.8"), root)
    _commit(root)
    return root


# -- the server ---------------------------------------------------------------------------------------------
@dataclass
class Server:
    label: str
    root: Path
    proc: subprocess.Popen[str]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start(label: str, root: Path, src: Path | None) -> Server:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    proc = subprocess.Popen([*CPL, "up", str(root), "--port", "0", "--json"], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            raise RuntimeError(f"cpl up exited {proc.returncode}")
        if line.startswith("{") and json.loads(line).get("event") == "ready":
            server = Server(label, root, proc, int(json.loads(line)["port"]))
            break
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:  # the first index: /ready says 503 until it is built
        try:
            if httpx.get(f"http://127.0.0.1:{server.port}/ready", timeout=5).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError("server did not become ready")


# -- one call, four ways ------------------------------------------------------------------------------------
def _args(tool: str, word: str) -> dict[str, Any]:
    return {"query": word, "syntax": "identifier"} if tool == "search" else {}


def _query_ms(structured: Any) -> float | None:
    if isinstance(structured, dict) and isinstance(structured.get("result"), dict):
        value = structured["result"].get("query_time_ms")
        return float(value) if value is not None else None
    return None


class RawModern:
    """A 2026-07-28 ``tools/call``: one POST, the envelope's ``_meta`` in the body, a JSON answer."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.AsyncClient(timeout=60)
        self.ids = 0

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        body = {"jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": {
            "name": tool, "arguments": args, "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "raw-bench", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}}}}
        res = await self.http.post(self.url, json=body, headers={
            "accept": "application/json, text/event-stream", "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call", "mcp-name": tool})
        res.raise_for_status()
        return _answer(res)

    async def health(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        res = await self.http.get(self.url.removesuffix("/mcp") + "/health")
        res.raise_for_status()
        return {}


class RawLegacy:
    """A 2025-11-25 session: initialize once, then POSTs with the session header (answers come as SSE)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.AsyncClient(timeout=60)
        self.ids = 0
        self.headers = {"accept": "application/json, text/event-stream"}

    async def open(self) -> None:
        res = await self.http.post(self.url, headers=self.headers, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw-bench", "version": "0"}}})
        res.raise_for_status()
        self.headers = {**self.headers, "mcp-session-id": res.headers["mcp-session-id"],
                        "mcp-protocol-version": LEGACY}
        await self.http.post(self.url, headers=self.headers,
                             json={"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        res = await self.http.post(self.url, headers=self.headers, json={
            "jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": {"name": tool, "arguments": args}})
        res.raise_for_status()
        return _answer(res)


def _answer(res: httpx.Response) -> dict[str, Any]:
    if res.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in res.text.splitlines() if line.startswith("data:")]
        message: dict[str, Any] = json.loads(data[-1])
    else:
        message = res.json()
    if "result" not in message:
        raise RuntimeError(f"call failed: {message}")
    result: dict[str, Any] = message["result"]
    return result


@dataclass
class Samples:
    """ms per (way, tool), the server's CPU ms per (way, tool), and the search handler's own ``query_time_ms``."""

    ms: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    query_ms: list[float] = field(default_factory=list)
    #: (server CPU seconds, calls) per (way, tool): robust where wall times measure the machine's load.
    cpu: dict[tuple[str, str], tuple[float, int]] = field(default_factory=dict)

    def add(self, way: str, tool: str, value: float) -> None:
        self.ms.setdefault((way, tool), []).append(value)

    def add_cpu(self, way: str, tool: str, seconds: float, calls: int) -> None:
        total, count = self.cpu.get((way, tool), (0.0, 0))
        self.cpu[(way, tool)] = (total + seconds, count + calls)

    def cpu_ms(self, way: str, tool: str) -> float:
        total, count = self.cpu.get((way, tool), (0.0, 0))
        return total / count * 1000.0 if count else float("nan")


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux ``/proc``; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def add(self, way: str, tool: str, value: float) -> None:
        self.ms.setdefault((way, tool), []).append(value)


async def _timed(call: Callable[[str, dict[str, Any]], Awaitable[Any]], tool: str,
                 args: dict[str, Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    out = await call(tool, args)
    return (time.perf_counter() - began) * 1000.0, out


async def end_to_end(servers: list[Server], words: tuple[str, ...], rounds: int, per_round: int,
                     warmup: int) -> dict[str, Samples]:
    """Every way of calling, interleaved across servers round by round so load hits all alike."""
    samples = {s.label: Samples() for s in servers}
    async with AsyncExitStack() as stack:
        ways: dict[str, dict[str, Callable[[str, dict[str, Any]], Awaitable[Any]]]] = {}
        for server in servers:
            default = await stack.enter_async_context(
                Client(server.url, client_info=Implementation(name="bench-default", version="0")))
            legacy = await stack.enter_async_context(
                Client(server.url, mode="legacy", client_info=Implementation(name="bench-legacy", version="0")))
            raw_modern = RawModern(server.url)
            raw_legacy = RawLegacy(server.url)
            await raw_legacy.open()
            stack.push_async_callback(raw_modern.http.aclose)
            stack.push_async_callback(raw_legacy.http.aclose)
            ways[server.label] = {
                "client default": default.call_tool, "client legacy": legacy.call_tool,
                "raw POST default": raw_modern.call, "raw POST legacy": raw_legacy.call,
                FLOOR: raw_modern.health}
        for server in servers:  # warm: tool lists cached by the clients, imports done, pages in cache
            for fn in ways[server.label].values():
                for i in range(warmup):
                    for tool in CALLS:
                        await fn(tool, _args(tool, words[i % len(words)]))
        for round_no in range(rounds):
            order = servers if round_no % 2 == 0 else list(reversed(servers))
            for server in order:
                for way, fn in ways[server.label].items():
                    for tool in CALLS:
                        cpu_before = process_cpu_s(server.proc.pid)
                        for i in range(per_round):
                            args = _args(tool, words[i % len(words)])
                            ms, out = await _timed(fn, tool, args)
                            samples[server.label].add(way, tool, ms)
                            if tool == "search" and way == "raw POST default":
                                q = _query_ms(out.get("structuredContent"))
                                if q is not None:
                                    samples[server.label].query_ms.append(q)
                        samples[server.label].add_cpu(way, tool, process_cpu_s(server.proc.pid) - cpu_before,
                                                      per_round)
    return samples


# -- in process ---------------------------------------------------------------------------------------------
async def in_process(root: Path, words: tuple[str, ...], calls: int) -> dict[str, list[float]]:
    """The same calls without the network: the ASGI app, ``dispatch()``, the handler (current code only)."""
    from codeplane.cli.repo_context import resolve
    from codeplane.repo.workspace import initialize
    from codeplane.server.app import build_stack
    from codeplane.server.dispatch import dispatch
    from codeplane.server.security import GuardMiddleware
    from codeplane.server.services import build_services
    from codeplane.server.tooling import ToolContext, ToolRegistry
    from codeplane.server.tools import all_tools

    report = initialize(root)
    config = resolve(root, []).config
    services = build_services(root, config, report.repo_id)
    stack = build_stack(services)
    app = GuardMiddleware(stack.asgi, repo_root=str(root))
    registry = ToolRegistry(all_tools(services), profile=config.tools.profile)
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "inproc-bench", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}

    async def asgi(tool: str, args: dict[str, Any]) -> Any:
        data = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": tool, "arguments": args, "_meta": meta}}).encode()
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"", "root_path": "",
                 "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000), "headers": [
                     (b"host", b"127.0.0.1:8000"), (b"accept", b"application/json, text/event-stream"),
                     (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                     (b"mcp-protocol-version", MODERN.encode()), (b"mcp-method", b"tools/call"),
                     (b"mcp-name", tool.encode())]}
        delivered = False
        chunks: list[bytes] = []

        async def receive() -> MutableMapping[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": data, "more_body": False}
            await asyncio.Event().wait()  # no disconnect while the call runs
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await app(scope, receive, send)
        return json.loads(b"".join(chunks))

    async def via_dispatch(tool: str, args: dict[str, Any]) -> Any:
        return await dispatch(services, registry, tool, args, default_session="bench_inproc")

    async def handler(tool: str, args: dict[str, Any]) -> Any:
        spec = registry.get(tool)
        assert spec is not None
        ctx = ToolContext(services=services, registry=registry, tool=tool, session_id="bench_handler",
                          request_id="req_bench")
        return await spec.handler(ctx, spec.params.model_validate(args))

    out: dict[str, list[float]] = {}
    async with stack.running():
        await asyncio.sleep(3)  # let the boot's background work (git cache warm-up) finish first
        layers = (("asgi", asgi), ("dispatch", via_dispatch), ("handler", handler))
        for _, fn in layers:
            for tool in CALLS:
                for i in range(20):
                    await fn(tool, _args(tool, words[i % len(words)]))
        # Layer by layer for each call, so the differences between layers are not differences in load.
        for i in range(calls):
            for tool in CALLS:
                args = _args(tool, words[i % len(words)])
                for name, fn in layers:
                    ms, result = await _timed(fn, tool, args)
                    out.setdefault(f"{name} {tool}", []).append(ms)
                    if name == "handler" and tool == "search":
                        out.setdefault("query_time_ms", []).append(float(result.query_time_ms))
    return out


# -- report -------------------------------------------------------------------------------------------------
def rg_ms(root: Path, words: tuple[str, ...], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        for word in words:
            began = time.perf_counter()
            subprocess.run(["rg", "-w", "-F", "-n", "--no-messages", "--", word, "."], cwd=root,
                           capture_output=True, check=False)
            out.append((time.perf_counter() - began) * 1000.0)
    return out


def report(name: str, samples: dict[str, Samples], inproc: dict[str, list[float]], current: str,
           rg: list[float] | None) -> None:
    labels = list(samples)
    rows: list[list[object]] = []
    for way in MODES:
        for tool in CALLS:
            row: list[object] = [f"{way}: {tool}"]
            for label in labels:
                values = samples[label].ms[(way, tool)]
                row += [p50(values), pct(values, 0.95), samples[label].cpu_ms(way, tool)]
            rows.append(row)
    floor_row: list[object] = [f"{FLOOR} (HTTP floor)"]
    for label in labels:
        values = samples[label].ms[(FLOOR, "describe")] + samples[label].ms[(FLOOR, "search")]
        cpu = (samples[label].cpu_ms(FLOOR, "describe") + samples[label].cpu_ms(FLOOR, "search")) / 2
        floor_row += [p50(values), pct(values, 0.95), cpu]
    rows.append(floor_row)
    for label in labels:
        q = samples[label].query_ms
        if q:
            rows.append([f"search query_time_ms reported ({label})", *([""] * 3 * labels.index(label)),
                         p50(q), pct(q, 0.95), "", *([""] * 3 * (len(labels) - labels.index(label) - 1))])
    header = ["call", *[f"{label} {stat}" for label in labels
                        for stat in ("p50 (ms)", "p95 (ms)", "server CPU/call (ms)")]]
    table(f"{name}: end to end over MCP ({', '.join(labels)})", header, rows)

    cur = samples[current]
    floor = p50(cur.ms[(FLOOR, "describe")] + cur.ms[(FLOOR, "search")])
    split_rows: list[list[object]] = []
    for tool in CALLS:
        e2e, e2e_legacy = p50(cur.ms[("client default", tool)]), p50(cur.ms[("client legacy", tool)])
        raw, raw_legacy = p50(cur.ms[("raw POST default", tool)]), p50(cur.ms[("raw POST legacy", tool)])
        asgi, disp, hand = (p50(inproc[f"{k} {tool}"]) for k in ("asgi", "dispatch", "handler"))
        split_rows += [
            [tool, "client SDK (mcp client - raw POST)", e2e - raw, e2e_legacy - raw_legacy],
            [tool, "HTTP/transport (raw POST - in-process ASGI)", raw - asgi, raw_legacy - asgi],
            [tool, f"  of which an HTTP round trip to /health ({FLOOR})", floor, floor],
            [tool, "server SDK + guard + routing (ASGI - dispatch)", asgi - disp, "(as default)"],
            [tool, "our dispatch (dispatch - handler)", disp - hand, "(as default)"],
            [tool, "handler (incl. worker-thread hop)", hand, "(as default)"],
            [tool, "total: mcp client end to end", e2e, e2e_legacy],
        ]
    split_rows.append(["search", "query_time_ms (handler's own measure, in process)",
                       p50(inproc["query_time_ms"]), ""])
    table(f"{name}: where one call's p50 goes ({current})", ["tool", "part", "default mode (ms)",
                                                              "legacy mode (ms)"], split_rows)
    search50 = p50(cur.ms[("client default", "search")])
    target_rows: list[list[object]] = [["MCP end to end p50, search, client default (ms)", search50, "≤ 5",
                                        search50 <= 5]]
    if rg is not None:
        target_rows += [["rg -w -F p50, same identifiers (ms)", p50(rg), "baseline", "-"],
                        ["speed-up vs rg -w (p50 ratio)", p50(rg) / search50, "≥ 20×", p50(rg) / search50 >= 20]]
    table(f"{name}: targets", ["metric", "value", "target", "met"], target_rows)


async def run_repo(name: str, make: Callable[[Path], Path], words: tuple[str, ...], args: argparse.Namespace,
                   tmp: Path) -> None:
    roots = {"current": make(tmp / f"{name}-current")}
    if args.baseline_src:
        roots["baseline"] = make(tmp / f"{name}-baseline")
    servers = []
    try:
        for label, root in roots.items():
            servers.append(start(label, root, Path(args.baseline_src) if label == "baseline" else None))
        samples = await end_to_end(servers, words, args.rounds, args.per_round, warmup=10)
    finally:
        for server in servers:
            server.stop()
    inproc = await in_process(roots["current"], words, args.rounds * args.per_round)
    rg = rg_ms(roots["current"], words, 3) if name == "django" and shutil.which("rg") else None
    report(name, samples, inproc, "current", rg)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--per-round", type=int, default=25)
    parser.add_argument("--small-only", action="store_true")
    parser.add_argument("--baseline-src", help="a src/ tree to run a second, interleaved server from")
    args = parser.parse_args()
    CACHE.mkdir(exist_ok=True)
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        await run_repo("small", small_repo, SMALL_WORDS, args, Path(tmp))
        if not args.small_only:
            await run_repo("django", django_repo, DJANGO_WORDS, args, Path(tmp))
    print(f"\nload average at end: {os.getloadavg()}")


if __name__ == "__main__":
    asyncio.run(main())
