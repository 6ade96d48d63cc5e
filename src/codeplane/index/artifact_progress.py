"""What ``cpl up`` is downloading before its server listens, for ``cpl status`` (another process) to say.

``cpl up --index-from URL`` downloads the artifact before it binds its port (``cli/artifact_prefetch.py``), so for
that long there is no port or pid file and ``/health`` cannot answer: without this, ``cpl status`` said "not running"
of a process busy downloading (QA62 #5). The download records itself in ``.codeplane/artifact-cache/fetching.json``
(its pid, the redacted source, bytes so far and the total when known), at most every :data:`EVERY_SEC`, and
removes it when it ends; a record whose process is gone (``SIGKILL``) is ignored and removed by the next sweep.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from codeplane.core.clock import iso_utc, now_ms

#: Under ``.codeplane/``: the downloads (``artifact_fetch.py``) and this record.
CACHE_DIR = "artifact-cache"
RECORD = "fetching.json"
#: How often the record is rewritten while bytes arrive.
EVERY_SEC = 0.5


def record(cache_dir: Path, *, source: str, done: int, total: int | None, started_ms: int) -> None:
    """Write the record (best effort: a download is not stopped for its progress report)."""
    body = {"pid": os.getpid(), "source": source, "bytes": done, "total": total, "started_at": iso_utc(started_ms),
            "started_ms": started_ms}
    path = cache_dir / RECORD
    temporary = cache_dir / f".{RECORD}.{os.getpid()}.tmp"
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps(body))
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)


def clear(cache_dir: Path) -> None:
    """Remove this process's record (another process's is left alone)."""
    found = _read(cache_dir / RECORD)
    if found is not None and found.get("pid") == os.getpid():
        (cache_dir / RECORD).unlink(missing_ok=True)


def in_progress(state_dir: Path) -> dict[str, Any] | None:
    """:func:`current` for the repository whose ``.codeplane/`` is ``state_dir`` (``cpl status``)."""
    return current(state_dir / CACHE_DIR)


def current(cache_dir: Path) -> dict[str, Any] | None:
    """The download in progress (``pid``, ``source``, ``bytes``, ``total``, ``started_at``, ``elapsed_sec``), or
    ``None``: none, or its process is gone."""
    found = _read(cache_dir / RECORD)
    if found is None or not _alive(found.get("pid")):
        return None
    started = found.pop("started_ms", None)
    if isinstance(started, int):
        found["elapsed_sec"] = round(max(0, now_ms() - started) / 1000, 1)
    return found


def sweep(cache_dir: Path) -> list[str]:
    """Remove a record its process left behind (killed); the names removed."""
    found = _read(cache_dir / RECORD)
    if (cache_dir / RECORD).exists() and (found is None or not _alive(found.get("pid"))):
        (cache_dir / RECORD).unlink(missing_ok=True)
        return [RECORD]
    return []


def _read(path: Path) -> dict[str, Any] | None:
    try:
        body = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process by that id: it exists
    return True
