"""Index scale (issue 19): a ≥ 100k-file, ≥ 1 GB repository built from real sdists, indexed on this machine.

The corpus is ``--copies`` copies (default 8) of the Django 5.2.8, NumPy 2.1.3 and SymPy 1.13.3 sdists (each copy
under its own directory), committed into one git repository under ``benchmarks/.cache/scale/`` (built once,
never committed to CodePlane). A branch ``touch-1000`` changes 1,000 Python files (a new line appended to each),
``touch-top-1000`` the same files with a line inserted above everything instead (every fact below it moves: the
worst case for a reindex that keeps unchanged rows).

Measured through the CLI (``cpl up``, as a user meets it):
- cold: no ``.codeplane`` index → ``/ready``; wall time, CPU and peak RSS of the process tree (``_proctree.py``),
  and the sizes of ``index.db`` and the Tantivy directory;
- identifier search over MCP on the warm server: server-side ``query_time_ms`` for 100 sampled identifiers and
  the 20 most frequent ones;
- ``git checkout touch-1000`` while the server runs: time until the watcher's catch-up is published (the new
  line's token is searchable in all 1,000 files and nothing is pending); right after the cold build, the kernel may
  still be writing the build's pages out, so ``git checkout main`` is timed too, on a settled server, once the
  checkout's own WAL is copied back (the token gone from search, nothing pending); then ``touch-top-1000``, settled;
- warm restart: stop, ``cpl up`` again → ``/ready``;
- shared artifact (issue 21): ``cpl index export`` of the warm index at ``main``, then a fresh ``git clone`` with
  200 Python files changed in its work tree started with ``cpl up --index-from`` → ``/ready`` (target ≤ 30 s;
  ``--no-artifact`` skips it): once verified by the ``.sha256`` sidecar (SQLite's ``quick_check`` before adoption),
  once with the sha256 pinned (``--set index.artifact_sha256=…``: ``quick_check`` after ``/ready``), each time
  on a clone without ``.codeplane/``.

Targets (2 cores): cold ≤ 3 min, peak RSS ≤ 2 GB, warm restart ≤ 5 s, search p95 ≤ 20 ms server-side,
1,000-file checkout reindexed ≤ 15 s; artifact adoption ≤ 30 s.

    uv run python benchmarks/index_scale.py [--copies N] [--no-artifact | --artifact-only]

``--artifact-only`` measures only the shared artifact, exporting the index the corpus already has (a previous run's).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, dump_json, p50, pct, sdist, table
from index_artifact import up_to_ready
from lexical_index import GIT_ENV, Server, _payload

SOURCES = (("django", "5.2.8"), ("numpy", "2.1.3"), ("sympy", "1.13.3"))
TOUCHED, SAMPLE, COMMON = 1000, 100, 20
TOKEN = "scale_touch_token"
TOP_TOKEN, TOP_BRANCH = "scale_top_token", "touch-top-1000"
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=GIT_ENV).stdout


def _corpus(copies: int) -> Path:
    """The corpus repository (built once per copy count): main holds the copies, touch-1000 edits 1,000 files."""
    repo = CACHE / "scale" / f"corpus-{copies}"
    if (repo / ".git" / "codeplane-corpus-complete").exists():
        return _with_top_branch(repo)
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    for copy in range(copies):
        for name, version in SOURCES:
            shutil.copytree(sdist(name, version), repo / f"copy{copy:02}" / f"{name}-{version}", symlinks=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "corpus")
    # What the sdists' own .gitignore files leave out of the commit (NumPy's *.patch, *.pkl.gz) is not on a clone's
    # disk either: without this the index holds files no commit has, and no artifact of it can be exported.
    _git(repo, "clean", "-q", "-f", "-d", "-X")
    python = sorted(p for p in _git(repo, "ls-files", "*.py").splitlines())
    touched = random.Random(19).sample(python, TOUCHED)
    _git(repo, "checkout", "-q", "-b", "touch-1000")
    for n, path in enumerate(touched):
        with (repo / path).open("a", encoding="utf-8") as handle:
            handle.write(f"\n{TOKEN} = {n}\n")
    _git(repo, "commit", "-q", "-am", "touch 1,000 files")
    _git(repo, "checkout", "-q", "main")
    (repo / ".git" / "codeplane-corpus-complete").write_text("ok\n")
    return _with_top_branch(repo)


def _with_top_branch(repo: Path) -> Path:
    """Add ``touch-top-1000`` (a corpus cached before it existed gets it here): the same 1,000 files with a line
    inserted above everything instead, so every fact below it moves (the worst case for keeping rows)."""
    if _git(repo, "branch", "--list", TOP_BRANCH).strip():
        return repo
    touched = sorted(_git(repo, "diff", "--name-only", "main", "touch-1000").splitlines())
    _git(repo, "checkout", "-q", "-b", TOP_BRANCH, "main")
    for n, path in enumerate(touched):
        target = repo / path
        target.write_bytes(f"{TOP_TOKEN} = {n}\n".encode() + target.read_bytes())
    _git(repo, "commit", "-q", "-am", "a line above everything in 1,000 files")
    _git(repo, "checkout", "-q", "main")
    return repo


def _shape(repo: Path) -> tuple[int, int]:
    files = size = 0
    for root, dirs, names in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in (".git", ".codeplane")]
        files += len(names)
        size += sum(os.lstat(os.path.join(root, n)).st_size for n in names)
    return files, size


def _identifiers(repo: Path) -> tuple[list[str], list[str]]:
    counts: Counter[str] = Counter()
    for path in sorted((repo / "copy00").rglob("*.py")):
        counts.update(IDENT.findall(path.read_text(encoding="utf-8", errors="replace")))
    sample = sorted(random.Random(20250101).sample(sorted(counts), SAMPLE))
    return sample, [name for name, _ in counts.most_common(COMMON)]


def _dir_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


async def _search_and_checkout(server: Server, repo: Path, sample: list[str], common: list[str]) -> dict[str, Any]:
    async with Client(server.url) as client:
        async def search(word: str, limit: int = 20) -> dict[str, Any]:
            res = await client.call_tool("search", {"query": word, "syntax": "identifier", "limit": limit})
            return _payload(res)

        # /ready comes when the first build is published; what changed on disk while it ran (unwatched) is caught
        # up next, and every query waits for that (or answers 3005, retryable, after its freshness wait).
        began = time.perf_counter()
        with httpx.Client(timeout=30) as http:
            while http.get(f"{server.base}/status").json().get("index", {}).get("pending_changes", 1):
                await asyncio.sleep(0.05)
        caught_up_s = time.perf_counter() - began
        print(f"/ready → caught up (nothing pending): {caught_up_s:.1f} s", flush=True)
        for word in sample[:10]:
            await search(word)
        sampled = [float((await search(w))["query_time_ms"]) for w in sample]
        frequent = [float((await search(w))["query_time_ms"]) for w in common]
        checkout_s = await _timed_checkout(client, server, repo, "touch-1000", TOKEN)
        print(f"checkout of {TOUCHED} files → searchable: {checkout_s:.1f} s", flush=True)
        files = set()
        body = await search(TOKEN, limit=100)
        while True:
            files |= {hit["path"] for hit in body.get("results", [])}
            cursor = (body.get("pagination") or {}).get("next_cursor")
            if not cursor:
                break
            body = _payload(await client.call_tool("search", {"query": TOKEN, "syntax": "identifier", "limit": 100,
                                                               "cursor": cursor}))
        # The same 1,000 files back, on a settled server: the checkout's epoch copied back from the WAL first (the
        # checkout above came right after the build, whose pages the kernel may still have been writing out).
        await _settled(repo)
        back_s = await _timed_checkout(client, server, repo, "main", TOKEN)
        print(f"checkout of the {TOUCHED} files back, settled server → searchable: {back_s:.1f} s", flush=True)
        await _settled(repo)
        top_s = await _timed_checkout(client, server, repo, TOP_BRANCH, TOP_TOKEN)
        print(f"checkout of {TOUCHED} files with a line above everything → searchable: {top_s:.1f} s", flush=True)
        await _settled(repo)
        await _timed_checkout(client, server, repo, "main", TOP_TOKEN)
    return {"sampled_ms": sampled, "common_ms": frequent, "checkout_s": checkout_s, "touched_found": len(files),
            "caught_up_s": caught_up_s, "checkout_back_s": back_s, "checkout_top_s": top_s}


async def _settled(repo: Path) -> None:
    """Until the last epoch is copied back from the WAL (at most 5 minutes)."""
    wal = repo / ".codeplane" / "index.db-wal"
    deadline = time.monotonic() + 300
    while wal.exists() and wal.stat().st_size > 0 and time.monotonic() < deadline:
        await asyncio.sleep(0.5)


async def _timed_checkout(client: Client, server: Server, repo: Path, branch: str, token: str) -> float:
    """Seconds from ``git checkout branch`` until nothing is pending and search finds ``token`` in all the
    touched files (or, on ``main``, nowhere)."""
    began = time.perf_counter()
    _git(repo, "checkout", "-q", branch)
    with httpx.Client(timeout=10) as http:
        while True:
            res = await client.call_tool("search", {"query": token, "syntax": "identifier", "limit": 100})
            if res.is_error:  # 3005 while the catch-up runs longer than the freshness wait: ask again
                continue
            body = _payload(res)
            pending = http.get(f"{server.base}/status").json().get("index", {}).get("pending_changes", 1)
            total = (body.get("pagination") or {}).get("total_estimate") or 0
            found = bool(body.get("results")) and total >= TOUCHED
            if not pending and (found if branch != "main" else not body.get("results")):
                return time.perf_counter() - began
            await asyncio.sleep(0.05)


def _artifact(repo: Path) -> dict[str, Any]:
    """Export the index at ``main``, clone the corpus, change 200 files in the clone, adopt the artifact."""
    store = CACHE / "scale" / "artifact"
    shutil.rmtree(store, ignore_errors=True)
    store.mkdir(parents=True)
    artifact = store / "index.tar.zst"
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "codeplane.cli", "index", "export", str(repo), "--out", str(artifact),
                    "--json"], check=True, capture_output=True, text=True)
    export_s = time.perf_counter() - began
    clone = store / "clone"
    began = time.perf_counter()
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, capture_output=True, env=GIT_ENV)
    clone_s = time.perf_counter() - began
    python = sorted(_git(clone, "ls-files", "*.py").splitlines())
    changed = python[::len(python) // 200][:200]
    for path in changed:
        with (clone / path).open("a", encoding="utf-8") as handle:
            handle.write("\n# changed after the artifact was built\n")
    out: dict[str, Any] = {"artifact_mb": artifact.stat().st_size / 1e6, "export_s": export_s, "clone_s": clone_s,
                           "changed": len(changed), "sidecar": _adopt(clone, artifact)}
    shutil.rmtree(clone / ".codeplane")
    sha = artifact.with_name(artifact.name + ".sha256").read_text().split()[0]
    out["pinned"] = _adopt(clone, artifact, "--set", f"index.artifact_sha256={sha}")
    assert out["sidecar"]["integrity"] == "before_adopt" and out["pinned"]["integrity"] == "after_ready", out
    shutil.rmtree(store, ignore_errors=True)
    return out


def _adopt(clone: Path, artifact: Path, *extra: str) -> dict[str, Any]:
    """`cpl up --index-from` on ``clone`` → /ready: seconds, CPU, and the index status's account of it.

    The export, the clone and the previous adoption leave gigabytes of dirty pages behind; their writeback would
    throttle this adoption's own writes (~5 GB) by an amount that depends on what ran just before, so it is
    flushed first (a developer's fresh clone does not follow a 5 GB export)."""
    os.sync()
    time.sleep(2)
    seconds, cpu, status = up_to_ready(clone, "--index-from", str(artifact), *extra)
    assert status["source"]["kind"] == "artifact", status["source"]
    reconcile = status["last_reconcile"]
    return {"s": seconds, "cpu_s": cpu, "adopt_ms": status["source"]["adopt_ms"],
            "reconcile_ms": reconcile["duration_ms"], "phases_ms": status["source"].get("adopt_phases_ms", {}),
            "modified": reconcile["modified"], "integrity": status["source"]["integrity"]}


def _adoption_rows(label: str, adoption: dict[str, Any], changed: int) -> list[list[object]]:
    return [
        [label, adoption["s"], "≤ 30", adoption["s"] <= 30],
        ["  CPU s by then (server + workers)", adoption["cpu_s"], "-", "-"],
        ["  of which adoption (checks + swap) / startup reconcile (s)",
         f"{adoption['adopt_ms'] / 1000:.2f} / {adoption['reconcile_ms'] / 1000:.2f}", "-", "-"],
        ["  adoption phases (s): " + ", ".join(adoption["phases_ms"]),
         " / ".join(f"{ms / 1000:.2f}" for ms in adoption["phases_ms"].values()), "-", "-"],
        ["  files the reconcile found modified", adoption["modified"], changed, adoption["modified"] == changed],
    ]


def _artifact_table(shared: dict[str, Any]) -> None:
    table("Shared index artifact on the same corpus (issue 21)", ["measure", "value", "target", "ok"], [
        ["artifact size (MB)", shared["artifact_mb"], "-", "-"],
        ["`cpl index export` of the warm index at main (s)", shared["export_s"], "-", "-"],
        ["`git clone` of the corpus (s, not part of the figure below)", shared["clone_s"], "-", "-"],
        *_adoption_rows(f"`cpl up --index-from` on the clone, {shared['changed']} files changed, sidecar sha256 "
                        "(`quick_check` before adoption) → /ready (s)", shared["sidecar"], shared["changed"]),
        *_adoption_rows("the same, sha256 pinned (`quick_check` after /ready) → /ready (s)", shared["pinned"],
                        shared["changed"]),
    ])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=8, help="copies of the three sdists (8: ~133k files, 1.1 GB)")
    parser.add_argument("--no-artifact", action="store_true", help="skip the shared-artifact measurement")
    parser.add_argument("--artifact-only", action="store_true",
                        help="only the shared-artifact measurement, exporting the corpus's existing index")
    args = parser.parse_args()
    repo = _corpus(args.copies)
    _git(repo, "checkout", "-q", "main")
    if args.artifact_only:
        load_before = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        shared = _artifact(repo)
        print(f"load average {load_before} before, {', '.join(f'{x:.1f}' for x in os.getloadavg())} after, "
              f"on {os.cpu_count()} cores")
        _artifact_table(shared)
        return
    shutil.rmtree(repo / ".codeplane", ignore_errors=True)
    files, size = _shape(repo)
    sample, common = _identifiers(repo)
    load_before = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    cold = Server(repo)
    print(f"cold cpl up → /ready: {cold.ready_s:.1f} s ({files:,} files, {size / 1e9:.2f} GB)", flush=True)
    db_mb = sum(_dir_mb(p) if p.is_dir() else p.stat().st_size / 1e6
                for p in (repo / ".codeplane").glob("index.db*"))
    tantivy_mb = _dir_mb(repo / ".codeplane" / "tantivy")
    try:
        remote = asyncio.run(_search_and_checkout(cold, repo, sample, common))
    finally:
        cold_usage = cold.stop()
    warm = Server(repo)
    warm_usage = warm.stop()
    _git(repo, "checkout", "-q", "main")
    shared = None if args.no_artifact else _artifact(repo)
    load_after = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    peak_mb = max(cold_usage.peak_rss_mb, warm_usage.peak_rss_mb)
    sampled95, common95 = pct(remote["sampled_ms"], 0.95), pct(remote["common_ms"], 0.95)
    print(f"load average {load_before} before, {load_after} after, on {os.cpu_count()} cores")
    table(f"Scale: {files:,} files, {size / 1e9:.2f} GB ({args.copies} copies of Django, NumPy, SymPy)",
          ["measure", "value", "target", "ok"], [
        ["cold `cpl up` → /ready (s)", cold.ready_s, "≤ 180", cold.ready_s <= 180],
        ["/ready → first build's catch-up reconcile done (s)", remote["caught_up_s"], "-", "-"],
        ["peak RSS of the process tree (MB)", peak_mb, "≤ 2048", peak_mb <= 2048],
        ["CPU of the process tree, cold server until stopped (s)", cold_usage.cpu_seconds, "-", "-"],
        ["  of which the kernel's (system time: new memory pages, page cache included) (s)",
         cold_usage.system_seconds, "-", "-"],
        ["index.db (MB)", db_mb, "-", "-"],
        ["Tantivy (MB)", tantivy_mb, "-", "-"],
        ["warm restart `cpl up` → /ready (s)", warm.ready_s, "≤ 5", warm.ready_s <= 5],
        ["identifier search p50, server-side, 100 sampled (ms)", p50(remote["sampled_ms"]), "-", "-"],
        ["identifier search p95, server-side, 100 sampled (ms)", sampled95, "≤ 20", sampled95 <= 20],
        [f"{COMMON} most frequent p95, server-side (ms)", common95, "≤ 20", common95 <= 20],
        [f"`git checkout` of {TOUCHED:,} changed files → searchable, nothing pending (s)", remote["checkout_s"],
         "≤ 15", remote["checkout_s"] <= 15],
        ["files holding the new token found by search", remote["touched_found"], TOUCHED,
         remote["touched_found"] == TOUCHED],
        [f"the same {TOUCHED:,} files back, on a settled server (s)",
         remote["checkout_back_s"], "≤ 15", remote["checkout_back_s"] <= 15],
        [f"{TOUCHED:,} files with a line above everything instead (every fact below it moves), settled (s)",
         remote["checkout_top_s"], "≤ 15", remote["checkout_top_s"] <= 15],
    ])
    if shared:
        _artifact_table(shared)
    dump_json("index_scale", {**(shared or {}), "files": files, "bytes": size, "cold_s": cold.ready_s,
                              "warm_s": warm.ready_s, "peak_mb": peak_mb, "db_mb": db_mb, "tantivy_mb": tantivy_mb,
                              **remote,
                              "load_before": load_before, "load_after": load_after})


if __name__ == "__main__":
    main()
