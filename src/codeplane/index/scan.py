"""Exact match positions in one file's text: every hit is a real occurrence on disk.

Lines and columns are 1-based; columns count characters (code points) of the decoded line, lines are
split on ``\\n`` only (as ``rg`` does). ``end_column`` is exclusive. Snippets are the matching line
without its line terminator, cut to a window around the match when the line is very long.

Literal syntaxes are found with ``str.find`` (case-insensitive: in the lowered text where that finds exactly
what a plain ``IGNORECASE`` literal regex would, the regex elsewhere, see ``_folded``) and the
identifier boundary is checked by hand: Python's regex engine cannot use its fast literal search when
a pattern starts with a look-behind. After a rejected candidate the search resumes one character later,
so an occurrence overlapping a rejected one is still found.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import regex

from codeplane.index.query import REGEX_LINE_BUDGET_S, CompiledQuery, Pattern, regex_too_costly

#: Longest snippet or context line returned; longer lines are cut to a window around the match.
SNIPPET_CHARS = 300


@dataclass(frozen=True, slots=True)
class Match:
    line: int
    column: int
    end_line: int
    end_column: int
    #: Character offset of the start of the match's line (for snippets and context).
    line_start: int


def _is_word(ch: str) -> bool:
    # Python's ``\w`` for str patterns: alphanumeric per the Unicode database, or underscore.
    return ch == "_" or ch.isalnum()


class Lines:
    """Offsets → (line, column) for offsets visited in increasing order, plus line slicing."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._offset = 0
        self._line = 1

    def position(self, offset: int) -> tuple[int, int, int]:
        """``(line, column, line_start)`` of ``offset``."""
        if offset < self._offset:
            self._offset, self._line = 0, 1
        self._line += self.text.count("\n", self._offset, offset)
        self._offset = offset
        start = self.text.rfind("\n", 0, offset) + 1
        return self._line, offset - start + 1, start

    def line_at(self, start: int) -> str:
        end = self.text.find("\n", start)
        return self.text[start:end if end != -1 else len(self.text)].rstrip("\r")

    def before(self, start: int, count: int) -> list[str]:
        """Up to ``count`` lines before the line starting at ``start`` (oldest first)."""
        found: list[str] = []
        while count > 0 and start > 0:
            start = self.text.rfind("\n", 0, start - 1) + 1
            found.append(self.line_at(start))
            count -= 1
        found.reverse()
        return found

    def after(self, start: int, count: int) -> list[str]:
        found: list[str] = []
        while count > 0:
            end = self.text.find("\n", start)
            if end == -1 or end + 1 >= len(self.text):
                break
            start = end + 1
            found.append(self.line_at(start))
            count -= 1
        return found


#: The only characters outside ASCII that ``IGNORECASE`` matches to an ASCII one while ``str.lower`` does not map
#: them to it (the third, U+0130, lowercases to two characters, caught by the length check).
_FOLDS_TO_ASCII = ("\u0131", "\u017f")


def _folded(text: str) -> str | None:
    """``text`` lowercased, if an ASCII needle found in it by ``str.find`` is exactly a case-insensitive match of
    the regex engine at the same offset (``CompiledQuery.folded``); ``None`` where it might not be."""
    lowered = text.lower()
    if text.isascii():
        return lowered
    if len(lowered) != len(text) or any(ch in lowered for ch in _FOLDS_TO_ASCII):
        return None
    return lowered


def _literal_spans(text: str, query: CompiledQuery) -> Iterator[tuple[int, int]]:
    needle = query.text
    identifier = query.syntax == "identifier"
    literal = query.literal
    haystack = text
    if literal is not None and query.folded and (folded := _folded(text)) is not None:
        haystack, needle, literal = folded, query.folded[0], None
    size = len(needle)
    pos = 0
    while True:
        if literal is None:
            start = haystack.find(needle, pos)
            end = start + size
        else:
            found = literal.search(text, pos)
            start, end = (-1, -1) if found is None else found.span()
        if start < 0:
            return
        if identifier and ((start > 0 and _is_word(text[start - 1])) or (end < len(text) and _is_word(text[end]))):
            pos = start + 1
            continue
        yield start, end
        pos = end if end > start else start + 1


def _term_spans(text: str, query: CompiledQuery, term: int, folded: str | None = None) -> Iterator[tuple[int, int]]:
    """Non-overlapping occurrences of a ``text`` query's term, leftmost first (as ``finditer`` finds them).
    ``folded``: ``_folded(text)`` when the caller has it already."""
    haystack = folded if folded is not None else _folded(text) if query.folded else None
    if query.folded and haystack is not None:
        needle = query.folded[term]
        size = len(needle)
        start = haystack.find(needle)
        while start >= 0:
            yield start, start + size
            start = haystack.find(needle, start + size)
        return
    for found in query.patterns[term].finditer(text):
        yield found.span()


def _line_spans(text: str, pattern: Pattern) -> Iterator[tuple[int, int]]:
    # Like rg, a regex matches within one line: a match never spans a newline, so one that could (e.g.
    # ``^\s*x`` starting on a blank line) cannot swallow the real occurrence on the next line.
    start = 0
    lines = text.split("\n")
    if not lines[-1]:
        # What follows the last line break (or an empty file) is no line: ``^$`` must not match there, as in rg.
        lines.pop()
    for line in lines:
        for found in _bounded(pattern, line):
            yield start + found.start(), start + found.end()
        start += len(line) + 1


def _bounded(pattern: Pattern, line: str) -> Iterator[re.Match[str] | regex.Match[str]]:
    """``pattern``'s matches in ``line``; 3006 when a ``regex`` pattern backtracks past its budget there.

    ``regex``'s timeout counts the process's CPU time from the iterator's creation, over all its matches and every
    other thread's work meanwhile: one iterator over a line of a million ``a`` answered 3006 for the pattern ``a``
    after 12,000 hits, paged out over a few calls. So the budget is per match: an iterator that runs out after
    a match resumes from there with a fresh one (the same matches: ``\\G``, look-behind and empty matches behave
    as if uninterrupted), and only one that runs out before its first match refuses the pattern.
    """
    if not isinstance(pattern, regex.Pattern):
        yield from pattern.finditer(line)
        return
    last: regex.Match[str] | None = None
    while True:
        fresh = True
        try:
            # concurrent: the match lets go of the GIL, so the server answers other calls (and signals) meanwhile.
            for found in pattern.finditer(line, last.end() if last else 0, concurrent=True,
                                          timeout=REGEX_LINE_BUDGET_S):
                if fresh:
                    if last is not None and last.start() == last.end() == found.start() == found.end():
                        continue  # an empty match met again: the iterator had gone on from it
                    fresh = False
                last = found
                yield found
            return
        except TimeoutError as exc:
            if not fresh:
                continue
            raise regex_too_costly(pattern.pattern) from exc
        except MemoryError as exc:
            # A group called before it reads a character (past a line's text the probes lack) recurses until the
            # engine's stack gives out: a refusal like a timeout's, not an internal error.
            raise regex_too_costly(pattern.pattern) from exc


def _spans(text: str, query: CompiledQuery) -> Iterator[tuple[int, int]]:
    if query.syntax in ("phrase", "identifier"):
        return _literal_spans(text, query)
    if query.syntax == "regex":
        return _line_spans(text, query.patterns[0])
    return _term_spans(text, query, 0)


def find_matches(text: str, query: CompiledQuery) -> tuple[Lines, list[Match]]:
    """Every occurrence of ``query`` in ``text``, in order of position."""
    lines = Lines(text)
    return lines, list(iter_matches(text, query, lines))


def iter_matches(text: str, query: CompiledQuery, lines: Lines) -> Iterator[Match]:
    """The occurrences of ``query`` in ``text`` in order of position, found as they are consumed (a page that
    needs 20 hits from a file holding thousands stops scanning it there)."""
    if query.syntax == "text" and len(query.patterns) > 1:
        yield from _lines_with_every_term(text, query, lines)
        return
    for start, end in _spans(text, query):
        line, column, line_start = lines.position(start)
        if end > start and "\n" in text[start:end]:
            end_line = line + text.count("\n", start, end)
            end_column = end - (text.rfind("\n", 0, end) + 1) + 1
        else:
            end_line, end_column = line, column + (end - start)
        yield Match(line, column, end_line, end_column, line_start)


def _lines_with_every_term(text: str, query: CompiledQuery, lines: Lines) -> Iterator[Match]:
    """A multi-term ``text`` query: each line holding every term (one hit per line), spanning the leftmost term
    occurrence. The longest term's occurrences lead (likely the rarest: fewer lines to check); any term would find
    the same lines."""
    lead = max(range(len(query.patterns)), key=lambda n: len(query.folded[n] if query.folded else
                                                             query.patterns[n].pattern))
    folded = _folded(text) if query.folded else None
    seen: set[int] = set()
    for offset, _ in _term_spans(text, query, lead, folded):
        line, _, start = lines.position(offset)
        if start in seen:
            continue
        seen.add(start)
        if folded is not None:
            end = folded.find("\n", start)
            body = folded[start:end if end != -1 else len(folded)]
            spans = [(at, at + len(term)) for term in query.folded if (at := body.find(term)) != -1]
        else:
            body = lines.line_at(start)
            spans = [m.span() for m in (p.search(body) for p in query.patterns) if m is not None]
        if len(spans) == len(query.patterns):
            first, last = min(spans)
            yield Match(line, first + 1, line, last + 1, start)


def count_at_most(text: str, query: CompiledQuery, cap: int) -> int:
    """How many occurrences ``text`` holds, counting no further than ``cap`` (for estimates)."""
    count = 0
    for _ in _spans(text, query) if not (query.syntax == "text" and len(query.patterns) > 1) else \
            iter_matches(text, query, Lines(text)):
        count += 1
        if count >= cap:
            break
    return count


def snippet(line_text: str, column: int, end_column: int) -> str:
    """The line, or a window of it around ``[column, end_column)`` when it is longer than the limit."""
    if len(line_text) <= SNIPPET_CHARS:
        return line_text
    width = max(end_column - column, 0)
    start = max(0, min(column - 1 - (SNIPPET_CHARS - width) // 2, len(line_text) - SNIPPET_CHARS))
    return line_text[start:start + SNIPPET_CHARS]
