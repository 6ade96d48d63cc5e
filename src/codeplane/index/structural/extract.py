"""Parse one file and run its language adapter: text in, ``FileFacts`` (or a counted skip) out.

Pure and deterministic: no I/O, no database, safe to run in worker processes. A file whose grammar is
missing, whose language has no adapter, or whose parse/extraction raises is skipped with a reason; the
caller counts it and indexing goes on (§18 item 3).
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from tree_sitter import Node, Query, QueryCursor

from codeplane.core.collector import collector_paused
from codeplane.index.languages import detect_source
from codeplane.index.structural import grammars
from codeplane.index.structural.adapters import adapter_for
from codeplane.index.structural.facts import FileFacts, ParseStats
from codeplane.index.structural.identity import UidAllocator
from codeplane.index.structural.source import SourceText

PARSED = "parsed"
NO_ADAPTER = "unsupported"
NO_GRAMMAR = "grammar_missing"
FAILED = "parse_failed"


class Outcome(NamedTuple):
    path: str
    language: str | None
    status: str
    facts: FileFacts | None
    stats: ParseStats | None
    error: str | None = None


@cache
def _error_query(grammar: str) -> Query | None:
    lang = grammars.language(grammar)
    return Query(lang, "(ERROR) @e") if lang is not None else None


def parse_stats(grammar: str, root: Node) -> ParseStats:
    query = _error_query(grammar)
    errors = len(QueryCursor(query).captures(root).get("e", [])) if query is not None and root.has_error else 0
    has_named = any(c.is_named and not c.is_extra and c.type != "ERROR" for c in root.children)
    return ParseStats(root.descendant_count, errors, has_named)


def extract_file(path: str, text: str) -> Outcome:
    """Facts for ``path`` holding ``text``. Never raises for bad input; see ``Outcome.status``."""
    info = detect_source(path, text)
    if info is None or info.grammar is None:
        return Outcome(path, info.language if info else None, NO_ADAPTER, None, None)
    parser = grammars.parser(info.grammar)
    if parser is None:
        return Outcome(path, info.language, NO_GRAMMAR, None, None, f"grammar {info.grammar} is missing")
    try:
        src = SourceText(text)
        # One root node object for both: each ``root_node`` access is a new node whose children are built anew.
        root = parser.parse(src.data).root_node
        stats = parse_stats(info.grammar, root)
        adapter = adapter_for(info.grammar)
        if adapter is None:
            return Outcome(path, info.language, NO_ADAPTER, None, stats)
        out = adapter(src, root, UidAllocator(info.language, path))
    except Exception as exc:  # noqa: BLE001 - one bad file must never abort indexing (§18 item 3)
        return Outcome(path, info.language, FAILED, None, None, f"{type(exc).__name__}: {exc}")
    facts = FileFacts(path, info.language, out.package, stats, src.line_count, out.defs, out.scopes, out.binds,
                      out.imports, out.refs, out.exports, out.thunks, out.dynamic)
    return Outcome(path, info.language, PARSED, facts, stats)


#: Files longer than this (characters) are counted but not parsed: generated or minified code.
MAX_CHARS = 1_000_000
TOO_LARGE = "too_large"


def to_wire(outcome: Outcome) -> Outcome:
    """The same outcome with every row a plain tuple: pickling NamedTuples costs ~7x more, and workers send
    many rows (the biggest tables travel apart, see ``staging``). Consumers unpack rows positionally."""
    facts = outcome.facts
    if facts is None:
        return outcome
    values: list[object] = []
    for name, value in zip(FileFacts._fields, facts, strict=True):
        values.append([tuple(row) for row in value] if name in _ROW_LISTS and isinstance(value, list) else value)
    return outcome._replace(facts=FileFacts._make(values))


_ROW_LISTS = ("defs", "scopes", "binds", "imports", "refs", "exports", "thunks", "dynamic")


def extract_many(items: list[tuple[str, str]]) -> list[Outcome]:
    """``extract_file`` over several files; the unit of work sent to extraction worker processes."""
    out: list[Outcome] = []
    with collector_paused():
        for path, text in items:
            if len(text) > MAX_CHARS:
                info = detect_source(path, text)
                out.append(Outcome(path, info.language if info else None, TOO_LARGE, None, None,
                                   f"{len(text)} characters exceed {MAX_CHARS}"))
            else:
                out.append(extract_file(path, text))
    return out
