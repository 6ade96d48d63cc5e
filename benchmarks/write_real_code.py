"""``write_source`` on real code (issue 22 item 4, spec §9.9 < 1 s): one-line edits of methods across Django.

The real server (``cpl up``) on a fresh clone of the Django 5.2.8 sdist (committed to a git repository, as
``lexical_index.py`` builds it), the official MCP client. Each edit inserts a statement as the first line of a
method's body (the first method of each of ``--edits`` modules, spread over the package), guarded by nothing
else, and is undone by a second ``write_source``; both are timed end to end. What the call includes: the
journal, the atomic write with fsyncs, the index refresh (lexical and structural, one epoch) and the mutation
delta, whose ``tests_affected`` runs the symbol-level selection under ``DELTA_SELECTION_BUDGET_SEC``. The
answer's delta says whether that selection fell back (``tests_affected_by`` with file counts) or named tests.

Baseline in the same run: the same edit and undo as an agent's shell does them (``python -c`` reading, replacing and
writing the file): no journal, no fsync, no index, no test selection.

    uv run python benchmarks/write_real_code.py [--edits 30]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import pct, table
from lexical_index import Server, _clone, _origin, _payload

_METHOD = re.compile(r"\n(    def \w+\(self[^\n]*\):\n)(?=( {8})\S)")


def _edits(tree: Path, count: int) -> list[tuple[str, int, str]]:
    """(path, line of the method's first body line, indentation) of the first method of ``count`` modules."""
    found = []
    for path in sorted((tree / "django").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        match = _METHOD.search(text)
        if match is not None:
            found.append((path.relative_to(tree).as_posix(), text[:match.end()].count("\n") + 1, match.group(2)))
    step = max(1, len(found) // count)
    return found[::step][:count]


def _shell_edit(tree: Path, path: str, line: int, new: str | None) -> float:
    """Insert ``new`` before ``line`` (or delete ``line`` when ``new`` is None) with a python one-liner."""
    code = ("import sys;p=sys.argv[1];n=int(sys.argv[2]);t=open(p).read().splitlines(True);"
            "t[n-1:n-1]=[sys.argv[3]+'\\n'] if len(sys.argv)>3 else [];t=t if len(sys.argv)>3 else "
            "t[:n-1]+t[n:];open(p,'w').write(''.join(t))")
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, path, str(line), *([new] if new is not None else [])], cwd=tree,
                   check=True)
    return (time.perf_counter() - began) * 1000


async def _writes(server: Server, edits: list[tuple[str, int, str]]) -> dict[str, Any]:
    writes: list[float] = []
    undos: list[float] = []
    named = fell_back = 0
    async with Client(server.url) as client:
        for i, (path, line, indent) in enumerate(edits):
            began = time.perf_counter()
            res = await client.call_tool("write_source", {"edits": [
                {"path": path, "action": "update", "start_line": line, "end_line": line - 1,
                 "new_content": f"{indent}_bench_marker_{i} = {i}\n"}]})
            writes.append((time.perf_counter() - began) * 1000)
            delta = _payload(res).get("delta") or {}
            if delta.get("tests_affected_total"):
                fell_back += 1
            elif delta.get("tests_affected"):
                named += 1
            began = time.perf_counter()
            await client.call_tool("write_source", {"edits": [
                {"path": path, "action": "update", "start_line": line, "end_line": line, "new_content": ""}]})
            undos.append((time.perf_counter() - began) * 1000)
    return {"writes": writes, "undos": undos, "named": named, "by_files": fell_back}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=30)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).resolve().parent,
                            capture_output=True, text=True, check=False).stdout.strip()
    tree = _clone(_origin(), "write-real-code")
    edits = _edits(tree, args.edits)
    shell = []
    for i, (path, line, indent) in enumerate(edits):
        shell.append(_shell_edit(tree, path, line, f"{indent}_bench_marker_{i} = {i}"))
        shell.append(_shell_edit(tree, path, line, None))
    if subprocess.run(["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True,
                      check=True).stdout.strip():
        raise SystemExit("the shell baseline did not restore the tree")
    server = Server(tree)
    try:
        found = asyncio.run(_writes(server, edits))
    finally:
        server.stop()
    ours = found["writes"][1:] or found["writes"]  # the first write also warms the selection's caches
    print(f"commit {commit}; Django 5.2.8, {len(edits)} methods in as many modules; first write "
          f"{found['writes'][0]:.0f} ms (cold caches), excluded below")
    table("write_source on Django over MCP: one-line edit, then its undo (ms)",
          ["measure", "p50", "p90", "max"],
          [["write_source (edit)", round(statistics.median(ours), 1), round(pct(ours, 0.9), 1), round(max(ours), 1)],
           ["write_source (undo)", round(statistics.median(found["undos"]), 1),
            round(pct(found["undos"], 0.9), 1), round(max(found["undos"]), 1)],
           ["shell: python -c edit (no index, no fsync, no selection)", round(statistics.median(shell), 1),
            round(pct(shell, 0.9), 1), round(max(shell), 1)]])
    print(f"delta tests_affected: named test cases or files for {found['named']} edit(s), counted by files (the "
          f"selection holds more than the delta lists) for {found['by_files']}, of {len(edits)}; spec §9.9: < 1 s")


if __name__ == "__main__":
    main()
