"""Questions about one line of Python source that the symbol-level impact walk asks (``impact_symbols.py``).

The index records where a name is used, not the syntax around it; these read the line's text at the use's column.
Each is conservative in the walk's sense: when the text does not show it plainly, the answer keeps the test.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

WORD = re.compile(r"[A-Za-z_]\w*")
#: Text before a name that puts it in an annotation: ``name: ...`` (no ``=`` yet) or ``-> ...``.
_ANNOTATION = re.compile(r"(?:(?:^|[(,])\s*\*{0,2}[A-Za-z_]\w*\s*:[^=:]*|->[^:]*)$")
#: ``lambda args:`` (the parameters hold no colon unless annotated, which a lambda's cannot be).
_LAMBDA = re.compile(r"\blambda\b[^:]*:")
_ASSIGNED = re.compile(r"^\s*[A-Za-z_][\w.]*\s*(?::[^=]*)?=\s*$")


def dotted_root(text: str, col: int) -> tuple[int, int] | None:
    """(column of the root, number of dots) of the plain dotted name a member access at ``col`` hangs off
    (``os.path.`` before ``join``: ``os``, 2); None when a call, a subscript or a literal is in the chain."""
    dots = 0
    i = col
    while True:
        i -= 1
        while i >= 0 and text[i] in " \t":
            i -= 1
        if i < 0 or text[i] != ".":
            return None
        dots += 1
        i -= 1
        while i >= 0 and text[i] in " \t":
            i -= 1
        end = i + 1
        while i >= 0 and (text[i].isalnum() or text[i] == "_"):
            i -= 1
        start = i + 1
        if start == end or text[start].isdigit():
            return None
        j = i
        while j >= 0 and text[j] in " \t":
            j -= 1
        if j >= 0 and text[j] == ".":
            i = j + 1  # another link: the loop steps back over the dot
            continue
        if j >= 0 and (text[j].isalnum() or text[j] in "_)]}'\""):
            return None
        return start, dots


def calls_at(text: str, col: int) -> bool:
    """``name(`` at ``col``, or a decorator line (``@name``/``@x.name`` calls it)."""
    if text.lstrip().startswith("@"):
        return True
    word = WORD.match(text, col)
    return word is None or text[word.end():].lstrip().startswith("(")


def in_assigned_lambda(text: str, col: int) -> bool:
    """Whether ``col`` lies in the body of a lambda assigned on the line (``name = lambda ...: ...``): the
    body runs when the lambda is called, not where it is written. A lambda handed to a call may run there
    (``sorted(key=lambda ...)``), so only an assignment's counts, and only a body that visibly still runs
    to ``col`` (no comma or closing bracket of the lambda's own level in between)."""
    before = text[:col]
    found = None
    for match in _LAMBDA.finditer(before):
        found = match  # the last lambda opened before ``col``
    if found is None or not _ASSIGNED.match(before[:found.start()]):
        return False
    depth = 0
    for ch in before[found.end():]:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return False
        elif ch == "," and depth == 0:
            return False
    return True


def passive_at(text: str, col: int) -> bool:
    """A class named where none of its code runs: an annotation (``x: K``, ``-> K``, ``list[K]`` there),
    an ``isinstance``/``issubclass`` argument, an ``except`` clause."""
    before = text[:col]
    if text.lstrip().startswith("except") or _ANNOTATION.search(before):
        return True
    opened = max(before.rfind("isinstance("), before.rfind("issubclass("))
    return opened >= 0 and "," in before[opened:]


def keyword_at(text: str, col: int) -> bool:
    """A keyword argument's name (``f(prompt=...)``), which the index records as an unresolved name."""
    word = WORD.match(text, col)
    rest = text[word.end():].lstrip() if word else ""
    return rest.startswith("=") and not rest.startswith("==")


def header_end(lines: Sequence[str], start: int) -> int:
    """The last line of a class header starting at line ``start`` (its ``:``), looking at most 10 lines on."""
    last = start
    while last <= len(lines) and last < start + 10 and not lines[last - 1].rstrip().endswith(":"):
        last += 1
    return last
