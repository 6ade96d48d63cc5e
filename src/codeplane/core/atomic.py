"""Small atomic file writes for CodePlane's own state files (port, pid, config).

Repository files are written by the mutation engine, never through this helper.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` via temp file + fsync + rename, so readers see old or new, never half. A directory
    standing where the state file belongs is damage and is replaced (``os.replace`` onto it failed: 9001)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_state_path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def remove_state_path(path: Path) -> bool:
    """Remove what stands at one of CodePlane's own state-file paths (a directory there is damage, removed whole);
    True when something was there. Never called with a repository path."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
        return True
    if os.path.lexists(path):
        path.unlink()
        return True
    return False
