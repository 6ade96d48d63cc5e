"""Glob patterns as Jest (micromatch) and Vitest (tinyglobby/picomatch) write them, as Python regexes.

Supported: ``**`` (any directories), ``*`` and ``?`` (within a segment), ``[…]`` classes, ``{a,b}`` alternatives
and the extglobs ``?(…)``, ``*(…)``, ``+(…)``, ``@(…)``. ``!(…)`` and a leading ``!`` raise ``re.error``: the
caller treats the setting as unread rather than guess.
"""

from __future__ import annotations

import re


def glob_regex(glob: str) -> re.Pattern[str]:
    """A regex matching a whole path (``pattern.match``) exactly when ``glob`` does."""
    if glob.startswith("!"):
        raise re.error(f"negated glob {glob!r}")
    return re.compile(_convert(glob) + r"\Z")


def _convert(glob: str) -> str:
    out: list[str] = []
    #: Open groups: "{" (``,`` separates) or "(" (``|`` separates), each with its extglob suffix.
    stack: list[tuple[str, str]] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        nxt = glob[i + 1] if i + 1 < len(glob) else ""
        if char == "\\" and nxt:
            out.append(re.escape(nxt))
            i += 2
            continue
        if char in "?*+@!" and nxt == "(":
            if char == "!":
                raise re.error(f"negated extglob in {glob!r}")
            stack.append(("(", {"?": "?", "*": "*", "+": "+", "@": ""}[char]))
            out.append("(?:")
            i += 2
            continue
        if char == "*" and nxt == "*":
            at_start = i == 0 or glob[i - 1] == "/"
            at_end = i + 2 == len(glob) or glob[i + 2] == "/"
            if at_start and at_end:
                if i + 2 < len(glob):  # ``**/``: zero or more directories
                    out.append("(?:[^/]*/)*")
                    i += 3
                else:  # trailing ``**``: anything below
                    out.append(".*")
                    i += 2
                continue
            out.append("[^/]*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = glob.find("]", i + 2)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = glob[i + 1:end]
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end
        elif char == "{":
            stack.append(("{", ""))
            out.append("(?:")
        elif (char == "," and stack and stack[-1][0] == "{") or (char == "|" and stack and stack[-1][0] == "("):
            out.append("|")
        elif (char == "}" and stack and stack[-1][0] == "{") or (char == ")" and stack and stack[-1][0] == "("):
            out.append(")" + stack.pop()[1])
        else:
            out.append(re.escape(char))
        i += 1
    if stack:
        raise re.error(f"unclosed group in {glob!r}")
    return "".join(out)
