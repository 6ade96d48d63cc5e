"""Whole-identifier occurrences of a name in a text, and where each one sits (code, string, comment).

This is the "no silent misses" half of a preview: every occurrence the structural plan does not cover is
found here and reported with a reason. Classification parses the file with the bundled tree-sitter grammar
(D2) only when there is something to classify; a file without a grammar reports its hits as ``code``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Literal

from codeplane.core.logging import get_logger

log = get_logger(__name__)

Context = Literal["code", "string", "comment", "docstring"]

#: File suffix -> tree-sitter grammar name, for classification only.
GRAMMAR_BY_SUFFIX: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".rb": "ruby", ".php": "php",
    ".cs": "csharp", ".c": "c", ".h": "c", ".cpp": "cpp", ".hpp": "cpp", ".cc": "cpp", ".swift": "swift",
}

_STRING_TYPES = ("string", "template_string", "string_literal", "raw_string_literal",
                 "interpreted_string_literal", "char_literal", "heredoc_body", "encapsed_string")
_CODE_ISLANDS = ("interpolation", "template_substitution", "string_interpolation")


@dataclass(frozen=True)
class Occurrence:
    line: int
    column: int
    context: Context


def grammar_for(path: str) -> str | None:
    dot = path.rfind(".")
    return GRAMMAR_BY_SUFFIX.get(path[dot:].lower()) if dot >= 0 else None


@functools.lru_cache(maxsize=64)
def _pattern(name: str) -> re.Pattern[str]:
    # ``$`` counts as an identifier character (JS/PHP) so ``$foo`` is not an occurrence of ``foo``.
    return re.compile(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])")


def line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


@functools.lru_cache(maxsize=64)
def _static_pattern(name: str) -> re.Pattern[str]:
    return re.compile(r"(?:(?<![\w$])|(?<=::\$))" + re.escape(name) + r"(?![\w$])")


def find_offsets(text: str, name: str, *, php: bool = False) -> list[int]:
    """Character offsets of every whole-identifier occurrence of ``name``; in PHP also a static property's
    ``K::$name`` (``$name`` alone is a variable, not the property)."""
    if not name or name not in text:
        return []
    return [m.start() for m in (_static_pattern if php else _pattern)(name).finditer(text)]


@functools.lru_cache(maxsize=32)
def _parser(grammar: str) -> Any:
    try:
        import tree_sitter_language_pack as tslp

        return tslp.get_parser(grammar)  # type: ignore[arg-type]
    except (LookupError, ImportError, ValueError):
        log.warning("no grammar for lexical classification", grammar=grammar)
        return None


def syntax_root(data: bytes, path: str) -> Any:
    """The tree-sitter root node of a file's bytes, or None when its suffix has no grammar here."""
    grammar = grammar_for(path)
    parser = _parser(grammar) if grammar else None
    return parser.parse(data).root_node if parser is not None else None


def _classify(node: Any, root: Any) -> Context:
    current = node
    while current is not None and current != root:
        kind = current.type
        if kind in _CODE_ISLANDS:
            return "code"
        if "comment" in kind:
            return "comment"
        if kind in _STRING_TYPES:
            return "docstring" if _is_docstring(current) else "string"
        current = current.parent
    return "code"


def _is_docstring(node: Any) -> bool:
    holder = node.parent
    if holder is not None and holder.type == "expression_statement":
        node, holder = holder, holder.parent
    if holder is None or holder.type not in ("module", "block"):
        return False
    first = holder.named_children[0] if holder.named_child_count else None
    return first is not None and first.id == node.id


def classify(text: str, path: str, offsets: list[int]) -> list[Context]:
    """The syntactic context of each offset (same order); ``code`` when the file has no grammar."""
    if not offsets:
        return []
    grammar = grammar_for(path)
    parser = _parser(grammar) if grammar else None
    if parser is None:
        return ["code"] * len(offsets)
    data = text.encode("utf-8")
    tree = parser.parse(data)
    root = tree.root_node
    out: list[Context] = []
    # Offsets are characters; tree-sitter wants bytes. Convert incrementally (offsets are ascending).
    byte_pos = 0
    char_pos = 0
    for off in offsets:
        byte_pos += len(text[char_pos:off].encode("utf-8"))
        char_pos = off
        node = root.descendant_for_byte_range(byte_pos, byte_pos + 1)
        out.append(_classify(node, root) if node is not None else "code")
    return out


def occurrences(text: str, path: str, name: str, *, classify_hits: bool = True) -> list[Occurrence]:
    """Every whole-identifier occurrence of ``name`` with its 1-based line and 0-based column."""
    offsets = find_offsets(text, name)
    if not offsets:
        return []
    starts = line_starts(text)
    contexts: list[Context] = classify(text, path, offsets) if classify_hits else ["code"] * len(offsets)
    out: list[Occurrence] = []
    line_idx = 0
    for off, ctx in zip(offsets, contexts, strict=True):
        while line_idx + 1 < len(starts) and starts[line_idx + 1] <= off:
            line_idx += 1
        out.append(Occurrence(line=line_idx + 1, column=off - starts[line_idx], context=ctx))
    return out
