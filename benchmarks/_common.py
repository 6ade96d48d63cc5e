"""Shared benchmark plumbing: pinned sdist downloads into a git-ignored cache, timing, tables."""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

CACHE = Path(__file__).resolve().parent / ".cache"
# Benchmarks call tools beyond the default `core` profile; servers they start inherit this (an explicit
# --profile or CODEPLANE__TOOLS__PROFILE of the caller wins).
os.environ.setdefault("CODEPLANE__TOOLS__PROFILE", "full")


def require(*programs: str) -> None:
    """Exit with what to install when a baseline's program is missing (``.ci/run`` installs them with apt; a
    benchmark run elsewhere would otherwise fail half-way with a parse error of the missing program's output)."""
    missing = [name for name in programs if shutil.which(name) is None]
    if missing:
        sys.exit(f"{', '.join(missing)} not found: the baseline needs it (Debian: apt-get install "
                 f"{' '.join('ripgrep' if m == 'rg' else m for m in missing)})")


def sdist(name: str, version: str) -> Path:
    """Download (once) and unpack a pinned PyPI source distribution; returns the unpacked directory."""
    CACHE.mkdir(exist_ok=True)
    target = CACHE / f"{name}-{version}"
    if target.is_dir():
        return target
    dl = CACHE / "downloads"
    dl.mkdir(exist_ok=True)
    archive = download_sdist(name, version, dl)
    return _unpack(archive, target, lambda p: p.name.lower().replace("_", "-") == f"{name}-{version}".lower())


def _unpack(archive: Path, target: Path, top: Callable[[Path], bool],
            prepare: Callable[[Path], None] | None = None) -> Path:
    """Unpack ``archive`` aside and rename its ``top`` directory into place as ``target`` (after ``prepare``):
    a concurrent benchmark must never see a half-unpacked tree."""
    with tempfile.TemporaryDirectory(dir=CACHE, prefix=f".unpack-{target.name}-") as scratch:
        with tarfile.open(archive) as tar:
            tar.extractall(scratch, filter="data")
        unpacked = next(p for p in Path(scratch).iterdir() if p.is_dir() and top(p))
        if prepare is not None:
            prepare(unpacked)
        try:
            unpacked.rename(target)
        except OSError:
            if not target.is_dir():  # another process won the race with the same content
                raise
    return target


def download_sdist(name: str, version: str, into: Path) -> Path:
    """Fetch the sdist from PyPI's simple index (JSON form) and check its sha256.

    No pip: the uv environment has none, and ``pip download`` would also resolve build deps.
    """
    import hashlib


    project = re.sub(r"[-_.]+", "-", name).lower()
    index = httpx.get(f"https://pypi.org/simple/{project}/", timeout=60, follow_redirects=True,
                      headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    index.raise_for_status()
    stem = re.compile(rf"^{re.escape(project).replace('-', '[-_.]')}-{re.escape(version)}\.(tar\.gz|zip)$", re.I)
    entry = next((f for f in index.json()["files"] if stem.match(f["filename"])), None)
    if entry is None:
        raise SystemExit(f"no sdist for {name}=={version} on PyPI")
    target = into / entry["filename"]
    if not target.exists():
        body = httpx.get(entry["url"], timeout=300, follow_redirects=True)
        body.raise_for_status()
        digest = hashlib.sha256(body.content).hexdigest()
        if digest != entry["hashes"]["sha256"]:
            raise SystemExit(f"sha256 mismatch for {entry['filename']}: {digest}")
        target.write_bytes(body.content)
    return target


def npm_package(name: str, version: str, prepare: Callable[[Path], None] | None = None) -> Path:
    """``npm pack`` a pinned tarball once (npm checks its integrity) and unpack it beside the sdists, as
    ``CACHE/<name>-<version>``; ``prepare`` runs on the unpacked tree before it takes that name (installing
    what its tests need), so a tree under the name is always complete."""
    target = CACHE / f"{name}-{version}"
    if target.is_dir():
        return target
    downloads = CACHE / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    archive = downloads / f"{name}-{version}.tgz"
    if not archive.exists():
        subprocess.run(["npm", "pack", f"{name}@{version}", "--pack-destination", str(downloads)], check=True,
                       capture_output=True)
    return _unpack(archive, target, lambda p: p.name == "package", prepare)


def project_venv(venv: Path, packages: list[str]) -> Path:
    """A virtualenv for running a benchmarked project's own tests (outside CodePlane's uv environment, which has
    no pip): made and filled with uv, the tool the README installs. Returns its python."""
    python = venv / "bin" / "python"
    if not python.exists():
        uv = os.environ.get("UV") or shutil.which("uv") or "uv"  # ``uv run`` names itself in $UV
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
        subprocess.run([uv, "pip", "install", "-q", "--python", str(python), *packages], check=True)
    return python


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


def wait_ready(client: httpx.Client, base: str, *, alive: Callable[[], bool] = lambda: True) -> None:
    """Return once ``base``'s ``/ready`` says 200: ``/ready?wait=`` holds each answer until the server is ready (or
    30 s), so the wait costs the server being timed nothing. Polling ``/ready`` did: at the 10–20 ms a figure of
    seconds needs, a third of a second of a cold Django build's 9 (two cores). ``alive`` says whether the server
    still runs; a server that died raises."""
    while True:
        if not alive():
            raise RuntimeError("the server exited before /ready")
        try:
            if client.get(f"{base}/ready", params={"wait": "30"}, timeout=40).status_code == 200:
                return
        except httpx.TimeoutException:  # a busy server (a 100k-file build on a loaded machine) may answer late
            continue
        except httpx.TransportError:  # not listening yet, or gone: ``alive`` says which
            time.sleep(0.05)


def dump_json(name: str, payload: object) -> None:
    CACHE.mkdir(exist_ok=True)
    (CACHE / f"{name}.json").write_text(json.dumps(payload, indent=2))


def start_cpl(root: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], int]:
    """``cpl up ROOT --port 0 --json [extra]`` from this interpreter; returns the process and its port once
    it announced ready (its stderr is discarded: benchmarks read answers, not logs)."""
    proc = subprocess.Popen([sys.executable, "-m", "codeplane.cli", "up", str(root), "--port", "0", "--json", *extra],
                            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"cpl up exited with {proc.wait()}")
        if line.startswith("{") and json.loads(line).get("event") == "ready":
            return proc, int(json.loads(line)["port"])
