"""Whether ruff's own configuration enables unsafe fixes for a file (``unsafe-fixes = true``).

ruff's JSON report gives each fix's applicability but not that setting, which decides whether
``ruff check --fix`` applies the ``unsafe`` ones. It is found the way ruff finds a file's settings: the
closest directory holding ``.ruff.toml``, ``ruff.toml`` or a ``pyproject.toml`` with a ``[tool.ruff]`` table,
following ``extend``. A configuration outside the repository (the user's) is not read.
"""

from __future__ import annotations

import posixpath
import tomllib
from pathlib import Path
from typing import Any

_NAMES = (".ruff.toml", "ruff.toml", "pyproject.toml")
_MAX_EXTENDS = 16


def _table(path: Path) -> dict[str, Any] | None:
    """The ruff settings in ``path``, ``None`` when it has none (a pyproject.toml without ``[tool.ruff]``)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if path.name != "pyproject.toml":
        return data
    table = data.get("tool", {}).get("ruff") if isinstance(data.get("tool"), dict) else None
    return table if isinstance(table, dict) else None


def _unsafe(path: Path, table: dict[str, Any]) -> bool:
    """``unsafe-fixes`` of ``table`` (read from ``path``), else of the configuration it extends."""
    for _ in range(_MAX_EXTENDS):
        if "unsafe-fixes" in table:
            return table["unsafe-fixes"] is True
        extend = table.get("extend")
        if not isinstance(extend, str):
            return False
        path = (path.parent / Path(extend).expanduser()).resolve()
        extended = _table(path)
        if extended is None:
            return False
        table = extended
    return False


class UnsafeFixes:
    """Answers per repo-relative file path; cached per directory, for one report."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._dirs: dict[str, bool] = {}

    def enabled(self, rel: str) -> bool:
        return self._dir(posixpath.dirname(rel))

    def _dir(self, directory: str) -> bool:
        if directory in self._dirs:
            return self._dirs[directory]
        answer: bool | None = None
        for name in _NAMES:
            path = self.root / directory / name
            table = _table(path) if path.is_file() else None
            if table is not None:
                answer = _unsafe(path, table)
                break
        if answer is None:
            answer = self._dir(posixpath.dirname(directory)) if directory not in ("", ".") else False
        self._dirs[directory] = answer
        return answer
