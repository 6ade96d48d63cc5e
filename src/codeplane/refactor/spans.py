"""Exact token spans: the one unit every planned edit is made of (D7: never a text replace on a line).

Tree-sitter reports byte columns; editors and the mutation engine's line/column edits count characters.
:class:`SourceText` converts between the two and checks that a span still holds the text it should.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from codeplane.refactor.lexical import line_starts


@dataclass(frozen=True, order=True)
class SpanEdit:
    """Replace ``old_text`` at (line, column)-(end_line, end_column) with ``new_text``.

    Lines are 1-based, columns 0-based characters. ``reason`` is carried to the planned edit.
    """

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    old_text: str
    new_text: str
    reason: str


class SourceText:
    """A file's text with line tables for position conversions."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self._starts = line_starts(text)
        self._lines: list[str] | None = None
        self._bytes: bytes | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines

    @property
    def data(self) -> bytes:
        if self._bytes is None:
            self._bytes = self.text.encode("utf-8")
        return self._bytes

    def line_text(self, line: int) -> str:
        lines = self.lines
        return lines[line - 1].rstrip("\r") if 0 < line <= len(lines) else ""

    def offset(self, line: int, column: int) -> int:
        """Character offset of a 1-based line and 0-based character column."""
        return self._starts[line - 1] + column

    def position(self, offset: int) -> tuple[int, int]:
        """1-based line and 0-based character column of a character offset."""
        index = bisect_right(self._starts, offset) - 1
        return index + 1, offset - self._starts[index]

    def char_column(self, row: int, byte_column: int) -> int:
        """Character column for a tree-sitter point (0-based row, byte column)."""
        line = self.lines[row] if row < len(self.lines) else ""
        if line.isascii():
            return byte_column
        return len(line.encode("utf-8")[:byte_column].decode("utf-8", errors="replace"))

    def slice(self, line: int, column: int, end_line: int, end_column: int) -> str:
        if line < 1 or end_line > len(self._starts):
            return ""
        return self.text[self.offset(line, column):self.offset(end_line, end_column)]

    def node_span(self, node: Any) -> tuple[int, int, int, int]:
        """``(line, column, end_line, end_column)`` of a tree-sitter node in characters."""
        sr, sc = node.start_point
        er, ec = node.end_point
        return sr + 1, self.char_column(sr, sc), er + 1, self.char_column(er, ec)

    def edit_for_node(self, node: Any, new_text: str, reason: str) -> SpanEdit:
        line, col, end_line, end_col = self.node_span(node)
        return SpanEdit(self.path, line, col, end_line, end_col,
                        self.slice(line, col, end_line, end_col), new_text, reason)

    def snippet(self, line: int, limit: int = 160) -> str:
        text = self.line_text(line).strip()
        return text if len(text) <= limit else text[: limit - 1] + "…"
