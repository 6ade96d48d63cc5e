"""Shared benchmark plumbing: pinned sdist downloads into a git-ignored cache, timing, tables."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"


def sdist(name: str, version: str) -> Path:
    """Download (once) and unpack a pinned PyPI source distribution; returns the unpacked directory."""
    CACHE.mkdir(exist_ok=True)
    target = CACHE / f"{name}-{version}"
    if target.is_dir():
        return target
    dl = CACHE / "downloads"
    dl.mkdir(exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                    "-d", str(dl), f"{name}=={version}"], check=True, capture_output=True)
    archive = next(p for p in dl.iterdir() if p.name.lower().startswith(name.lower().replace("-", "_"))
                   or p.name.lower().startswith(name.lower()))
    with tarfile.open(archive) as tar:
        tar.extractall(CACHE, filter="data")
    unpacked = next(p for p in CACHE.iterdir() if p.is_dir() and p.name.lower().replace("_", "-")
                    == f"{name}-{version}".lower())
    if unpacked != target:
        unpacked.rename(target)
    return target


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        out.append((time.perf_counter() - began) * 1000.0)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def p50(values: list[float]) -> float:
    return statistics.median(values)


def table(title: str, header: list[str], rows: list[list[object]]) -> None:
    print(f"\n## {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(f"{c:.2f}" if isinstance(c, float) else str(c) for c in row) + " |")


def dump_json(name: str, payload: object) -> None:
    CACHE.mkdir(exist_ok=True)
    (CACHE / f"{name}.json").write_text(json.dumps(payload, indent=2))
