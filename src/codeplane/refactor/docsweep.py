"""Confidence of a textual mention in comments, docstrings and documentation files (spec §8.11).

High: inside backticks, a fenced/indented code block or a Sphinx role (``:func:`name```). Medium: prose
mention of a distinctive name (``snake_case``, ``CamelCase``, digits) or a dotted mention (``Class.name``).
Low: a plain word that may just be English (``process``, ``run``). Doc edits are kept apart from code
edits and applied only per ``refactor.doc_sweep``. A Rust doc comment's code block is a doctest that
``cargo test`` compiles: its mentions are ``high`` doc edits with reason ``doctest``, so applying the docs
(``apply_docs``) keeps the doctests building.
"""

from __future__ import annotations

import re

from codeplane.refactor.models import Certainty

_FENCE = re.compile(r"^\s*(```|~~~)")
_BACKTICK_RUN = re.compile(r"`+")


def is_distinctive(name: str) -> bool:
    """A name unlikely to be an ordinary word: has ``_``, a digit, or an inner capital letter."""
    return "_" in name or any(c.isdigit() for c in name) or any(c.isupper() for c in name[1:])


def code_block_lines(text: str) -> set[int]:
    """1-based line numbers inside fenced code blocks (Markdown) or ``::`` literal blocks (reST)."""
    inside: set[int] = set()
    fenced = False
    literal_indent: int | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            inside.add(number)
            continue
        if fenced:
            inside.add(number)
            continue
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if stripped and indent <= literal_indent:
                literal_indent = None
            else:
                inside.add(number)
                continue
        if stripped.endswith("::"):
            literal_indent = indent
    return inside


_RUST_DOC = re.compile(r"^\s*(?://[/!]|\*|/\*[*!])\s?")
#: Fence info words that make a Rust doc block something other than Rust code.
_NOT_RUST = frozenset({"text", "ignore", "toml", "json", "yaml", "sh", "bash", "console", "shell", "plain",
                       "md", "markdown", "c", "python", "js"})


def doctest_lines(text: str) -> set[int]:
    """1-based lines inside the Rust code blocks of ``///``/``//!`` (or ``/** */``) doc comments: doctests."""
    inside: set[int] = set()
    fenced = rust = False
    for number, line in enumerate(text.split("\n"), start=1):
        prefix = _RUST_DOC.match(line)
        if prefix is None:
            fenced = rust = False  # a doc comment ends with its lines
            continue
        body = line[prefix.end():]
        if _FENCE.match(body):
            info = {w.strip() for w in body.strip().lstrip("`~").split(",") if w.strip()}
            fenced = not fenced
            rust = fenced and not (info & _NOT_RUST)
            continue
        if rust:
            inside.add(number)
    return inside


def _in_backticks(line: str, column: int) -> bool:
    # Runs, not backticks: reST's ``literal`` opens with two.
    return len(_BACKTICK_RUN.findall(line, 0, column)) % 2 == 1


def _dotted(line: str, column: int, length: int) -> bool:
    before = line[column - 1] if column > 0 else ""
    after = line[column + length] if column + length < len(line) else ""
    return before == "." or (after == "." and column + length + 1 < len(line)
                             and (line[column + length + 1].isalnum() or line[column + length + 1] == "_"))


#: The dotted path written right before a mention (Sphinx's ``~`` or ``!`` before it is no part of it).
_QUALIFIER = re.compile(r"((?:[A-Za-z_][A-Za-z0-9_]*\.)+)$")


def names_another(before: str, qualified_name: str) -> bool:
    """Whether the mention ending ``before`` is qualified as another package's ``module.Class.name``
    (``:meth:`~wsgiref.headers.Headers.get_all``` while renaming werkzeug's ``Headers.get_all``): a path from
    another top-level package through a class. An instance (``response.headers.get_all``) or a class alone
    (``Response.get_all``, perhaps a subclass) says nothing either way."""
    found = _QUALIFIER.search(before)
    if found is None:
        return False
    prefix = found.group(1).rstrip(".").split(".")
    package = qualified_name.split(".", 1)[0]
    return len(prefix) >= 2 and prefix[0].islower() and prefix[0] != package and any(
        part[:1].isupper() for part in prefix[1:])


def qualifier(before: str) -> str | None:
    """The dotted path written right before a mention (``attrs`` in ``attrs.evolve``), if any."""
    found = _QUALIFIER.search(before)
    return found.group(1).rstrip(".") if found else None


_OWNER = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)*([A-Z]\w*)\.$")


def names_another_class(before: str, classes: frozenset[str]) -> bool:
    """Whether the mention ending ``before`` is qualified by a class other than the renamed member's classes
    (``Context.invoke()`` or ``CliRunner.invoke`` while renaming ``Command.invoke``): another class's member of
    the same name. A lowercase qualifier (an instance, a module) says nothing either way."""
    found = _OWNER.search(before)
    return bool(classes) and found is not None and found.group(1) not in classes


def mention_confidence(line: str, column: int, name: str, *, in_code_block: bool = False) -> Certainty:
    """Confidence that the mention at ``column`` of ``line`` names the renamed symbol."""
    if in_code_block or _in_backticks(line, column):
        return "high"
    if is_distinctive(name) or _dotted(line, column, len(name)):
        return "medium"
    return "low"
