"""Where a test file requests a pytest fixture by a name written as a string (issue 22, ``impact_symbols.py``).

pytest reads a fixture's name from a string in a few places only: a ``usefixtures`` mark, ``getfixturevalue``
(``getfuncargvalue`` before pytest 4) and the argument names of a ``parametrize`` mark with ``indirect``. The
same name elsewhere is data (attrs' ``options = ["slots", "frozen"]``: keyword names of ``attr.s``), which
requests nothing. Read from the file's syntax tree.

Any doubt answers None (every string so spelled counts, as before): a file that does not parse, one such call
whose argument is not a string literal (``request.getfixturevalue(name)``: the name may come from any string),
and a file touching ``fixturenames`` or adding marks by hand (``add_marker``).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

#: Calls whose string arguments are fixture names.
_BY_NAME = frozenset({"usefixtures", "getfixturevalue", "getfuncargvalue"})


def fixture_requests(lines: Sequence[str]) -> dict[str, frozenset[int]] | None:
    """Fixture name → the lines of the string literals in ``lines`` requesting it; None when that cannot be
    told."""
    text = "\n".join(lines)
    if "fixturenames" in text or "add_marker" in text:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found: dict[str, set[int]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if called in _BY_NAME:
            requested: list[ast.expr] = list(node.args) + [k.value for k in node.keywords]
        elif called == "parametrize" and any(k.arg == "indirect" for k in node.keywords):
            requested = node.args[:1] + [k.value for k in node.keywords if k.arg in ("argnames", "indirect")]
        else:
            continue
        for arg in requested:
            if called in _BY_NAME and not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                return None  # a name from elsewhere: a variable, an expression
            for n in ast.walk(arg):
                if isinstance(n, ast.Constant) and isinstance(n.value, str):
                    for part in n.value.split(","):  # ``parametrize("a, b", ...)``: one name each
                        found.setdefault(part.strip(), set()).add(n.lineno)
    return {k: frozenset(v) for k, v in found.items()}
