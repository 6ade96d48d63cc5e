"""Character columns from tree-sitter's byte columns (``SourceText``), on short and long non-ASCII lines."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tree_sitter import Node

from codeplane.index.structural import grammars
from codeplane.index.structural.source import SourceText

LINES = {
    "short": "naïve = 'ü€'",
    "long": "x = '" + "é€😀a" * 120 + "'",  # long enough for the table of continuation bytes
    "long with a lone surrogate": "y = '" + "ü" * 200 + "\ud800" + "z" * 80 + "'",
}


@pytest.mark.parametrize("name", sorted(LINES))
def test_every_byte_column_maps_as_decoding_the_prefix_would(name: str) -> None:
    line = LINES[name]
    src = SourceText(f"first = 1\n{line}\n")
    raw = line.encode("utf-8", "surrogatepass")
    for byte_col in range(len(raw) + 2):
        assert src.col(1, byte_col) == len(raw[:byte_col].decode("utf-8", "replace")), byte_col
    assert src.col(0, 5) == 5  # an ASCII line: byte columns are character columns


def test_spans_of_nodes_after_long_non_ascii_text_are_character_columns() -> None:
    text = "s = '" + "€" * 300 + "'; t = s\n"
    parser = grammars.parser("python")
    assert parser is not None
    src = SourceText(text)
    tree = parser.parse(src.data)
    names = [n for n in _walk(tree.root_node) if n.type == "identifier"]
    spans = {src.data[n.start_byte:n.end_byte].decode(): src.span(n) for n in names}
    assert spans["t"] == (1, text.index("t ="), 1, text.index("t =") + 1)
    assert text[spans["s"][1]:spans["s"][3]] == "s"


def _walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from _walk(child)
