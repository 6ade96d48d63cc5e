"""``biome lint --reporter=json`` (Biome 2; Biome calls the reporter experimental): ``diagnostics`` with a
category (the rule), a severity, a description and a location whose span is a UTF-8 byte range into the
``sourceCode`` the record carries; lines and 1-based columns are computed from that text. A diagnostic
is fixable when Biome offers a *safe* fix (the only kind ``biome lint --write`` applies)."""

from __future__ import annotations

import json
from typing import Any

from codeplane.lint.formats.paths import PathMap
from codeplane.lint.models import Diagnostic, Severity

_SEVERITY: dict[str, Severity] = {"fatal": "error", "error": "error", "warning": "warning"}


def _position(source: bytes, offset: int) -> tuple[int, int]:
    """1-based line and 1-based character column of byte ``offset``."""
    offset = max(0, min(offset, len(source)))
    line_start = source.rfind(b"\n", 0, offset) + 1
    column = len(source[line_start:offset].decode("utf-8", errors="replace")) + 1
    return source.count(b"\n", 0, offset) + 1, column


def _safe_fix(record: dict[str, Any]) -> bool:
    advices = ((record.get("advices") or {}).get("advices")) or []
    for advice in advices:
        log = advice.get("log") if isinstance(advice, dict) else None
        if isinstance(log, list) and len(log) == 2 and isinstance(log[1], list):
            text = "".join(str(part.get("content", "")) for part in log[1] if isinstance(part, dict))
            if text.startswith("Safe fix"):
                return True
    return False


def parse_biome(text: str, paths: PathMap, *, tool: str = "biome") -> list[Diagnostic]:
    """Raises ``ValueError`` when ``text`` is not Biome's JSON report."""
    start = text.find("{")
    report = json.loads(text[start:] if start >= 0 else "{}")
    if not isinstance(report, dict):
        raise ValueError("biome JSON output is not an object")
    found: list[Diagnostic] = []
    for record in report.get("diagnostics") or []:
        location = record.get("location") or {}
        path = (location.get("path") or {}).get("file") if isinstance(location.get("path"), dict) else None
        span, source = location.get("span"), location.get("sourceCode")
        rel = paths.to_rel(str(path)) if path else None
        if rel is None or not isinstance(span, list) or len(span) != 2 or not isinstance(source, str):
            continue  # configuration and internal messages carry no position in a file
        data = source.encode("utf-8")
        line, column = _position(data, int(span[0]))
        end_line, end_column = _position(data, int(span[1]))
        found.append(Diagnostic(
            path=rel, line=line, column=column, end_line=end_line, end_column=end_column,
            code=str(record.get("category") or ""), severity=_SEVERITY.get(str(record.get("severity")), "info"),
            message=str(record.get("description") or ""), fixable=_safe_fix(record), tool=tool))
    return found
