"""Does a Python file still parse after the edit? An off-by-one span leaves a stray indented line, and nothing says
so until a test run fails in every file that imports it. The write still happens (an agent may pass through an
invalid state on purpose, across several calls); its answer warns, naming the error and its line. A file that did
not parse before (or uses syntax newer than this interpreter reads) is not warned about.

The check parses every written Python file with CPython's own parser, the only one that agrees with the interpreter
on what is a syntax error (the index's tree-sitter grammar accepts ``print "x"``, ``f() = 1``, ``def f(a=1, b)``), with
the cyclic collector paused: an AST has no cycles, and collecting while one is built only walks it (in a server's
heap, about a quarter of the parse of a big file). (Parsing on a thread beside the commit and the refresh was tried:
``ast.parse`` holds the GIL for a whole file, and the steps beside it took as long again.)
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterable

from codeplane.core.collector import collector_paused

_PYTHON = (".py", ".pyi")


def _parse_error(text: str) -> SyntaxError | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for an invalid escape is not ours to report
            # A leading BOM is the file's encoding mark, which Python reads as such; ``ast.parse`` of a str
            # would call it an invalid character.
            ast.parse(text.removeprefix("\ufeff"))
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError):
        return None  # a NUL byte, absurd nesting: not the edit's syntax error to report
    return None


def broken_python(path: str, old_text: str | None, new_text: str | None) -> str | None:
    """A warning when ``new_text`` of a Python file does not parse and ``old_text`` did (or the file is new)."""
    if new_text is None or not path.endswith(_PYTHON):
        return None
    error = _parse_error(new_text)
    if error is None or (old_text is not None and _parse_error(old_text) is not None):
        return None
    where = f"line {error.lineno}" if error.lineno else "somewhere"
    return f"{path} does not parse after this edit: {type(error).__name__}: {error.msg} ({where})"


#: (path, text before, text after) of one written file.
Written = tuple[str, str | None, str | None]


def python_warnings(files: Iterable[Written]) -> list[str]:
    """``broken_python`` of each file, in order, parsing with the cyclic collector paused."""
    with collector_paused():
        return [w for path, old, new in files if (w := broken_python(path, old, new))]
