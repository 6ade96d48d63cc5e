"""cargo's ``--message-format json`` (``cargo clippy``): one JSON object per line; ``compiler-message``
records carry rustc's diagnostic with spans (1-based lines and columns, ``column_end`` exclusive)."""

from __future__ import annotations

import json

from codeplane.lint.formats.paths import PathMap
from codeplane.lint.models import Diagnostic, Severity

_SEVERITY: dict[str, Severity] = {"error": "error", "error: internal compiler error": "error", "warning": "warning"}


def parse_clippy(text: str, paths: PathMap, *, tool: str = "clippy") -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        message = record.get("message") if record.get("reason") == "compiler-message" else None
        if not isinstance(message, dict):
            continue
        primary = next((s for s in message.get("spans") or [] if s.get("is_primary")), None)
        if primary is None:
            continue  # "aborting due to previous error" and other span-less summaries
        rel = paths.to_rel(str(primary.get("file_name") or ""))
        if rel is None:
            continue
        code = message.get("code") or {}
        found.append(Diagnostic(
            path=rel, line=int(primary.get("line_start") or 1), column=int(primary.get("column_start") or 1),
            end_line=primary.get("line_end"), end_column=primary.get("column_end"),
            code=str(code.get("code") or "") if isinstance(code, dict) else "",
            severity=_SEVERITY.get(str(message.get("level")), "info"),
            message=str(message.get("message") or ""), tool=tool))
    return found
