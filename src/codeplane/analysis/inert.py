"""Whether two versions of a definition's own lines differ in comments and spacing alone (``comments_only``).

Such a change runs the same code, so ``semantic_diff`` lists it apart instead of sending it to review.
- Python: the two token streams without comments and blank lines are equal (a docstring counts: ``__doc__``,
  doctests; indentation counts: INDENT/DEDENT stay).
- Languages with a bundled tree-sitter grammar (JavaScript, TypeScript, Go, Rust, Java, C#, C, C++ ...): the two
  syntax trees without comment nodes are equal, node for node, every leaf's text included. The tree, not the
  leaves alone: ``return\\nx`` and ``return x`` have the same leaves in JavaScript and run differently. Rust's doc
  comments (``///``, ``//!``, ``/** */``) count, as docstrings do: they are attributes, and doctests. Text that
  does not parse cleanly on its own (a fragment the definition's children were cut out of) is never inert.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Iterator, Sequence
from typing import Any

from codeplane.index.languages import DATA_FAMILIES, detect
from codeplane.index.structural.grammars import parser

#: Tokens that carry no behaviour (a docstring does: ``__doc__``, doctests; indentation does: INDENT/DEDENT stay).
_INERT = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER})
_RUST_DOC = (b"///", b"//!", b"/**", b"/*!")


def comments_only(path: str, before: Sequence[str], after: Sequence[str]) -> bool:
    """Whether two versions of a definition's own lines (of the file at ``path``) differ in comments and
    spacing alone."""
    if path.endswith((".py", ".pyi", ".pyw")):
        old, new = _python_tokens(before), _python_tokens(after)
        return old is not None and old == new
    info = detect(path)
    grammar = info.grammar if info is not None and info.family not in DATA_FAMILIES else None
    if grammar is None:
        return False
    old_tree, new_tree = _tree(grammar, before), _tree(grammar, after)
    return old_tree is not None and old_tree == new_tree


def _python_tokens(lines: Sequence[str]) -> list[tuple[int, str]] | None:
    """The Python tokens of ``lines`` that can change what runs (None: they do not tokenize on their own)."""
    text = "\n".join(lines) + "\n"
    try:
        return [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type not in _INERT]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None


def _tree(grammar: str, lines: Sequence[str]) -> list[str] | None:
    """The syntax tree of ``lines`` without comments, as ``(type``/leaf text/``)`` items in order."""
    found = parser(grammar)
    if found is None:
        return None
    data = "\n".join(lines).encode("utf-8")
    root = found.parse(data).root_node
    if root.has_error:
        return None
    return list(_items(root, data, rust=grammar == "rust"))


def _items(node: Any, data: bytes, *, rust: bool) -> Iterator[str]:
    stack: list[Any] = [node]
    while stack:
        current = stack.pop()
        if current is None:
            yield ")"
            continue
        if "comment" in current.type:
            text = data[current.start_byte:current.end_byte]
            if rust and text.startswith(_RUST_DOC):  # whole: its parts are ``*comment*`` nodes too
                yield f"(doc {text.decode('utf-8', 'replace')})"
            continue
        yield "(" + current.type
        if current.child_count == 0:
            yield data[current.start_byte:current.end_byte].decode("utf-8", "replace")
        stack.append(None)
        stack.extend(reversed(current.children))
