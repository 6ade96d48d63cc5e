"""semantic_diff end to end through the MCP server on Django 5.2.8 (pinned sdist), against ``git diff`` timed in the
same run.

The sdist is committed into a temp git repository, then four commits like an agent's batch of edits (QA17 F2): a
header comment added to 800 ``django/*.py``, ``self.connection`` -> ``self.conn_x`` in ``django/db``, a trailer
comment added to 1,500 ``tests/*.py``, and ``def get_queryset(self):`` -> ``(self, extra=None)``. ``cpl up`` serves
it (index built cold, an empty ``semantic_diff.db``); each figure is a client-side ``tools/call`` latency:

- range: ``{"base": "HEAD~4", "target": "HEAD"}`` (~2,000 files), the first call and a repeat;
- work tree: one line ``QA17_MARK = 1`` appended to 1,485 ``tests/*.py`` (after the index caught up), ``{}``,
  the first call and a repeat;
- small: the same line appended to 114 ``django/*.py``, ``{"limit": 1}``, first call and a repeat.

Baseline: ``git diff`` of the same state (the range, the work tree), median of 3, measured right after. The
machine's load average is printed: compare runs made at the same moment (alternate them on a shared machine).
Targets (CodePlane's "faster than the shell it replaces, or bounded"): a repeat under 1 s, a first call in
seconds, not minutes. Run: ``uv run python benchmarks/semantic_diff_speed.py`` (``--cache DIR`` reads sdists
from another benchmarks cache, e.g. a CI checkout's; nothing is downloaded when the sdist is there).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from mcp import Client

import _common
from _common import table, wait_ready

DJANGO = ("django", "5.2.8")
MARK = "QA17_MARK = 1\n"
WORKTREE_FILES = 1485
SMALL_FILES = 114
#: How long the index must stay settled (no pending change, same epoch) before a work-tree call is timed.
SETTLE_SEC = 1.5


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@x", "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def tracked(root: Path, pattern: str) -> list[str]:
    return sorted(git(root, "ls-files", pattern).split())


def build_repo(source: Path) -> Path:
    """The sdist committed, then the four commits of the module docstring."""
    root = Path(tempfile.mkdtemp(prefix="semdiff-speed-")) / "django"
    shutil.copytree(source, root)
    git(root, "init", "-q", "-b", "main")
    (root / ".git" / "info" / "exclude").write_text(".codeplane/\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "django")
    for path in tracked(root, "django/*.py")[:800]:
        edit(root / path, lambda text: "# header comment\n" + text)
    git(root, "commit", "-qam", "header")
    for path in tracked(root, "django/db/*.py"):
        edit(root / path, lambda text: re.sub(r"self\.connection\b", "self.conn_x", text))
    git(root, "commit", "-qam", "rename")
    for path in tracked(root, "tests/*.py")[:1500]:
        edit(root / path, lambda text: text + "# trailer\n")
    git(root, "commit", "-qam", "trailer")
    for path in tracked(root, "*.py"):
        edit(root / path, lambda text: text.replace("def get_queryset(self):", "def get_queryset(self, extra=None):"))
    git(root, "commit", "-qam", "signature")
    return root


def edit(path: Path, change: Any) -> None:
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    new = change(text)
    if new != text:
        path.write_text(new, encoding="utf-8", errors="surrogateescape")


def append_mark(root: Path, paths: list[str]) -> None:
    for path in paths:
        edit(root / path, lambda text: text + ("" if text.endswith("\n") or not text else "\n") + MARK)


def git_diff(root: Path, *args: str) -> float:
    times = []
    for _ in range(3):
        began = time.perf_counter()
        subprocess.run(["git", "diff", *args], cwd=root, check=True, capture_output=True)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


class Server:
    """``cpl up`` on ``root`` (this interpreter, so ``PYTHONPATH`` picks the CodePlane being measured)."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "codeplane.cli", "up", str(root), "--port", "0", "--json"],
                                     cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        line = next((line for line in self.proc.stdout if line.startswith("{")), None)
        if line is None:
            raise RuntimeError("cpl up exited before announcing")
        self.url = json.loads(line)["url"]
        self.base = self.url.removesuffix("/mcp")
        with httpx.Client() as http:
            wait_ready(http, self.base, alive=lambda: self.proc.poll() is None)

    def settle(self) -> None:
        """Wait until the index took in the last edits: nothing pending and the same epoch for ``SETTLE_SEC``."""
        last: tuple[Any, Any] | None = None
        since = time.monotonic()
        deadline = since + 600
        with httpx.Client(timeout=30) as http:
            while time.monotonic() < deadline:
                index = http.get(f"{self.base}/status").json().get("index") or {}
                now = (index.get("epoch"), index.get("pending_changes"))
                if now != last:
                    last, since = now, time.monotonic()
                elif now[1] == 0 and time.monotonic() - since >= SETTLE_SEC:
                    return
                time.sleep(0.2)
        raise RuntimeError("the index did not settle within 600 s")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)


async def timed_call(url: str, args: dict[str, Any]) -> tuple[float, str]:
    """(seconds, the answer's summary) of one ``semantic_diff`` call on a fresh client session."""
    async with Client(url) as client:
        began = time.perf_counter()
        res = await client.call_tool("semantic_diff", args)
        took = time.perf_counter() - began
    body = res.structured_content
    if not (isinstance(body, dict) and ("result" in body or "error" in body)):
        body = json.loads(res.content[0].text)
    if res.is_error:
        raise RuntimeError(f"semantic_diff failed: {body.get('error')}")
    return took, str(body["result"]["summary"])


def scenario(server: Server, name: str, files: int, args: dict[str, Any], baseline: float) -> list[object]:
    first, summary = asyncio.run(timed_call(server.url, args))
    repeat, again = asyncio.run(timed_call(server.url, args))
    if again != summary:
        raise RuntimeError(f"{name}: a repeat answered otherwise: {summary!r} then {again!r}")
    return [name, files, json.dumps(args), first, repeat, baseline, f"{first / baseline:.0f}x", summary[:80]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, help="benchmarks cache holding the unpacked sdist (default: ours)")
    args = parser.parse_args()
    if args.cache is not None:
        _common.CACHE = args.cache  # ``sdist`` reads it at each call
    root = build_repo(_common.sdist(*DJANGO))
    rows: list[list[object]] = []
    began = time.perf_counter()
    server = Server(root)
    print(f"server ready in {time.perf_counter() - began:.1f} s (cold index)", flush=True)
    try:
        changed = len(git(root, "diff", "--name-only", "HEAD~4", "HEAD").split())
        rows.append(scenario(server, "range HEAD~4..HEAD", changed, {"base": "HEAD~4", "target": "HEAD"},
                             git_diff(root, "HEAD~4", "HEAD")))
        append_mark(root, tracked(root, "tests/*.py")[:WORKTREE_FILES])
        server.settle()
        rows.append(scenario(server, "work tree, one line each", WORKTREE_FILES, {}, git_diff(root)))
        git(root, "checkout", "--", ".")
        append_mark(root, tracked(root, "django/*.py")[:SMALL_FILES])
        server.settle()
        rows.append(scenario(server, "work tree, limit 1", SMALL_FILES, {"limit": 1}, git_diff(root)))
    finally:
        server.stop()
        shutil.rmtree(root.parent, ignore_errors=True)
    table("semantic_diff through the MCP server vs git diff (Django 5.2.8; seconds, client side)",
          ["scenario", "files", "arguments", "first call", "repeat", "git diff", "first / git diff", "answer"], rows)
    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
