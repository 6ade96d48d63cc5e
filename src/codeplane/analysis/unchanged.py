"""Whether a change of a file leaves every definition as it was, known without extracting either version.

Extracting a version (``facts.py``) costs ~3 ms a file, most of it the adapter's walk; a header comment added to
650 files or a trailer to 1,500 needed both versions of each extracted, to find that nothing changed. A change
keeps the structure when every line it adds, removes or edits lies outside every top-level statement of its
side's syntax tree: blank lines and comments between statements (the tree's root's ``comment`` children). Each
statement then is the same lines on both sides, in the same order, so the extractor (which reads statements
and skips comments) finds the same definitions with the same text, only shifted; ``compare`` would find nothing.
Only the tree-sitter parse runs (~30 % of an extraction). Anything else is left to extraction: a line inside a
statement (a comment inside a function is a ``comments_only`` body change), a parse with errors (a repair may
change the tree), a binary or too-large side, content that detects otherwise (a shebang), no adapter.
"""

from __future__ import annotations

import pygit2
from tree_sitter import Parser

from codeplane.index.languages import detect_source
from codeplane.index.structural import grammars
from codeplane.index.structural.adapters import adapter_for
from codeplane.index.structural.extract import MAX_CHARS
from codeplane.repo.content import decode, is_binary

#: How a comment or blank line starts once stripped: a line that cannot be one is not worth a parse.
_COMMENTISH = ("#", "//", "/*", "*", "--", ";", "%", "<!--", "'")


def structure_kept(path: str, old: bytes, new: bytes) -> bool:
    """Whether ``path`` going from ``old`` to ``new`` changes nothing but blank lines and comments outside every
    top-level statement (so no definition differs). False means "extract both", never "something changed"."""
    if is_binary(old) or is_binary(new):
        return False
    old_text, new_text = decode(old), decode(new)
    if len(old_text) > MAX_CHARS or len(new_text) > MAX_CHARS:
        return False
    info = detect_source(path, new_text)
    if info is None or info.grammar is None or detect_source(path, old_text) != info:
        return False
    if adapter_for(info.grammar) is None:
        return False
    # Lines as the extractor numbers them: of the decoded text (a byte-order mark dropped), UTF-8 encoded.
    old_data = old_text.encode("utf-8", "surrogatepass")
    new_data = new_text.encode("utf-8", "surrogatepass")
    old_rows: list[int] = []
    new_rows: list[int] = []
    for hunk in pygit2.Patch.create_from(old_data, new_data, context_lines=0).hunks:
        old_rows += range(hunk.old_start - 1, hunk.old_start - 1 + hunk.old_lines)
        new_rows += range(hunk.new_start - 1, hunk.new_start - 1 + hunk.new_lines)
    if not _commentish(old_text, old_rows) or not _commentish(new_text, new_rows):
        return False
    parser = grammars.parser(info.grammar)
    if parser is None:
        return False
    return _outside_statements(parser, old_data, old_rows) and _outside_statements(parser, new_data, new_rows)


def _commentish(text: str, rows: list[int]) -> bool:
    """Whether each row is blank, or a comment-like line at the left margin or a block comment's `` * `` line: an
    indented comment is nearly always inside a statement (a block), where the parse would only say no."""
    if not rows:
        return True
    lines = text.split("\n")
    for r in rows:
        line = lines[r] if r < len(lines) else ""
        stripped = line.strip()
        if stripped and not ((line[0] not in " \t" and stripped.startswith(_COMMENTISH)) or stripped.startswith("*")):
            return False
    return True


def _outside_statements(parser: Parser, data: bytes, rows: list[int]) -> bool:
    """Whether no row of ``rows`` is within a top-level node other than a comment (and the tree has no error)."""
    if not rows:
        return True
    root = parser.parse(data).root_node
    if root.has_error:
        return False
    wanted = sorted(set(rows))
    spans = sorted((child.start_point[0], child.end_point[0]) for child in root.children if "comment" not in child.type)
    at = 0
    for row in wanted:
        while at < len(spans) and spans[at][1] < row:
            at += 1
        if at < len(spans) and spans[at][0] <= row:
            return False
    return True
