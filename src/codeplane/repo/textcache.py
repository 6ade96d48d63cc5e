"""Decoded text of universe files, cached and validated by ``lstat`` on every read.

Search scans candidate files on every query; re-reading and decoding them dominates the cost, so text
is cached keyed by path and checked against size, mtime, inode and ctime each time (ctime as git does: a
rewrite of the same size whose mtime was put back, ``touch -r``/``cp -p`` style, changes only that, and search
answered from the old text). File timestamps are coarse (a few ms), so a file modified twice within one tick keeps
its times: like git's "racy" rule, text whose times are younger than :data:`RACY_SEC` is never cached, and such
files are always re-read.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections import OrderedDict
from pathlib import Path

from codeplane.repo.content import decode, is_binary

RACY_SEC = 2.0
DEFAULT_CACHE_BYTES = 64 * 1024 * 1024


class TextCache:
    def __init__(self, root: Path, *, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self._root = str(root)
        self._max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[int, int, int, int, str]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def read(self, path: str) -> str | None:
        """Current decoded text of ``path``; ``None`` if missing, unreadable, not a regular file or binary."""
        absolute = os.path.join(self._root, path)
        try:
            st = os.lstat(absolute)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None  # never follow a symlink: it may point outside the repository
        key = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
        with self._lock:
            cached = self._entries.get(path)
            if cached is not None and cached[:4] == key:
                self._entries.move_to_end(path)
                return cached[4]
        try:
            fd = os.open(absolute, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        if is_binary(data):
            return None
        text = decode(data)
        if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > RACY_SEC * 1e9 and len(data) == st.st_size:
            self._store(path, (*key, text), len(data))
        return text

    def _store(self, path: str, entry: tuple[int, int, int, int, str], size: int) -> None:
        if size > self._max_bytes // 8:
            return
        with self._lock:
            old = self._entries.pop(path, None)
            if old is not None:
                self._bytes -= old[0]
            self._entries[path] = entry
            self._bytes += size
            while self._bytes > self._max_bytes and self._entries:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted[0]
