"""A file's text as tree-sitter sees it (UTF-8 bytes) with conversion to character columns.

Tree-sitter reports byte columns; facts store character columns (see ``facts``). Only lines holding
non-ASCII text need converting, so the common case costs one set lookup. On a long non-ASCII line (minified
JavaScript, tables of Unicode ranges) a column is found by bisecting the line's continuation bytes, not by
decoding the line up to it at every node.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from tree_sitter import Node

#: Lines shorter than this are decoded up to the column (cheap); longer ones get a table of continuation bytes.
_LONG_LINE = 256
_CONTINUATION = re.compile(rb"[\x80-\xbf]")


class SourceText:
    __slots__ = ("_chars", "_continuations", "_wide", "data", "line_count")

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8", "surrogatepass")
        lines = text.split("\n")
        self.line_count = len(lines) - (1 if lines and lines[-1] == "" else 0)
        self._wide: dict[int, bytes] = {
            row: line.encode("utf-8", "surrogatepass") for row, line in enumerate(lines) if not line.isascii()}
        #: Per long wide row, the offsets of its UTF-8 continuation bytes (None: not valid UTF-8, decode instead).
        self._continuations: dict[int, list[int] | None] = {}
        #: The text itself when every byte is a character: a node's text is then a slice, not a decode.
        self._chars = text if not self._wide and text.isascii() else None

    def col(self, row: int, byte_col: int) -> int:
        """Character column of a tree-sitter (row, byte column) point."""
        line = self._wide.get(row)
        if line is None:
            return byte_col
        if len(line) >= _LONG_LINE:
            if row in self._continuations:
                continuations = self._continuations[row]
            else:
                continuations = self._continuations[row] = _continuation_offsets(line)
            if continuations is not None:
                # In valid UTF-8, every byte but a continuation byte starts a character (a character cut by the
                # column too: decoding the prefix would make it one U+FFFD).
                end = min(byte_col, len(line))
                return end - bisect_left(continuations, end)
        return len(line[:byte_col].decode("utf-8", "replace"))

    def text(self, node: Node) -> str:
        if self._chars is not None:
            return self._chars[node.start_byte:node.end_byte]
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def span(self, node: Node) -> tuple[int, int, int, int]:
        """(start_line, start_col, end_line, end_col), 1-based lines and character columns."""
        (sr, sc), (er, ec) = node.start_point, node.end_point
        wide = self._wide
        if wide:  # else an all-ASCII file: byte columns are character columns
            if sr in wide:
                sc = self.col(sr, sc)
            if er in wide:
                ec = self.col(er, ec)
        return sr + 1, sc, er + 1, ec


def _continuation_offsets(line: bytes) -> list[int] | None:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:  # a lone surrogate (surrogatepass): keep the decoder's own count
        return None
    return [match.start() for match in _CONTINUATION.finditer(line)]
