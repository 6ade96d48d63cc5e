"""The quotes and semicolons a JS/TS file writes its import statements with, for the lines a move adds.

A move writes ``import { f } from './m';``; in immer (``} from "../internal"``, no semicolons, prettier's
``semi: false``) that line stood out, and a formatter check would fail on it. The file's own ``import``,
``export … from`` and ``require(…)`` lines decide, by majority: double or single quotes, a semicolon or none.
A file without any takes the majority of the modules the move reads (a new module takes the old one's style, or
theirs), and single quotes and semicolons where none has any.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FROM = re.compile(r"""^[^\n]*\bfrom\s+(['"])[^'"\n]*\1[ \t]*(;?)[ \t]*$""", re.MULTILINE)
_BARE = re.compile(r"""^[ \t]*import\s+(['"])[^'"\n]*\1[ \t]*(;?)[ \t]*$""", re.MULTILINE)
_REQUIRE = re.compile(r"""^[^\n]*=\s*require\((['"])[^'"\n]*\1\)[\w.$]*[ \t]*(;?)[ \t]*$""", re.MULTILINE)


@dataclass(frozen=True)
class JsStyle:
    quote: str = "'"
    semicolon: bool = True

    def line(self, statement: str) -> str:
        """A statement built as ``… '<spec>';`` (single quotes around the specifier alone, one semicolon at
        the end), in this style."""
        out = statement.replace("'", self.quote) if self.quote != "'" else statement
        return out[:-1] if not self.semicolon and out.endswith(";") else out

    def lines(self, text: str) -> str:
        return "\n".join(self.line(part) for part in text.split("\n"))


def file_style(text: str, fallback: JsStyle | None = None) -> JsStyle:
    """The style of ``text``'s import-like statements (``fallback``, or the default, where it has none)."""
    quotes = {"'": 0, '"': 0}
    semicolons = [0, 0]
    for pattern in (_FROM, _BARE, _REQUIRE):
        for match in pattern.finditer(text):
            quotes[match.group(1)] += 1
            semicolons[bool(match.group(2))] += 1
    if not any(semicolons):
        return fallback or JsStyle()
    return JsStyle('"' if quotes['"'] > quotes["'"] else "'", semicolons[1] >= semicolons[0])
