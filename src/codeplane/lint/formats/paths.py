"""Linters print absolute paths or paths relative to where they ran; diagnostics carry repo-relative ones."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PathMap:
    """Maps a path a linter printed (absolute, or relative to ``cwd``) into the repository at ``root``."""

    root: Path
    cwd: Path

    def to_rel(self, printed: str) -> str | None:
        """The repo-relative POSIX path, or ``None`` when it lies outside the repository."""
        if not printed:
            return None
        candidate = Path(printed)
        if not candidate.is_absolute():
            candidate = self.cwd / candidate
        real_root = self.root.resolve()
        normal = Path(os.path.normpath(candidate))
        for base in (self.root, real_root):
            try:
                rel = normal.relative_to(base).as_posix()
            except ValueError:
                continue
            return None if rel == "." or rel.startswith("../") else rel
        return None
