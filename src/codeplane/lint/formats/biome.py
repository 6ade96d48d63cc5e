"""``biome lint --reporter=json`` (Biome 2; Biome calls the reporter experimental, and its record shape
changed within 2.x). Both shapes are read:

* Biome 2.3: a ``description``, and a ``location`` with ``path.file`` and a ``span`` that is a UTF-8 byte range
  into the ``sourceCode`` the record carries; lines and 1-based columns are computed from that text.
* Biome 2.6: a ``message``, and a ``location`` with a ``path`` string and ``start``/``end`` line and 1-based
  column objects (``end`` exclusive).

A diagnostic is fixable when Biome offers a *safe* fix (the only kind ``biome lint --write`` applies)."""

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


def _advice_text(advice: Any) -> str:
    if not isinstance(advice, dict):
        return ""
    if isinstance(advice.get("text"), str):  # 2.6: {"start", "end", "text": "Safe fix: …"}
        return str(advice["text"])
    log = advice.get("log")  # 2.3: {"log": ["info", [{"content": "Safe fix: …"}]]}
    if isinstance(log, list) and len(log) == 2 and isinstance(log[1], list):
        return "".join(str(part.get("content", "")) for part in log[1] if isinstance(part, dict))
    return ""


def _safe_fix(record: dict[str, Any]) -> bool:
    advices = record.get("advices")
    if isinstance(advices, dict):
        advices = advices.get("advices")
    return any(_advice_text(a).startswith("Safe fix") for a in advices or [])


def _message(record: dict[str, Any]) -> str:
    # 2.3 has the text in `description` (its `message` is a list of markup parts); 2.6 in `message`.
    for key in ("description", "message"):
        if isinstance(record.get(key), str):
            return str(record[key])
    return ""


def _point(raw: Any) -> tuple[int, int] | None:
    if isinstance(raw, dict) and isinstance(raw.get("line"), int) and isinstance(raw.get("column"), int):
        return int(raw["line"]), int(raw["column"])
    return None


def _range(location: dict[str, Any]) -> tuple[int, int, int, int] | None:
    """(line, column, end line, end column) of a record in either shape, ``None`` when it has no position."""
    start, end = _point(location.get("start")), _point(location.get("end"))
    if start is not None:
        return (*start, *(end or start))
    span, source = location.get("span"), location.get("sourceCode")
    if not isinstance(span, list) or len(span) != 2 or not isinstance(source, str):
        return None
    data = source.encode("utf-8")
    return (*_position(data, int(span[0])), *_position(data, int(span[1])))


def parse_biome(text: str, paths: PathMap, *, tool: str = "biome") -> list[Diagnostic]:
    """Raises ``ValueError`` when ``text`` is not Biome's JSON report (Biome printed none: it failed before
    linting, e.g. on a configuration error) or when it has file diagnostics in a shape read neither way."""
    start = text.find("{")
    if start < 0:
        raise ValueError("biome printed no JSON report")
    report = json.loads(text[start:])
    if not isinstance(report, dict) or not isinstance(report.get("diagnostics", []), list):
        raise ValueError("biome JSON output is not a report object")
    found: list[Diagnostic] = []
    unread = 0
    for record in report.get("diagnostics") or []:
        location = record.get("location") if isinstance(record, dict) else None
        if not isinstance(location, dict):
            continue
        raw_path = location.get("path")
        path = raw_path.get("file") if isinstance(raw_path, dict) else raw_path
        rel = paths.to_rel(path) if isinstance(path, str) and path else None
        where = _range(location)
        if rel is None or where is None:
            # Configuration and internal messages carry no position in a file; a file's record must.
            unread += rel is not None
            continue
        line, column, end_line, end_column = where
        found.append(Diagnostic(
            path=rel, line=line, column=column, end_line=end_line, end_column=end_column,
            code=str(record.get("category") or ""), severity=_SEVERITY.get(str(record.get("severity")), "info"),
            message=_message(record), fixable=_safe_fix(record), tool=tool))
    if unread and not found:
        raise ValueError(f"{unread} diagnostic(s) in a record shape CodePlane does not know")
    return found
