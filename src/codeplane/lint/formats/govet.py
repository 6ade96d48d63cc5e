"""``go vet -json``: on stderr, ``# package`` lines each followed by a JSON object
``{package: {analyzer: [{posn: "file:line:col", message, end?}]}}``.

A package that does not type-check has no JSON: vet prints the compiler's ``file:line:col: message``
lines instead (the only machine-readable form there is), which become ``typecheck`` diagnostics.
"""

from __future__ import annotations

import json
import re

from codeplane.lint.formats.paths import PathMap
from codeplane.lint.models import Diagnostic

_POSN = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::(?P<col>\d+))?$")
_COMPILER = re.compile(r"^(?:vet: )?(?P<file>[^\s:][^:]*\.go):(?P<line>\d+):(?P<col>\d+): (?P<msg>.+)$")


def _objects(text: str) -> list[object]:
    decoder = json.JSONDecoder()
    found: list[object] = []
    at = text.find("{")
    while at >= 0:
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            at = text.find("{", at + 1)
            continue
        found.append(value)
        at = text.find("{", end)
    return found


def parse_go_vet(text: str, paths: PathMap, *, tool: str = "go vet") -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for obj in _objects(text):
        if not isinstance(obj, dict):
            continue
        for analyzers in obj.values():
            if not isinstance(analyzers, dict):
                continue
            for analyzer, items in analyzers.items():
                if not isinstance(items, list):
                    continue  # {"error": "..."} for a package vet could not analyse
                for item in items:
                    match = _POSN.match(str(item.get("posn") or ""))
                    rel = paths.to_rel(match["file"]) if match else None
                    if match is None or rel is None:
                        continue
                    end = _POSN.match(str(item.get("end") or ""))
                    found.append(Diagnostic(
                        path=rel, line=int(match["line"]), column=int(match["col"] or 1),
                        end_line=int(end["line"]) if end else None,
                        end_column=int(end["col"]) if end and end["col"] else None,
                        code=str(analyzer), severity="warning", message=str(item.get("message") or ""),
                        tool=tool))
    for line in text.splitlines():
        compiler = _COMPILER.match(line.strip())
        rel = paths.to_rel(compiler["file"]) if compiler else None
        if compiler and rel is not None:
            found.append(Diagnostic(path=rel, line=int(compiler["line"]), column=int(compiler["col"]),
                                    code="typecheck", severity="error", message=compiler["msg"], tool=tool))
    return found
