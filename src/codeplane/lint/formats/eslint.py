"""``eslint -f json``: an array of file results, each with messages (1-based columns, severity 1 or 2)."""

from __future__ import annotations

import json

from codeplane.lint.formats.paths import PathMap
from codeplane.lint.models import Diagnostic


def eslint_results(text: str) -> list[dict[str, object]]:
    """The file results; raises ``ValueError`` when ``text`` is not eslint's JSON array."""
    start = text.find("[")
    records = json.loads(text[start:] if start >= 0 else "[]")
    if not isinstance(records, list):
        raise ValueError("eslint JSON output is not an array")
    return [r for r in records if isinstance(r, dict)]


def parse_eslint(text: str, paths: PathMap, *, tool: str = "eslint") -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for result in eslint_results(text):
        rel = paths.to_rel(str(result.get("filePath") or ""))
        messages = result.get("messages")
        if rel is None or not isinstance(messages, list):
            continue
        for msg in messages:
            if not msg.get("ruleId") and str(msg.get("message", "")).startswith("File ignored"):
                continue  # a path the caller named that the project's ignores exclude: not a finding
            code = msg.get("ruleId") or ("fatal" if msg.get("fatal") else "")
            found.append(Diagnostic(
                path=rel, line=max(int(msg.get("line") or 1), 1), column=max(int(msg.get("column") or 1), 1),
                end_line=msg.get("endLine"), end_column=msg.get("endColumn"), code=str(code),
                severity="error" if msg.get("severity") == 2 else "warning",
                message=str(msg.get("message") or ""), fixable="fix" in msg, tool=tool))
    return found
