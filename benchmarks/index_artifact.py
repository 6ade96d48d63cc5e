"""Shared index artifact on Django 5.2.8 (issue 21): its size, and `cpl up --index-from` → `/ready` on a
clone 200 changed files ahead of the artifact's commit, against a cold build's `cpl up` → `/ready` in the
same run on an identical clone (target: ≤ 3 s). Each run adopts twice, on two fresh clones: verified by the
`.sha256` sidecar (SQLite's `quick_check` before adoption) and pinned with `--set index.artifact_sha256=…`
(`quick_check` after `/ready`, `index/artifact_integrity.py`).

A "CI" clone at the base commit runs `cpl index export`, a second clone of the same commit too (its bytes
must be identical: a CI cache key works); the base repository then gets one commit with
200 changed files (120 modified, 40 added, 20 deleted, 20 renamed). Each measured clone is fresh
(`git clone`, so every file's stat differs from the artifact's rows and the reconcile hashes every file).
Time is from spawning `cpl up` to the first 200 from `/ready`; beside it, the CPU seconds the server and its
extraction workers had used by then (on a shared machine the load stretches wall time, much less CPU time).

    uv run python benchmarks/index_artifact.py [--runs N] [--no-cold] [--scratch DIR]

``--scratch DIR`` keeps the repositories and the artifact in DIR and reuses them on the next run (the export
is then not re-timed): for measuring the adoption again after a change without rebuilding the artifact —
valid only while the index's schema and versions are unchanged (a refused artifact fails the run).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import p50, sdist, table, wait_ready

CPL = [sys.executable, "-m", "codeplane.cli"]
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
RUNS = 3


def git(root: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True, text=True).stdout


def make_base(source: Path, root: Path) -> None:
    shutil.copytree(source, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "django 5.2.8")


def advance(root: Path) -> int:
    """One commit changing 200 files: 120 modified, 40 added, 20 deleted, 20 renamed."""
    files = sorted(p for p in git(root, "ls-files", "django").splitlines() if p.endswith(".py"))
    step = len(files) // 200
    picked = files[::step][:160]
    modified, deleted, renamed = picked[:120], picked[120:140], picked[140:160]
    for path in modified:
        with (root / path).open("a", encoding="utf-8") as handle:
            handle.write("\n\ndef _artifact_bench_helper(value):\n    return value\n")
    for n in range(40):
        (root / "django" / f"bench_added_{n}.py").write_text(f"def added_{n}(x):\n    return x + {n}\n")
    for path in deleted:
        git(root, "rm", "-q", path)
    for path in renamed:
        git(root, "mv", path, path[:-3] + "_renamed.py")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "200 changed files")
    return len(modified) + 40 + len(deleted) + len(renamed)


def clone(base: Path, dest: Path) -> Path:
    git(base.parent, "clone", "-q", str(base), str(dest))
    return dest


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and every live descendant, from ``/proc`` (0 where there is none)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    stats: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # after the command: state, ppid, ..., utime (12th), stime, cutime, cstime
        stats[int(entry.name)] = (int(fields[1]), sum(int(f) for f in fields[11:15]) / ticks)
    total, frontier = 0.0, [pid]
    while frontier:
        current = frontier.pop()
        total += stats.get(current, (0, 0.0))[1]
        frontier += [child for child, (parent, _) in stats.items() if parent == current]
    return total


def up_to_ready(root: Path, *extra: str) -> tuple[float, float, dict[str, Any]]:
    """Seconds from spawning `cpl up` to `/ready` 200, the server's CPU seconds by then, and the index status."""
    began = time.perf_counter()
    errors = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - read back if the server dies
    proc = subprocess.Popen([*CPL, "up", str(root), "--port", "0", "--json", *extra], stdout=subprocess.PIPE,
                            stderr=errors, text=True)

    def died() -> RuntimeError:
        errors.seek(0)
        return RuntimeError(f"cpl up exited {proc.returncode}: {errors.read()[-3000:]}")

    # One client for every poll: a bare httpx.get builds a client (and its TLS context) each time, ≈25 ms of
    # this process's CPU per poll — most of a core taken from the server being timed on a 2-core machine.
    client = httpx.Client(timeout=5)
    try:
        assert proc.stdout is not None
        port = None
        while port is None:
            line = proc.stdout.readline()
            if line.startswith("{") and json.loads(line).get("event") == "ready":
                port = int(json.loads(line)["port"])
            elif not line and proc.poll() is not None:
                raise died()
        try:
            wait_ready(client, f"http://127.0.0.1:{port}", alive=lambda: proc.poll() is None)
        except RuntimeError:
            raise died() from None
        seconds = time.perf_counter() - began
        cpu = _tree_cpu(proc.pid)
        status = client.get(f"http://127.0.0.1:{port}/status", timeout=10).json()
        return seconds, cpu, status["sections"]["index"] if "sections" in status else status["index"]
    finally:
        client.close()
        proc.terminate()
        proc.wait(timeout=60)


def _prepare(tmp: Path) -> tuple[Path, Path, float | None, tuple[bool, float] | None, int]:
    """Base repository (one commit ahead of the artifact), the CI clone, the artifact, export seconds and
    same-bytes check (``None`` when reused from an earlier run), and the number of changed files."""
    artifact = tmp / "store" / "index.tar.zst"
    ci = tmp / "ci"
    if (tmp / "prepared").is_file():
        return ci, artifact, None, None, int((tmp / "prepared").read_text())
    make_base(sdist("django", "5.2.8"), tmp / "base")
    clone(tmp / "base", ci)
    began = time.perf_counter()
    subprocess.run([*CPL, "index", "export", str(ci), "--out", str(artifact), "--json"], check=True,
                   capture_output=True, text=True)
    export_s = time.perf_counter() - began
    began = time.perf_counter()
    again = tmp / "store2" / "index.tar.zst"
    subprocess.run([*CPL, "index", "export", str(clone(tmp / "base", tmp / "ci2")), "--out", str(again),
                    "--json"], check=True, capture_output=True, text=True)
    same = (again.read_bytes() == artifact.read_bytes(), time.perf_counter() - began)
    changed = advance(tmp / "base")
    (tmp / "prepared").write_text(str(changed))
    return ci, artifact, export_s, same, changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS, help="adoptions to time (default %(default)s)")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-build baseline")
    parser.add_argument("--scratch", type=Path, help="keep (and reuse) the repositories and artifact here")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent, check=True,
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=Path(__file__).parent,
                           check=True, capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="cpl-artifact-") as scratch:
        tmp = args.scratch.resolve() if args.scratch else Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        ci, artifact, export_s, same, changed = _prepare(tmp)
        stamp = time.time_ns()
        load_before = os.getloadavg()[0]
        adopted: list[float] = []
        pinned: list[float] = []
        sha = artifact.with_name(artifact.name + ".sha256").read_text().split()[0]
        cpu: list[float] = []
        adopt_ms: list[int] = []
        reconcile_ms: list[int] = []
        cold: list[tuple[float, float]] = []
        reconcile: dict[str, Any] = {}
        for run in range(args.runs):
            dest = clone(tmp / "base", tmp / f"adopt{stamp}-{run}")
            seconds, used, status = up_to_ready(dest, "--index-from", str(artifact))
            assert status["source"]["kind"] == "artifact", status["source"]
            adopted.append(seconds)
            cpu.append(used)
            reconcile = status["last_reconcile"]
            adopt_ms.append(status["source"]["adopt_ms"])
            reconcile_ms.append(reconcile["duration_ms"])
            shutil.rmtree(dest, ignore_errors=True)
            dest = clone(tmp / "base", tmp / f"pinned{stamp}-{run}")
            seconds, _, pinned_status = up_to_ready(dest, "--index-from", str(artifact),
                                                    "--set", f"index.artifact_sha256={sha}")
            assert pinned_status["source"]["integrity"] == "after_ready", pinned_status["source"]
            pinned.append(seconds)
            shutil.rmtree(dest, ignore_errors=True)
            if run == 0 and not args.no_cold:
                dest = clone(tmp / "base", tmp / f"cold{stamp}")
                seconds, used, cold_status = up_to_ready(dest)
                assert cold_status["file_count"] == status["file_count"], (cold_status["file_count"],
                                                                           status["file_count"])
                cold.append((seconds, used))
                shutil.rmtree(dest, ignore_errors=True)
        load_after = os.getloadavg()[0]
        files = status["file_count"]
        size_mb = artifact.stat().st_size / 1e6
        db_mb = (ci / ".codeplane" / "index.db").stat().st_size / 1e6
    rows: list[list[object]] = [["artifact size, MB (the CI clone's index.db alone)", f"{size_mb:.1f} ({db_mb:.1f})"]]
    if export_s is not None and same is not None:
        rows += [["`cpl index export` (cold build + export), s", f"{export_s:.2f}"],
                 ["same commit exported from a second clone: same bytes?",
                  f"{'yes' if same[0] else 'NO'} ({same[1]:.2f} s)"]]
    rows += [
        ["changed files ahead of the artifact", changed],
        ["reconcile after adoption: added / modified / deleted / renamed / touched",
         f"{reconcile['added']} / {reconcile['modified']} / {reconcile['deleted']} / "
         f"{reconcile['renamed']} / {reconcile['touched']}"],
        [f"`cpl up --index-from` → /ready, s (p50 of {len(adopted)}; each run)",
         f"{p50(adopted):.2f} ({', '.join(f'{s:.2f}' for s in adopted)})"],
        [f"  pinned sha256 (integrity check after /ready), s (p50 of {len(pinned)}; each run)",
         f"{p50(pinned):.2f} ({', '.join(f'{s:.2f}' for s in pinned)})"],
        ["  CPU s used by then (server + workers; p50, each run)",
         f"{p50(cpu):.2f} ({', '.join(f'{s:.2f}' for s in cpu)})"],
        ["  of which: adoption (checks + swap), s", ", ".join(f"{ms / 1000:.2f}" for ms in adopt_ms)],
        ["  of which: startup reconcile (hash + reindex 200 files), s",
         ", ".join(f"{ms / 1000:.2f}" for ms in reconcile_ms)],
    ]
    if cold:
        rows += [["`cpl up`, cold build → /ready, s (CPU s) (baseline, same run)",
                  f"{cold[0][0]:.2f} ({cold[0][1]:.2f})"],
                 ["speed-up", f"{cold[0][0] / p50(adopted):.1f}x"]]
    version = f"{commit}{' + local changes' if dirty else ''}"
    table(f"Shared index artifact, Django 5.2.8 ({files:,} files; CodePlane {version}; "
          f"load {load_before:.1f} → {load_after:.1f} on {os.cpu_count()} cores)", ["measure", "value"], rows)


if __name__ == "__main__":
    main()
