"""mypy's ``-O json`` (mypy >= 1.11): one JSON object per line; columns 0-based (shifted to 1-based here).

Other lines (a summary, a crash message) are not diagnostics and are skipped; the caller decides from the
exit code whether the run failed.
"""

from __future__ import annotations

import json

from codeplane.lint.formats.paths import PathMap
from codeplane.lint.models import Diagnostic


def _one_based(column: object) -> int:
    return max(int(column) + 1, 1) if isinstance(column, int) else 1


def parse_mypy(text: str, paths: PathMap, *, tool: str = "mypy") -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        rel = paths.to_rel(str(item.get("file") or ""))
        if rel is None:
            continue
        end_line = item.get("end_line")
        end_column = item.get("end_column")
        message = str(item.get("message") or "")
        if item.get("hint"):
            message += f" ({item['hint']})"
        found.append(Diagnostic(
            path=rel, line=max(int(item.get("line") or 1), 1), column=_one_based(item.get("column")),
            end_line=end_line if isinstance(end_line, int) and end_line > 0 else None,
            end_column=_one_based(end_column) if isinstance(end_column, int) and end_column >= 0 else None,
            code=str(item.get("code") or ""), severity="info" if item.get("severity") == "note" else "error",
            message=message, tool=tool))
    return found
