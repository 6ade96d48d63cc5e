"""Confidence of a textual mention in comments, docstrings and documentation files (spec §8.11).

High: inside backticks, a fenced/indented code block or a Sphinx role (``:func:`name```). Medium: prose
mention of a distinctive name (``snake_case``, ``CamelCase``, digits) or a dotted mention (``Class.name``).
Low: a plain word that may just be English (``process``, ``run``), and a glob's file extension (``*.log``,
``**/*.log``: files, not the ``log`` member, whatever quotes or backticks hold it). Doc edits are kept apart from code
edits and applied only per ``refactor.doc_sweep``. A Rust doc comment's code block is a doctest that
``cargo test`` compiles: its mentions are ``high`` doc edits with reason ``doctest``, so applying the docs
(``apply_docs``) keeps the doctests building.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from codeplane.core.config import DocSweepConfig
from codeplane.refactor.lexical import syntax_root
from codeplane.refactor.models import Certainty

_FENCE = re.compile(r"^\s*(```|~~~)")
_BACKTICK_RUN = re.compile(r"`+")


def is_doc_file(path: str, docs: DocSweepConfig) -> bool:
    """A documentation file: one of ``refactor.doc_sweep.scan_extensions``."""
    lowered = path.lower()
    return any(lowered.endswith(ext) for ext in docs.scan_extensions)


def is_glob_suffix(text: str, offset: int) -> bool:
    """Whether the name at ``offset`` of ``text`` is the extension of a glob (``*.log``, ``**/*.log``): a pattern of
    file names, never a mention of a symbol (``Logger.log`` renamed ``write`` made ``.gitignore`` say ``*.write``)."""
    return offset >= 2 and text[offset - 2:offset] == "*."


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


def in_backticks(line: str, column: int) -> bool:
    """Whether ``column`` of ``line`` is inside inline code (a Markdown backtick span, a reST ``literal``)."""
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


#: A run of characters a file path is written with (no spaces, quotes, backticks or brackets).
_PATH_CHARS = re.compile(r"[\w./\\-]")
_FILE_NAME = re.compile(r"\.[A-Za-z]\w*$")


def _path_segment(line: str, column: int, length: int) -> bool:
    """Whether the mention is a segment of a file path (``tests/get_or_create/models.py`` in an egg-info
    ``SOURCES.txt``): a directory or file the rename does not move. A path has a ``/`` and ends with a file name
    or a ``/``, or has two ``/`` (``get_or_create/update_or_create`` in prose names both, it is no path)."""
    start, end = column, column
    while start > 0 and _PATH_CHARS.fullmatch(line[start - 1]):
        start -= 1
    while end < len(line) and _PATH_CHARS.fullmatch(line[end]):
        end += 1
    token = line[start:end]
    token = token.rstrip(".")  # a sentence's full stop
    if "/" not in token[column - start - 1:column - start + length + 1]:
        return False  # the slash must touch the mention: ``a/b.py`` says nothing of a name before it
    return bool(_FILE_NAME.search(token)) or token.endswith("/") or token.count("/") >= 2


def mention_confidence(line: str, column: int, name: str, *, in_code_block: bool = False) -> Certainty:
    """Confidence that the mention at ``column`` of ``line`` names the renamed symbol."""
    if is_glob_suffix(line, column):
        return "low"
    if not in_code_block and _path_segment(line, column, len(name)):
        # In prose a path is never the symbol; in code ``a/name`` may be a division, so code keeps its weight.
        return "low"
    if in_code_block or in_backticks(line, column):
        return "high"
    if is_distinctive(name) or _dotted(line, column, len(name)):
        return "medium"
    return "low"


#: Pattern nodes a binding name sits in (``let (a, Some(b)) = ...``); a tuple struct's ``type`` is no binding.
_PATTERNS = frozenset({"tuple_pattern", "slice_pattern", "tuple_struct_pattern", "struct_pattern", "field_pattern",
                       "ref_pattern", "mut_pattern", "reference_pattern", "or_pattern", "captured_pattern",
                       "match_pattern", "parameter", "closure_parameters"})
_LITERALS = frozenset({"string_literal", "raw_string_literal", "char_literal"})
#: Wraps a doctest's lines so that ``let`` statements parse as the function body rustdoc makes of them.
_DOCTEST_HEAD = "fn __doctest() {\n"


def rust_doctest_not_symbol(text: str, doctests: set[int], name: str) -> set[int]:
    """Offsets in ``text`` of the occurrences of ``name`` in Rust doctests (``doctests``: their lines) that are not
    a symbol of the crate: inside a string or char literal, or a name the doctest binds itself (``let left = ...``,
    a closure's parameter, a pattern's name) and its uses where that binding is in scope. A method call
    (``.left()``), a path (``Either::left``) or a struct key is never among them. Unparsed (no grammar): empty."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    found: set[int] = set()
    for first, last in _runs(doctests):
        code = [_code_of(lines[n - 1]) for n in range(first, last + 1)]
        root = syntax_root((_DOCTEST_HEAD + "\n".join(code) + "\n}\n").encode(), "doctest.rs")
        if root is None:
            return set()

        def at(point: tuple[int, int], first: int = first, code: list[str] = code) -> int:
            # Rows count from the wrapper's line; the masked lines keep the file's columns (in characters).
            row, column = point[0] - 1, point[1]
            return starts[first - 1 + row] + len(code[row].encode()[:column].decode("utf-8", "replace"))

        literals: list[tuple[int, int]] = []
        names: list[tuple[int, tuple[int, int] | None, bool]] = []
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type in _LITERALS and 1 <= node.start_point[0] <= len(code):
                literals.append((at(node.start_point), at(node.end_point) if node.end_point[0] <= len(code)
                                 else starts[last]))
                continue
            if node.type in ("identifier", "shorthand_field_identifier") and node.text == name.encode() \
                    and 1 <= node.start_point[0] <= len(code) and not _member_token(node):
                scope = _binding_scope(node)
                bounds = (at(scope[0]), at(scope[1]) if scope[1][0] <= len(code) else starts[last]) \
                    if scope is not None else None
                shorthand = node.type == "shorthand_field_identifier" or (
                    node.parent is not None and node.parent.type == "shorthand_field_initializer")
                names.append((at(node.start_point), bounds, shorthand))
            stack.extend(node.children)
        scopes = [bounds for _, bounds, _ in names if bounds is not None]
        for offset, bounds, shorthand in names:
            # A shorthand key (``Owner { name, .. }``) is the field too: the sweep rewrites it ``name: local``.
            if not shorthand and (bounds is not None or any(s <= offset < e for s, e in scopes)):
                found.add(offset)
        found |= {o for o in _occurrences(text, name, starts[first - 1], starts[last])
                  if any(s < o < e for s, e in literals)}
    return found


def _member_token(node: Node) -> bool:
    """``e.left`` / ``Either::left`` inside a macro's tokens (``assert_eq!(e.left(), ..)``), which the grammar keeps
    as bare identifiers: a member or path, never the doctest's local."""
    before = node.prev_sibling
    return node.parent is not None and node.parent.type == "token_tree" and before is not None \
        and before.type in (".", "::")


def _runs(lines: set[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for n in sorted(lines):
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def _code_of(line: str) -> str:
    """A doctest line with its comment prefix (and rustdoc's hidden-line ``#``) blanked, columns kept."""
    prefix = _RUST_DOC.match(line)
    end = prefix.end() if prefix is not None else 0
    body = line[end:]
    stripped = body.lstrip(" \t")
    if stripped == "#" or stripped.startswith("# "):
        body = body[:len(body) - len(stripped)] + " " + stripped[1:]
    return " " * end + body


def _occurrences(text: str, name: str, start: int, end: int) -> list[int]:
    return [m.start() + start for m in re.finditer(rf"(?<![\w]){re.escape(name)}(?![\w])", text[start:end])]


def _binding_scope(node: Node) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Where the name ``node`` binds, when it is a pattern's binding: after a ``let`` to the end of its block, the
    closure or function of a parameter, the ``for``/``if let``/``while let``/match arm of its pattern."""
    child, parent = node, node.parent
    while parent is not None and parent.type in _PATTERNS:
        if parent.type == "tuple_struct_pattern" and parent.child_by_field_name("type") == child:
            return None  # ``Some(x)``'s ``Some``
        if parent.type == "field_pattern" and parent.child_by_field_name("name") == child \
                and child.type != "shorthand_field_identifier":
            return None
        if parent.type == "parameter" and parent.child_by_field_name("pattern") != child:
            return None
        child, parent = parent, parent.parent
    if parent is None:
        return None
    if parent.type == "let_declaration" and parent.child_by_field_name("pattern") == child:
        block = parent.parent
        return (parent.end_point, block.end_point) if block is not None else None
    if parent.type == "match_arm":
        return parent.start_point, parent.end_point
    if parent.type in ("for_expression", "let_condition") and parent.child_by_field_name("pattern") == child:
        owner = parent.parent if parent.type == "let_condition" else parent
        while owner is not None and owner.type not in ("if_expression", "while_expression", "for_expression"):
            owner = owner.parent
        return (owner.start_point, owner.end_point) if owner is not None else None
    if child.type in ("parameter", "closure_parameters") or parent.type in ("parameters", "closure_expression"):
        owner = parent
        while owner is not None and owner.type not in ("closure_expression", "function_item"):
            owner = owner.parent
        return (owner.start_point, owner.end_point) if owner is not None else None
    return None
