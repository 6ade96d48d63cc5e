"""``tsc --noEmit --pretty false``: ``file(line,col): error TS1234: message`` lines, continuation lines
indented. tsc has no JSON output; this non-pretty form is the stable one editors' problem matchers read.
Lines without a file (a broken ``tsconfig.json``) are not diagnostics; the exit code marks that run failed.
"""

from __future__ import annotations

import re

from codeplane.lint.formats.paths import PathMap
from codeplane.lint.models import Diagnostic, Severity

_LINE = re.compile(r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+),(?P<col>\d+)\): (?P<level>error|warning|message) "
                   r"(?P<code>TS\d+): (?P<msg>.*)$")
_SEVERITY: dict[str, Severity] = {"error": "error", "warning": "warning", "message": "info"}


def parse_tsc(text: str, paths: PathMap, *, tool: str = "tsc") -> list[Diagnostic]:
    found: list[Diagnostic] = []
    pending: dict[str, object] | None = None
    for line in [*text.splitlines(), ""]:
        if pending is not None and line.startswith("  "):
            pending["message"] = f"{pending['message']} {line.strip()}"
            continue
        if pending is not None:
            found.append(Diagnostic.model_validate(pending))
            pending = None
        match = _LINE.match(line)
        rel = paths.to_rel(match["file"]) if match else None
        if match and rel is not None:
            pending = {"path": rel, "line": int(match["line"]), "column": int(match["col"]), "code": match["code"],
                       "severity": _SEVERITY[match["level"]], "message": match["msg"], "tool": tool}
    return found
