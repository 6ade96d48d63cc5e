"""Source lines for impact selection, kept between selections while a file's size and mtime stay the same.

A symbol walk reads every file it reaches (decorators, keyword arguments, calls at import): on Django one
selection reaches about two thousand files, and reading them again for each selection cost more than the walk.
A stat per file is what stays.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path

#: Files kept (least recently used dropped first): a few walks' worth.
MAX_FILES = 8_192


class LineCache:
    """Thread-safe. ``lines(rel)``: the repo-relative file's lines, ``[]`` when unreadable."""

    def __init__(self, root: Path, max_files: int = MAX_FILES) -> None:
        self.root = root
        self._prefix = os.path.join(str(root), "")  # a string join: pathlib costs more than the stat
        self.max_files = max_files
        self._lock = threading.Lock()
        self._files: OrderedDict[str, tuple[tuple[int, int, int], list[str]]] = OrderedDict()

    def lines(self, rel: str) -> list[str]:
        path = self._prefix + rel
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            return []
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        with self._lock:
            known = self._files.get(rel)
            if known is not None and known[0] == stamp:
                self._files.move_to_end(rel)
                return known[1]
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                found = handle.read().splitlines()
        except (OSError, ValueError):
            return []
        with self._lock:
            self._files[rel] = (stamp, found)
            self._files.move_to_end(rel)
            while len(self._files) > self.max_files:
                self._files.popitem(last=False)
        return found
