"""Python bytecode caches that would serve a replaced version of a source file.

CPython's ``.pyc`` files and pytest's rewritten test modules (both in ``__pycache__`` beside the source)
record the source's mtime in whole seconds and its size, and are trusted while both match. A rewrite to
the same size within the same second as the version it replaces is invisible to them, and the next test
run would import the replaced version. Every writer of repository files (the mutation engine, git's
checkouts and resets) deletes those caches after such a rewrite. Deleting, not moving the mtime: a stamp
pushed to the next second would open the same window for the next writer in that second.
"""

from __future__ import annotations

import os
from pathlib import Path

from codeplane.core.logging import get_logger

log = get_logger(__name__)

_NS = 1_000_000_000


def indistinct(old_size: int, old_mtime_ns: int, new_size: int, new_mtime_ns: int) -> bool:
    """Whether a (whole-second mtime, size) cache cannot tell the new version from the old."""
    return new_size == old_size and new_mtime_ns // _NS == old_mtime_ns // _NS


def drop_cached_bytecode(source: Path) -> None:
    """Delete the cached bytecode of ``source`` (``__pycache__/<stem>.*.pyc``: CPython's for each
    interpreter and optimisation level, pytest's rewritten module). Module names hold no dot, so the
    pattern matches this module's caches only. Caches elsewhere (``PYTHONPYCACHEPREFIX``) are not seen."""
    if source.suffix != ".py":
        return
    cache = source.parent / "__pycache__"
    try:
        names = os.listdir(cache)
    except OSError:
        return
    prefix = source.stem + "."
    for name in names:
        if name.startswith(prefix) and name.endswith(".pyc"):
            try:
                os.unlink(cache / name)
            except FileNotFoundError:
                pass
            except OSError as exc:  # a cache it cannot delete must not fail the write that made it stale
                log.warning("cannot delete stale bytecode", path=str(cache / name), error=str(exc))
