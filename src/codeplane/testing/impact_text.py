"""Questions about one line of Python source that the symbol-level impact walk asks (``impact_symbols.py``).

The index records where a name is used, not the syntax around it; these read the line's text at the use's column.
Each is conservative in the walk's sense: when the text does not show it plainly, the answer keeps the test.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Sequence

WORD = re.compile(r"[A-Za-z_]\w*")
_LAST_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*$")
#: Text before a name that puts it in an annotation: ``name: ...`` or ``self.name: ...`` (no ``=`` yet) or
#: ``-> ...``. A keyword before the colon opens a block (``else: return K``), never an annotation.
_ANNOTATION = re.compile(r"(?:(?:^|[(,])\s*\*{0,2}(?!(?:else|try|finally|lambda|except|match|case)\b)"
                         r"[A-Za-z_][\w.]*\s*:[^=:]*|->[^:]*)$")
#: ``lambda args:`` (the parameters hold no colon unless annotated, which a lambda's cannot be).
_LAMBDA = re.compile(r"\blambda\b[^:]*:")
_ASSIGNED = re.compile(r"^\s*[A-Za-z_][\w.]*\s*(?::[^=]*)?=\s*$")
#: ``return `` and a plain dotted prefix (``return validators.``) before a name.
_RETURN = re.compile(r"^\s*return\s+(?:[A-Za-z_]\w*\s*\.\s*)*$")
#: Lines a returned call may span.
_CALL_LINES = 40


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
        if j >= 0 and (text[j].isalnum() or text[j] == "_"):
            # Only a keyword stands before a name with nothing but blanks between (``return os.environ``,
            # ``not os.path``, ``x or os.environ``); anything else is no plain dotted name we can read.
            before = _LAST_WORD.search(text, 0, j + 1)
            if before is None or not (keyword.iskeyword(before.group(0)) or keyword.issoftkeyword(before.group(0))):
                return None
            return start, dots
        if j >= 0 and text[j] in ")]}'\"":
            return None
        return start, dots


def calls_at(text: str, col: int) -> bool:
    """``name(`` at ``col``, or a decorator line (``@name``/``@x.name`` calls it; ``@name.setter`` calls an
    attribute of ``name``, not ``name``: a property's getter does not run when its setter is declared)."""
    word = WORD.match(text, col)
    if text.lstrip().startswith("@"):
        return word is None or not text[word.end():].lstrip().startswith(".")
    if word is None:
        return True
    rest = text[word.end():].lstrip()
    if rest.startswith("["):  # ``Generic[T](...)`` calls it too (flask's ``ConfigAttribute[bool]("TESTING")``)
        closed = _closing([rest], 0, 0)
        return closed is None or rest[closed[1] + 1:].lstrip().startswith("(")
    return rest.startswith("(")


def member_at(text: str, col: int) -> bool:
    """Whether the name at ``col`` is an attribute access (``x.name``)."""
    return text[:col].rstrip().endswith(".")


def callee_at(text: str, col: int) -> bool:
    """Whether the name at ``col`` is plainly called there (``name(``) on a line that is no decorator."""
    word = WORD.match(text, col)
    return word is not None and not text.lstrip().startswith("@") and text[word.end():].lstrip().startswith("(")


def returns_call(lines: Sequence[str], index: int, col: int) -> bool:
    """Whether the name at ``col`` of ``lines[index]`` is called as the whole of a ``return`` statement
    (``return Name(...)``, the call's arguments on as many lines as it takes, nothing after its closing
    parenthesis but a comment). Strings and comments are skipped; anything unclear answers False."""
    text = lines[index]
    word = WORD.match(text, col)
    if word is None or not _RETURN.match(text[:col]):
        return False
    rest = text[word.end():].lstrip()
    return rest.startswith("(") and _ends_statement(lines, index, len(text) - len(rest))


def _ends_statement(lines: Sequence[str], index: int, col: int) -> bool:
    """Whether the bracket opened at ``lines[index][col]`` closes with nothing after it but a comment."""
    closed = _closing(lines, index, col)
    if closed is None:
        return False
    row, i = closed
    tail = lines[row][i + 1:].strip()
    return not tail or tail.startswith("#")


def _closing(lines: Sequence[str], index: int, col: int) -> tuple[int, int] | None:
    """(line index, column) of the bracket closing the one at ``lines[index][col]``; strings and comments are
    skipped. None when it does not close within ``_CALL_LINES`` lines or the text is unclear."""
    depth = 0
    quote = ""
    row, i = index, col
    while row < len(lines) and row - index <= _CALL_LINES:
        text = lines[row]
        while i < len(text):
            ch = text[i]
            if quote:
                if ch == "\\":
                    i += 1
                elif text.startswith(quote, i):
                    i += len(quote) - 1
                    quote = ""
            elif ch in "\"'":
                quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else ch
                i += len(quote) - 1
            elif ch == "#":
                break
            elif ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
                if depth == 0:
                    return row, i
            i += 1
        if quote and len(quote) == 1:
            return None  # an unterminated one-line string: not Python we can read
        row, i = row + 1, 0
    return None


#: ``name =``, ``name: T =`` or an augmented ``name += ``, ``name |= `` at the start of what follows a binding.
_BINDING = re.compile(r"[A-Za-z_]\w*\s*(?::[^=]*)?(?P<op>[+|]?)=(?!=)\s*")
_SCALAR = re.compile(r"(?:-?\d[\d_]*(?:\.\d*)?(?:[eE][-+]?\d+)?|True|False|None"
                     r"""|[rRbBuUfF]{0,2}(?:"[^"\\]*"|'[^'\\]*'))\s*(?:#.*)?$""")


def bound_literal(lines: Sequence[str], index: int, col: int) -> str | None:
    """What the binding of the name at ``col`` of ``lines[index]`` stores, when the whole right-hand side is a
    literal: ``display`` (a list, dict or set display or comprehension), ``scalar`` (a number, a one-line
    string, ``True``/``False``/``None``), ``augmented`` (``name += ...``/``name |= ...``); None otherwise."""
    text = lines[index]
    found = _BINDING.match(text, col)
    if found is None:
        return None
    if found.group("op"):
        return "augmented"
    start = found.end()
    if start < len(text) and text[start] in "[{":
        return "display" if _ends_statement(lines, index, start) else None
    return "scalar" if _SCALAR.match(text, start) else None


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
