"""``cpl doctor --logs``: one ``.tar.gz`` to attach to a bug report.

It holds the doctor's checks, the server's ``/status`` and live picture and its recent operations with
their span trees (when a server answers), the log files (each at most ``LOG_BYTES``, newest part kept) and
version facts. Written under ``.codeplane/reports/``; nothing is sent anywhere. File contents never enter
CodePlane's logs or traces (they hold paths, hashes and counts), so the bundle carries none either.
"""

from __future__ import annotations

import io
import json
import platform
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import httpx

from codeplane import __version__
from codeplane.cli.probe import auth_headers, probe
from codeplane.core.doctor import CheckResult
from codeplane.core.layout import RepoLayout
from codeplane.core.redaction import redact_urls

LOG_BYTES = 8 * 1024 * 1024
TRACES = 200


def _server_parts(layout: RepoLayout) -> dict[str, Any]:
    found = probe(layout)
    if not (found.running and found.answering and found.port):
        return {"server.json": {"running": found.running, "answering": found.answering, "error": found.error}}
    base = f"http://127.0.0.1:{found.port}"
    parts: dict[str, Any] = {"server.json": {"running": True, "pid": found.pid, "port": found.port}}
    client = httpx.Client(headers=auth_headers(layout), timeout=10)
    try:
        parts["status.json"] = client.get(f"{base}/status").json()
        parts["live.json"] = client.get(f"{base}/dashboard/api/live").json()
        ops = client.get(f"{base}/dashboard/api/operations", params={"limit": TRACES}).json()
        traces = []
        for op in ops.get("operations", []):
            response = client.get(f"{base}/dashboard/api/traces/{op['trace_id']}")
            if response.status_code == 200:
                traces.append(response.json())
        parts["traces.json"] = {"total": ops.get("total"), "kept": ops.get("kept"), "operations": traces}
    except (httpx.HTTPError, ValueError) as exc:
        parts["server.json"]["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        client.close()
    return parts


def _add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    info.mode = 0o600
    archive.addfile(info, io.BytesIO(data))


def write_bundle(root: Path, checks: list[CheckResult]) -> Path:
    """Write the bundle and return its path. Never raises for a missing server or log."""
    layout = RepoLayout(root)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out_dir = layout.state_dir / "reports"
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"codeplane-report-{stamp}.tar.gz"
    parts: dict[str, Any] = {
        "versions.json": {"codeplane": __version__, "python": sys.version, "platform": platform.platform()},
        "checks.json": [c.__dict__ for c in checks],
        **_server_parts(layout),
    }
    with tarfile.open(target, "w:gz") as archive:
        for name, value in parts.items():
            _add(archive, name, json.dumps(value, indent=2, default=str).encode("utf-8"))
        logs = sorted(layout.logs_dir.glob("codeplane.jsonl*")) if layout.logs_dir.is_dir() else []
        for log in logs:
            size = log.stat().st_size
            with log.open("rb") as handle:
                handle.seek(max(0, size - LOG_BYTES))
                # Lines an older version wrote may hold a configured URL's password: never into a bundle to share.
                text = handle.read().decode("utf-8", "surrogateescape")
                _add(archive, f"logs/{log.name}", redact_urls(text).encode("utf-8", "surrogateescape"))
    target.chmod(0o600)
    return target
