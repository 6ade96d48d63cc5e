"""``ruff check --output-format json``: a JSON array; 1-based columns; a fix with an applicability. In a Jupyter
notebook, rows count from the start of the ``cell`` the record names."""

from __future__ import annotations

import json
from typing import Any

from codeplane.lint.formats.paths import PathMap
from codeplane.lint.formats.ruffconfig import UnsafeFixes
from codeplane.lint.models import Diagnostic, Severity


def _severity(raw: Any) -> Severity:
    return "warning" if raw == "warning" else "info" if raw == "info" else "error"


def parse_ruff(text: str, paths: PathMap, *, tool: str = "ruff") -> list[Diagnostic]:
    """Raises ``ValueError`` when ``text`` is not ruff's JSON array."""
    records = json.loads(text or "[]")
    if not isinstance(records, list):
        raise ValueError("ruff JSON output is not an array")
    found: list[Diagnostic] = []
    unsafe = UnsafeFixes(paths.root)
    for item in records:
        rel = paths.to_rel(str(item.get("filename") or ""))
        if rel is None:
            continue
        start = item.get("location") or {}
        end = item.get("end_location") or {}
        fix = item.get("fix")
        applicability = fix.get("applicability") if isinstance(fix, dict) else None
        cell = item.get("cell")
        found.append(Diagnostic(
            path=rel, line=int(start.get("row") or 1), column=int(start.get("column") or 1),
            end_line=end.get("row"), end_column=end.get("column"),
            cell=cell if isinstance(cell, int) else None,
            code=str(item.get("code") or ""), severity=_severity(item.get("severity")),
            message=str(item.get("message") or ""),
            # What `ruff check --fix` applies: safe fixes, and unsafe ones where the config says `unsafe-fixes`.
            fixable=applicability == "safe" or (applicability == "unsafe" and unsafe.enabled(rel)), tool=tool))
    return found
