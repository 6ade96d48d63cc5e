"""The lines right above a definition that belong to it: decorators, annotations, attributes, doc comments.

The index spans a definition from its keyword (``def``, ``func``, ``fn``, ``class``); what is written above it
still says what it is: ``@cached_property`` makes ``App.name`` an attribute, not a method to call; ``#[derive]``
gives a Rust struct its traits; a Go or Rust doc comment is its documentation (and Rust compiles its examples).
Text-level and per line, as an editor folds them: the run of such lines directly above the definition, no
blank line between, at the definition's own indentation (a decorator's continuation lines may sit deeper).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

_HASH_COMMENTS = (".py", ".pyi", ".pyw", ".rb", ".sh", ".r")
_SLASH_COMMENTS = (".go", ".rs", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".java", ".kt",
                   ".kts", ".cs", ".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".swift", ".php", ".scala")
_CPP = (".cc", ".cpp", ".hpp", ".cxx", ".hh", ".hxx", ".h")


def decorated_start(lines: Sequence[str], start_line: int) -> int:
    """The first line of the decorators/annotations directly above a definition (or ``start_line``)."""
    return _head_start(lines, start_line, lambda stripped: stripped.startswith("@"), lambda stripped: False)


def _head_start(lines: Sequence[str], start_line: int, is_head: Callable[[str], bool],
                may_sit_between: Callable[[str], bool]) -> int:
    """Walks up from a definition over the lines at its indentation that ``is_head`` takes (decorators,
    attributes), the deeper or closing-bracket lines that continue them and the ones ``may_sit_between`` lets
    pass (comments); the topmost head's line, or ``start_line``."""
    if not 1 <= start_line <= len(lines):
        return start_line
    head = lines[start_line - 1]
    indent = len(head) - len(head.lstrip())
    top = start_line
    line_no = start_line - 1
    while line_no >= 1:
        text = lines[line_no - 1]
        stripped = text.strip()
        if not stripped:
            break
        depth = len(text) - len(text.lstrip())
        if depth == indent and is_head(stripped):
            top = line_no
        elif not (depth > indent or (depth == indent and (stripped[0] in ")]}" or may_sit_between(stripped)))):
            break  # neither a head, the continuation of one nor a line allowed among them
        line_no -= 1
    return top


def _attribute_head(path: str, stripped: str) -> bool:
    """Whether a line opens a decorator, annotation or attribute in ``path``'s language. One that ends like a
    statement (``@Input() a: string;``, ``#[test] fn a() {}``) is a definition of its own, not the next one's."""
    if stripped.endswith((";", "}")):
        return False
    if stripped.startswith("@"):
        return True
    if path.endswith((".rs", ".php")):
        return stripped.startswith("#[")  # never ``#![``: an inner attribute belongs to the enclosing item
    if path.endswith(".cs"):
        return stripped.startswith("[") and stripped.endswith("]")
    return path.endswith(_CPP) and stripped.startswith("[[")


def _comment(path: str, stripped: str) -> bool:
    if path.endswith(_HASH_COMMENTS):
        return stripped.startswith("#") and not stripped.startswith("#!")
    if path.endswith(".php") and stripped.startswith("#") and not stripped.startswith("#["):
        return True
    return path.endswith(_SLASH_COMMENTS) and stripped.startswith(("//", "/*", "*"))


def attributed_start(path: str, lines: Sequence[str], start_line: int) -> int:
    """The first line of the decorators, annotations or attributes directly above a definition (``@x``, Rust's
    and PHP's ``#[x]``, C#'s ``[X]``, C++'s ``[[x]]``), the comments between them and it included: all of it
    changes what the definition is (``#[cfg(...)]`` removes it from a build). A comment above the topmost one is
    not included, as ``decorated_start`` leaves it out. ``start_line`` when there is none."""
    return _head_start(lines, start_line, lambda stripped: _attribute_head(path, stripped),
                       lambda stripped: _comment(path, stripped))


def documented_start(path: str, lines: Sequence[str], start_line: int) -> int:
    """The first line of what belongs to a definition above it: decorators, then the comments, doc comments
    and (Rust) attributes directly above those, at the same indentation."""
    top = decorated_start(lines, start_line)
    if not 1 <= top <= len(lines):
        return top
    hash_comments = path.endswith(_HASH_COMMENTS)
    slash_comments = path.endswith(_SLASH_COMMENTS)
    rust = path.endswith(".rs")
    head = lines[start_line - 1]
    indent = len(head) - len(head.lstrip())
    line_no = top - 1
    while line_no >= 1:
        text = lines[line_no - 1]
        stripped = text.strip()
        depth = len(text) - len(text.lstrip())
        ours = stripped and depth >= indent and (
            (hash_comments and stripped.startswith("#") and not stripped.startswith("#!"))
            or (slash_comments and stripped.startswith(("//", "/*", "*")))
            or (rust and stripped.startswith("#[")))
        if not ours or depth < indent or (depth > indent and not stripped.startswith("*")):
            break
        top = line_no
        line_no -= 1
    return top
