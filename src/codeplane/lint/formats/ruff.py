"""``ruff check --output-format json``: a JSON array; 1-based columns; a fix with an applicability."""

from __future__ import annotations

import json
from typing import Any

from codeplane.lint.formats.paths import PathMap
from codeplane.lint.models import Diagnostic, Severity


def _severity(raw: Any) -> Severity:
    return "warning" if raw == "warning" else "info" if raw == "info" else "error"


def parse_ruff(text: str, paths: PathMap, *, tool: str = "ruff") -> list[Diagnostic]:
    """Raises ``ValueError`` when ``text`` is not ruff's JSON array."""
    records = json.loads(text or "[]")
    if not isinstance(records, list):
        raise ValueError("ruff JSON output is not an array")
    found: list[Diagnostic] = []
    for item in records:
        rel = paths.to_rel(str(item.get("filename") or ""))
        if rel is None:
            continue
        start = item.get("location") or {}
        end = item.get("end_location") or {}
        fix = item.get("fix")
        found.append(Diagnostic(
            path=rel, line=int(start.get("row") or 1), column=int(start.get("column") or 1),
            end_line=end.get("row"), end_column=end.get("column"),
            code=str(item.get("code") or ""), severity=_severity(item.get("severity")),
            message=str(item.get("message") or ""),
            # `ruff check --fix` applies safe fixes only (unless the repo enables unsafe ones).
            fixable=bool(fix) and fix.get("applicability") == "safe", tool=tool))
    return found
