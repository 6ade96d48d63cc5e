"""The globs of ``scope.paths`` and ``list_files``' ``pattern``, read as ``rg -g`` reads its globs.

They are gitignore-style patterns over repo-relative paths (``*.py`` at any depth, ``src/`` a directory, ``/x``
anchored at the root; later globs win), with ``rg``'s additions, each of which answered a silent "no hits":

- a list of negations only (``!big.txt``) selects everything but what they name (``rg -g '!x'``);
- braces expand (``*.{py,txt}`` is ``*.py`` and ``*.txt``, nesting allowed; ``\\{`` is a literal brace);
- a leading ``./`` names the root, as ``/`` does (``./src/m.py``: ``read_source`` accepts that spelling too).

A glob that can match no repo-relative path (``../x``, ``//host``, ``C:``) is 1003, as is a brace left open.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pathspec

from codeplane.core.errors import CodePlaneError, ErrorCode

#: Most globs one list may expand to (``{a,b}{c,d}...`` multiplies).
MAX_EXPANDED = 1000


def _refused(index: int, glob: str, why: str) -> CodePlaneError:
    return CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"scope.paths: {glob!r} {why}",
                          details={"field": f"scope.paths.{index}", "glob": glob})


def _special(glob: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """``(index, character)`` of the characters of ``glob`` from ``start`` outside escapes and ``[...]`` sets."""
    at = start
    while at < len(glob):
        ch = glob[at]
        if ch == "\\":
            at += 2
            continue
        if ch == "[":
            first = at + 2 if glob[at + 1:at + 2] in ("!", "^") else at + 1
            close = glob.find("]", first + 1)  # a ``]`` first in the set is a member
            if close >= 0:
                at = close + 1
                continue
        yield at, ch
        at += 1


def _expand(glob: str) -> list[str] | None:
    """Every alternative of ``glob``'s braces; ``None`` for a brace left open."""
    opening = next((at for at, ch in _special(glob) if ch == "{"), None)
    if opening is None:
        return [glob]
    depth, bounds = 0, [opening]
    for at, ch in _special(glob, opening):
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 1:
            bounds.append(at)
        elif depth == 0:
            bounds.append(at)
            break
    else:
        return None
    found: list[str] = []
    for left, right in itertools.pairwise(bounds):
        expanded = _expand(glob[:opening] + glob[left + 1:right] + glob[bounds[-1] + 1:])
        if expanded is None:
            return None
        found += expanded
        if len(found) > MAX_EXPANDED:
            break
    return found


def rg_globs(globs: Sequence[str]) -> list[str]:
    """``globs`` as gitignore lines with ``rg``'s rules applied (see the module docstring); 1003 for a bad one."""
    lines: list[str] = []
    for index, glob in enumerate(globs):
        parts = glob.replace("\\", "/").split("/")
        if ".." in parts or glob.startswith("//") or (len(glob) > 1 and glob[1] == ":"):
            raise _refused(index, glob, "reaches outside the repository; globs match repo-relative paths")
        expanded = _expand(glob)
        if expanded is None:
            raise _refused(index, glob, "opens a brace it does not close (escape a literal one: \\{)")
        for line in expanded:
            negated = line.startswith("!")
            body = line[1:] if negated else line
            if body.startswith("./"):
                body = "/" + body[2:].lstrip("/") if body.strip("./") else "*"
            lines.append(("!" if negated else "") + body)
        if len(lines) > MAX_EXPANDED:
            raise _refused(index, glob, f"expands to over {MAX_EXPANDED} globs")
    if lines and all(line.startswith("!") for line in lines):
        lines.insert(0, "*")  # ``rg -g '!x'``: everything but x
    return lines


def scope_spec(globs: Sequence[str]) -> pathspec.PathSpec[Any] | None:
    """The matcher of ``globs`` (``None`` when there are none: every path)."""
    return pathspec.PathSpec.from_lines("gitignore", rg_globs(globs)) if globs else None


def path_matcher(globs: Sequence[str]) -> Callable[[str], bool] | None:
    """Whether a repo-relative path is selected by ``globs`` (``None`` when there are none: every path), as
    :func:`scope_spec` matches it, without ``pathspec``'s per-call normalisation (the paths asked about are already
    repo-relative with ``/``): a search's scope asks it of thousands of paths (6.5 ms for Django's, 1.4 here)."""
    spec = scope_spec(globs)
    if spec is None:
        return None
    # The last glob to match decides (gitignore's rule); a pattern with no ``include`` (a comment) decides nothing.
    deciding = [(bool(p.include), p.regex.search) for p in reversed(spec.patterns)
                if p.include is not None and p.regex is not None]

    def selected(path: str) -> bool:
        for include, search in deciding:
            if search(path) is not None:
                return include
        return False

    return selected
