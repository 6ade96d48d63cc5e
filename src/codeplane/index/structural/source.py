"""A file's text as tree-sitter sees it (UTF-8 bytes) with conversion to character columns.

Tree-sitter reports byte columns; facts store character columns (see ``facts``). Only lines holding
non-ASCII text need converting, so the common case costs one set lookup.
"""

from __future__ import annotations

from tree_sitter import Node


class SourceText:
    __slots__ = ("_wide", "data", "line_count")

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8", "surrogatepass")
        lines = text.split("\n")
        self.line_count = len(lines) - (1 if lines and lines[-1] == "" else 0)
        self._wide: dict[int, bytes] = {
            row: line.encode("utf-8", "surrogatepass") for row, line in enumerate(lines) if not line.isascii()}

    def col(self, row: int, byte_col: int) -> int:
        """Character column of a tree-sitter (row, byte column) point."""
        line = self._wide.get(row)
        if line is None:
            return byte_col
        return len(line[:byte_col].decode("utf-8", "replace"))

    def text(self, node: Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def span(self, node: Node) -> tuple[int, int, int, int]:
        """(start_line, start_col, end_line, end_col), 1-based lines and character columns."""
        (sr, sc), (er, ec) = node.start_point, node.end_point
        if not self._wide:  # an all-ASCII file: byte columns are character columns
            return sr + 1, sc, er + 1, ec
        return sr + 1, self.col(sr, sc), er + 1, self.col(er, ec)
