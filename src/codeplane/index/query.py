"""Lexical query syntaxes: how a query matches text, and which fragments every matching file must hold.

- ``text``: every whitespace-separated term occurs on the same line, in any order (case-insensitive by
  default). The hit is the leftmost term occurrence.
- ``phrase``: the exact string, including spaces and punctuation (case-sensitive by default).
- ``identifier``: the string with no word character (Python's ``\\w``) right before or after it, ``rg -w``'s
  semantics but for a few characters whose class differs (combining marks, ``²``) (case-sensitive by default).
- ``regex``: a regular expression of the ``regex`` engine (V0: Python's syntax, plus POSIX classes, ``\\p{..}``,
  ``\\X``, fuzzy matches...) matched within each line, like ``rg`` (case-sensitive by default). Its fragments come
  from the stdlib parser, and only where that reads the pattern as the engine does (``_regex_required_literals``).

Fragments are the maximal ASCII ``[A-Za-z0-9_]`` runs a match must contain, lowercased; a run touching
a non-ASCII character or an unknown neighbour is "open" on that side (it may be part of a longer
token). Only ASCII runs are used because Python's and Rust's ``\\w`` agree on ASCII, which is what makes
the candidate set provably complete. A case-sensitive literal syntax's closed fragments also keep their case
(``Fragment.cased``): a file must hold that token as spelled. No fragment at all means every file is a candidate.
"""

from __future__ import annotations

import re
import re._parser as sre_parse  # type: ignore[import-not-found]
from dataclasses import dataclass
from typing import Any, Literal

import regex

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.index.lexical import Fragment

Syntax = Literal["text", "phrase", "identifier", "regex"]
#: ``re`` for the literal syntaxes (escaped: linear), ``regex`` for a user's regular expression (bounded in time).
Pattern = re.Pattern[str] | regex.Pattern[str]

_ASCII_WORD_RUN = re.compile(r"[A-Za-z0-9_]+")
MAX_QUERY_CHARS = 1000
#: Lines of unlike kinds: a regular expression matching each of them (``a*``, ``x?``, ``^``) would match every line of
#: every file, an answer that says nothing, so it is refused. One matching the empty string only on some lines
#: (``^$``, ``^\s*$``, ``^.{0,3}$``) is a real search and answers as ``rg`` does: those lines, at column 1.
_EVERY_LINE_PROBES = ("", "x", "Z", "0", "_", " ", "\t", "-", "é", "\ufffd", "\tdef f(x): return 'é' - 1  # x " * 40)
#: Longest a user's regular expression may take over one line (rg's engine cannot backtrack; Python's can).
REGEX_LINE_BUDGET_S = 1.0
#: Longest it may take over a probe of one character, which any pattern answers in microseconds but one that
#: calls a group before reading a character (``(?(DEFINE)(?<x>(?&x)))(?&x)``): that recursion grows the engine's
#: stack by ~300 MB a second, 560 MB before its MemoryError, so it must be stopped long before the line budget.
_SHORT_PROBE_BUDGET_S = 0.1


@dataclass(frozen=True)
class CompiledQuery:
    text: str
    syntax: Syntax
    case_sensitive: bool
    #: One pattern for ``phrase``/``identifier``/``regex``; one per term for ``text`` (all must match a line).
    patterns: tuple[Pattern, ...]
    fragments: tuple[Fragment, ...]
    #: For case-insensitive ``phrase``/``identifier``: the bare literal (``None`` = use ``str.find``).
    literal: re.Pattern[str] | None = None
    #: For a case-insensitive literal syntax whose needles are all ASCII: each pattern's needle lowercased.
    #: In an ASCII text, ``str.find`` in the lowercased text finds exactly what the ``IGNORECASE`` pattern finds
    #: (no case folding maps into or out of ASCII there), about fifteen times faster than Python's regex engine,
    #: which has no fast literal search when ignoring case (``scan._folded``).
    folded: tuple[str, ...] = ()


def literal_fragments(literal: str, *, bounded_left: bool = False, bounded_right: bool = False,
                      case_sensitive: bool = False) -> list[Fragment]:
    """Fragments of a literal string; ``bounded_*`` says a non-word character surrounds the match;
    ``case_sensitive`` that the literal matches only as spelled (closed fragments then keep their case)."""
    fragments: list[Fragment] = []
    for run in _ASCII_WORD_RUN.finditer(literal):
        start, end = run.span()
        left_open = (start > 0 and not literal[start - 1].isascii()) or (start == 0 and not bounded_left)
        right_open = ((end < len(literal) and not literal[end].isascii())
                      or (end == len(literal) and not bounded_right))
        cased = run.group() if case_sensitive and not (left_open or right_open) else ""
        fragments.append(Fragment(run.group().lower(), left_open, right_open, cased))
    return fragments


def _required_literals(parsed: Any) -> list[str]:
    """Literal strings every match of a parsed regex must contain (a conservative subset)."""
    runs: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    for op, arg in parsed:
        if op is sre_parse.LITERAL:
            current.append(chr(arg))
            continue
        flush()
        if op is sre_parse.SUBPATTERN:
            runs += _required_literals(arg[-1])
        elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT) and arg[0] >= 1:
            runs += _required_literals(arg[2])
    flush()
    return runs


#: Where ``regex`` (V0) reads a pattern otherwise than ``re`` does although both accept it: a POSIX class
#: (``[[:alpha:]]``: for ``re`` the set ``[[:alph]`` then ``]``) and a brace that is no repeat count (``{e<=1}``, a
#: fuzzy match for ``regex``, literal text for ``re``). Anything ``re`` refuses (``\\p{Han}``, ``\\X``, ``(?V1)``...)
#: has no ``re`` reading at all.
_READ_OTHERWISE = re.compile(r"\[:|\{(?!\d*(?:,\d*)?\})")


def _regex_required_literals(text: str, flags: int) -> list[str]:
    """Literal strings every match must contain, read by the stdlib parser; none where the ``regex`` engine,
    which does the matching, reads the pattern otherwise (so the search scans instead of narrowing by terms:
    ``[[:alpha:]]dle`` narrowed to files holding the token ``dle`` and found nothing). Escapes are dropped
    before looking (``\\{`` is a literal brace for both), but not inside sets: a false alarm costs only speed."""
    if _READ_OTHERWISE.search(re.sub(r"\\.", "", text, flags=re.DOTALL)):
        return []
    try:
        parsed = sre_parse.parse(text, flags)
    except (re.error, RecursionError, OverflowError):
        return []
    return _required_literals(parsed)


def _invalid(message: str, **details: Any) -> CodePlaneError:
    return CodePlaneError(ErrorCode.INVALID_QUERY, message, details=details)


def regex_too_costly(query: str, budget: float = REGEX_LINE_BUDGET_S) -> CodePlaneError:
    """3006 for a regular expression that ran out of its time (``budget`` seconds) or memory on one line."""
    return _invalid(f"the regular expression took over {budget:g} s or too much memory on one line: nested "
                    "quantifiers such as (a+)+ backtrack exponentially, and a group called before it reads a character "
                    "recurses without end; rewrite it (a+ alone), or search for a literal part", query=query)


def _matches_every_line(pattern: regex.Pattern[str]) -> bool:
    """Whether ``pattern`` matches every probe line; 3006 when it runs out of time or memory on one.

    ``concurrent``: the match lets go of the GIL, so the server answers other calls (and signals) meanwhile."""
    for probe in _EVERY_LINE_PROBES:
        budget = REGEX_LINE_BUDGET_S if len(probe) > 1 else _SHORT_PROBE_BUDGET_S
        try:
            if pattern.search(probe, concurrent=True, timeout=budget) is None:
                return False
        except (TimeoutError, MemoryError, RecursionError) as exc:
            raise regex_too_costly(pattern.pattern, budget) from exc
    return True


def compile_query(text: str, syntax: Syntax, case_sensitive: bool | None = None) -> CompiledQuery:
    """Compile a query; 3006 for an empty query, a bad regex, one that can match the empty string on every line,
    or one that runs out of time or memory on a probe line (it would on real lines, later and slower)."""
    # A phrase of whitespace is a search (``rg -F $'\t'``); for the other syntaxes it says nothing.
    if not text or (syntax != "phrase" and not text.strip()):
        raise _invalid("the query is empty", query=text)
    if syntax == "phrase" and "\n" in text:
        raise _invalid("a phrase matches within one line (as rg does without -U); this one holds a line break, so "
                       "it could match nothing: search for one line's part", query=text)
    if len(text) > MAX_QUERY_CHARS:
        raise _invalid(f"the query is longer than {MAX_QUERY_CHARS} characters", length=len(text))
    sensitive = (syntax != "text") if case_sensitive is None else case_sensitive
    flags = re.MULTILINE | (0 if sensitive else re.IGNORECASE)
    fragments: list[Fragment] = []
    if syntax == "text":
        terms = text.split()
        patterns: tuple[Pattern, ...] = tuple(re.compile(re.escape(t), flags) for t in terms)
        for term in terms:
            fragments += literal_fragments(term, case_sensitive=sensitive)
    elif syntax == "phrase":
        patterns = (re.compile(re.escape(text), flags),)
        fragments = literal_fragments(text, case_sensitive=sensitive)
    elif syntax == "identifier":
        patterns = (re.compile(r"(?<!\w)" + re.escape(text) + r"(?!\w)", flags),)
        fragments = literal_fragments(text, bounded_left=True, bounded_right=True, case_sensitive=sensitive)
    else:
        try:
            # Matched with the ``regex`` engine, which takes a timeout and lets other threads run meanwhile: ``re``
            # holds the GIL for a whole match, and ``(a+)+$`` on 43 a's froze the server (health, SIGTERM too).
            bounded = regex.compile(text, (regex.MULTILINE | (0 if sensitive else regex.IGNORECASE)) | regex.V0)
        except (regex.error, RecursionError, OverflowError, ValueError) as exc:
            raise _invalid(f"invalid regular expression: {exc}", query=text) from exc
        if _matches_every_line(bounded):
            raise _invalid("the regular expression matches an empty string on any line, so it would match every "
                           "line; anchor it (`^\\s*$` finds blank lines) or make it need a character", query=text)
        patterns = (bounded,)
        required_runs = _regex_required_literals(text, flags)
        if any("\n" in run for run in required_runs):
            # Matching is per line (``scan._line_spans``, as rg does): silence would read as "not there".
            raise _invalid("a regular expression matches within one line (as rg does without -U); this one "
                           "needs a line break (\\n), so it could match nothing: search for one line's part",
                           query=text)
        for required in required_runs:
            fragments += literal_fragments(required)  # never cased: ``(?i:...)`` may ignore case inside
    literal = (re.compile(re.escape(text), re.IGNORECASE)
               if syntax in ("phrase", "identifier") and not sensitive else None)
    needles = text.split() if syntax == "text" else [text]
    folded = (tuple(n.lower() for n in needles)
              if syntax != "regex" and not sensitive and all(n.isascii() for n in needles) else ())
    return CompiledQuery(text=text, syntax=syntax, case_sensitive=sensitive, patterns=patterns,
                         fragments=tuple(fragments), literal=literal, folded=folded)
