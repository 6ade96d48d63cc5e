"""Linters print absolute paths or paths relative to where they ran; diagnostics carry repo-relative ones."""

from __future__ import annotations

import os
from pathlib import Path


class PathMap:
    """Maps a path a linter printed (absolute, or relative to ``cwd``) into the repository at ``root``.

    Answers are cached per printed path: a run prints the same few files thousands of times.
    """

    def __init__(self, root: Path, cwd: Path) -> None:
        self.root = root
        self.cwd = cwd
        self._bases = (str(root), str(root.resolve()))
        self._seen: dict[str, str | None] = {}

    def to_rel(self, printed: str) -> str | None:
        """The repo-relative POSIX path, or ``None`` when it lies outside the repository."""
        if printed in self._seen:
            return self._seen[printed]
        rel = self._map(printed) if printed else None
        self._seen[printed] = rel
        return rel

    def _map(self, printed: str) -> str | None:
        normal = os.path.normpath(printed if os.path.isabs(printed) else os.path.join(self.cwd, printed))
        for base in self._bases:
            inner = os.path.relpath(normal, base)
            if inner not in (".", "..") and not inner.startswith("../"):
                return Path(inner).as_posix()
        return None
