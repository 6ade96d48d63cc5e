"""Modification times that (whole-second mtime, size) caches can tell apart.

CPython's ``.pyc`` files and pytest's rewritten test modules record the source's mtime in whole seconds and
its size, and trust the cache while both match. A rewrite to the same size within the same second as the
version it replaces is invisible to them: the next test run imports the replaced version. Every writer of
repository files (the mutation engine, git's checkouts) gives such a rewrite the next whole second.
"""

from __future__ import annotations

_NS = 1_000_000_000


def distinct_mtime_ns(old_size: int, old_mtime_ns: int, new_size: int, new_mtime_ns: int) -> int | None:
    """The mtime a rewrite needs so its (whole second, size) differs from the replaced version's; ``None``
    when it already differs. Never earlier than the replaced version's: make-style tools compare by order."""
    if new_size != old_size or new_mtime_ns // _NS > old_mtime_ns // _NS:
        return None
    return (old_mtime_ns // _NS + 1) * _NS
