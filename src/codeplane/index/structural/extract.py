"""Parse one file and run its language adapter: text in, ``FileFacts`` (or a counted skip) out.

Pure and deterministic: no I/O, no database, safe to run in worker processes. A file whose grammar is
missing, whose language has no adapter, or whose parse/extraction raises is skipped with a reason; the
caller counts it and indexing goes on (§18 item 3).
"""

from __future__ import annotations

import itertools
import re
from functools import cache
from typing import NamedTuple

from tree_sitter import Node, Parser, Query, QueryCursor

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


#: A TypeScript member on its own line that opens with type parameters (an interface's generic call signature
#: ``<R extends F>(recipe: R): R``): the byte before its ``<`` when that is indentation.
_GENERIC_MEMBER = re.compile(rb"(?m)^[ \t]*([ \t])<[A-Za-z_$][^\n]*>\s*\(")
#: A C/C++ macro that expands to a specifier in front of a declaration (``POCKETFFT_NOINLINE fftblue(size_t n)
#: : n(n) {}``, ``static NPY_INLINE int f(void)``): an upper-case name with an underscore at the start of a
#: declaration, before another name. The grammar takes it for the type, and the constructor above for a field.
_SPECIFIER_MACRO = re.compile(rb"(?m)^[ \t]*(?:template[ \t]*<[^>\n]*>[ \t]*)?"
                              rb"(?:(?:static|inline|constexpr|virtual|explicit|extern)[ \t]+)*"
                              rb"([A-Z][A-Z0-9]*_[A-Z0-9_]*)[ \t]+(?=[A-Za-z_~])")
#: The same for a qualifier after a ``*`` (``const T * POCKETFFT_RESTRICT cc``): two names in a row after a ``*``
#: are no expression, so the first is a qualifier.
_QUALIFIER_MACRO = re.compile(rb"\*[ \t]*([A-Z][A-Z0-9]*_[A-Z0-9_]*)[ \t]+(?=[A-Za-z_])")
#: A macro standing for a template parameter (``template <class D, HWY_IF_V_SIZE_D(D, 16)>``, an ``enable_if``):
#: from its comma to its closing parenthesis (nested ones included, on the line).
_PARAMETER_MACRO = re.compile(rb",[ \t]*([A-Z][A-Z0-9]*_[A-Z0-9_]*)[ \t]*\(")
_TEMPLATE_LINE = re.compile(rb"(?m)^[ \t]*template[ \t]*<[^\n]*$")
#: Candidates tried per file (each a parse of the file: only files that failed to parse pay it).
_MAX_REPAIRS = 32


def _repairs(grammar: str, data: bytes) -> list[list[tuple[int, bytes]]]:
    """Candidate repairs of a file that failed to parse, each a list of (offset, bytes of the same length)."""
    if grammar in ("typescript", "tsx"):
        return [[(m.start(1), b";")] for m in itertools.islice(_GENERIC_MEMBER.finditer(data), _MAX_REPAIRS)]
    if grammar in ("c", "cpp"):
        spots: dict[bytes, list[tuple[int, bytes]]] = {}
        for m in itertools.chain(_SPECIFIER_MACRO.finditer(data), _QUALIFIER_MACRO.finditer(data)):
            name = m.group(1)
            if name in spots or len(spots) < _MAX_REPAIRS:
                spots.setdefault(name, []).append((m.start(1), b" " * len(name)))
        for line in _TEMPLATE_LINE.finditer(data):
            for m in _PARAMETER_MACRO.finditer(data, line.start(), line.end()):
                end = _closing(data, m.end() - 1, line.end())
                name = m.group(1)
                if end > 0 and (name in spots or len(spots) < _MAX_REPAIRS):
                    spots.setdefault(name, []).append((m.start(), b" " * (end + 1 - m.start())))
        return [spots[name] for name in sorted(spots)]  # one candidate per macro: all its uses blanked
    return []


def _closing(data: bytes, opening: int, limit: int) -> int:
    """Offset of the ``)`` closing the ``(`` at ``opening``, before ``limit``; -1 if none."""
    depth = 0
    for at in range(opening, limit):
        depth += (data[at] == 0x28) - (data[at] == 0x29)
        if depth == 0:
            return at
    return -1


def _parsed(parser: Parser, grammar: str, data: bytes) -> tuple[Node, ParseStats]:
    """The parse of ``data``, or of a repair of it when ``data`` has errors a known grammar weakness explains:
    - TypeScript: a ``;`` ending each interface member that the grammar ran into the next (its automatic
      semicolon insertion fails on ``): Curried`` followed by a line ``<Recipe extends AnyFunc>(...)``: the rest
      of immer's ``types-external.ts`` became one error, and its ``IProduce``, ``Producer`` ... were no
      definitions); the ``;`` replaces the indentation byte before the ``<``;
    - C/C++: a specifier or qualifier macro blanked (``POCKETFFT_NOINLINE`` before a constructor made it a field
      with a bit width, and its member initialisers methods; ``T * POCKETFFT_RESTRICT cc`` broke the parameter
      list: NumPy's vendored pocketfft), and a macro standing for a template parameter with its comma and
      arguments (Highway's ``template <class D, HWY_IF_V_SIZE_D(D, 16)>``).
    Every offset stays the source's; a candidate is kept only if the file then has fewer errors."""
    root = parser.parse(data).root_node
    stats = parse_stats(grammar, root)
    if not stats.error_count:
        return root, stats
    candidates = _repairs(grammar, data)
    if not candidates:
        return root, stats
    current = data
    # All at once first: one error tends to hide the next, so a repair alone may not lower the count. C and C++
    # stop there: a third of NumPy's C/C++ files fail to parse, and a parse per macro name cost 60 % more CPU.
    every = [spot for candidate in candidates for spot in candidate]
    each = candidates if len(candidates) > 1 and grammar not in ("c", "cpp") else []
    for tried_spots in [every, *each]:
        patched = bytearray(data if tried_spots is every else current)
        for at, replacement in tried_spots:
            patched[at:at + len(replacement)] = replacement
        tried = parser.parse(bytes(patched)).root_node
        tried_stats = parse_stats(grammar, tried)
        if tried_stats.error_count < stats.error_count:
            root, stats, current = tried, tried_stats, bytes(patched)
            if not stats.error_count:
                break
    return root, stats


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
        root, stats = _parsed(parser, info.grammar, src.data)
        adapter = adapter_for(info.grammar)
        if adapter is None:
            return Outcome(path, info.language, NO_ADAPTER, None, stats)
        out = adapter(src, root, UidAllocator(info.language, path))
    except Exception as exc:  # noqa: BLE001 - one bad file must never abort indexing (§18 item 3)
        return Outcome(path, info.language, FAILED, None, None, f"{type(exc).__name__}: {exc}")
    facts = FileFacts(path, info.language, out.package, stats, src.line_count, out.defs, out.scopes, out.binds,
                      out.imports, out.refs, out.exports, out.thunks, out.dynamic)
    return Outcome(path, info.language, PARSED, facts, stats)


#: Files longer than this (characters) are counted but not parsed: generated or minified code. ``/status`` counts
#: them apart (``structural.skipped.too_large``) and names them with this reason (``parse_failures``); README says
#: the limit.
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
            info = detect_source(path, text) if len(text) > MAX_CHARS else None
            if info is not None and info.grammar is not None:
                out.append(Outcome(path, info.language, TOO_LARGE, None, None,
                                   f"structure skipped: {len(text)} characters, over the {MAX_CHARS} parsed "
                                   "(no definitions or references; text search still reads it)"))
            else:  # a file no grammar parses is ``unsupported`` at any size: a big .txt is no parse failure (qa58 F8)
                out.append(extract_file(path, text))
    return out
