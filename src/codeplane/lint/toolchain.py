"""Where a linter's executable comes from: the project's own environment first, then CodePlane's, then PATH.

The repository's ``.venv/bin`` and ``node_modules/.bin`` (in the project directory, then at the root) win
because they hold the versions the project pins and its CI runs. CodePlane's own environment (the directory
of ``sys.executable``) comes next: ruff is a dependency of CodePlane, so a Python repository can always be
linted with no set-up. Nothing is ever installed or downloaded here (D1).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def own_bin_dir() -> Path:
    """The ``bin`` directory of the environment CodePlane runs in."""
    return Path(sys.executable).parent


def search_dirs(root: Path, project: str) -> list[Path]:
    """Directories searched before PATH for a project at repo-relative ``project``."""
    base = root if project == "." else root / project
    local = [base / ".venv" / "bin", base / "node_modules" / ".bin"]
    if base != root:
        local += [root / ".venv" / "bin", root / "node_modules" / ".bin"]
    return [*local, own_bin_dir()]


def find_executable(name: str, root: Path, project: str) -> str | None:
    for directory in search_dirs(root, project):
        candidate = directory / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def project_python(root: Path, project: str) -> str | None:
    """The project's own interpreter (``.venv/bin/python``), so a mypy from elsewhere sees its packages."""
    base = root if project == "." else root / project
    for candidate in (base / ".venv" / "bin" / "python", root / ".venv" / "bin" / "python"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None
