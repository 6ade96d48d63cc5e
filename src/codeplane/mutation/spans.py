"""Turning span and text edits into character replacements on one document (pure, no I/O).

A span carries the caller's belief about the file: its line numbers and, optionally, the text it
expects there. When the text is not at the given lines, the span has drifted (lines were added or
removed above it since the caller read the file): we look for the expected block within
``window`` lines of the original start and accept it only if exactly one match exists there.
Everything else is a precondition failure (5002) that shows the current text around the span
(``refusals.py``), as does ``old_text`` that is not in the file (the lines most like it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.mutation.document import Document, to_newline
from codeplane.mutation.refusals import CONTEXT_LINES, current_lines, current_text, where_text_went

MAX_CANDIDATES = 20


@dataclass(frozen=True)
class Replacement:
    """Replace ``text[start:end]`` of the original document with ``new``; ``edit_index`` for errors."""

    start: int
    end: int
    new: str
    edit_index: int


@dataclass(frozen=True)
class Correction:
    original: tuple[int, int]
    corrected: tuple[int, int]


def expected_lines(expected: str) -> list[str]:
    """The lines of an ``expected_content`` block, line-ending-insensitive, one final newline optional."""
    folded = to_newline(expected, "\n")
    if folded.endswith("\n"):
        folded = folded[:-1]
    return folded.split("\n") if expected else []


def find_block(lines: Sequence[str], block: Sequence[str], lo: int, hi: int) -> list[int]:
    """0-based starts ``i`` in ``[lo, hi]`` with ``lines[i:i+len(block)] == block``."""
    size = len(block)
    found: list[int] = []
    if size == 0:
        return found
    first = block[0]
    for i in range(max(lo, 0), min(hi, len(lines) - size) + 1):
        if lines[i] == first and list(lines[i:i + size]) == list(block):
            found.append(i)
    return found


def _drifted(path: str, index: int, doc: Document, start: int, end: int, *, reason: str,
             candidates: Sequence[int] = ()) -> CodePlaneError:
    # The span is the caller's own: the lines around it, as they are now, say what it needs.
    shown = current_text(doc, start, end, context=CONTEXT_LINES)
    return CodePlaneError(
        ErrorCode.MUTATION_PRECONDITION_FAILED, f"{path}: expected_content {reason}" + ("; now:" if shown else ""),
        details={"path": path, "edit_index": index, "reason": reason, **shown,
                 **({"candidates": [c + 1 for c in candidates[:MAX_CANDIDATES]]} if candidates else {})},
    )


def anchor_span(doc: Document, path: str, index: int, start: int, end: int, *, expected: str | None,
                window: int, lines: Sequence[str] | None = None) -> tuple[int, int, Correction | None]:
    """The span to edit: ``(start, end)`` itself, or the unique nearby match of ``expected``.

    Raises 5002 when the span is out of range, or when ``expected`` is neither at the span nor found
    exactly once within ``window`` lines.
    """
    count = doc.line_count
    in_range = start <= count + 1 and end <= count
    if expected is None or (not in_range and not expected):
        if not in_range:
            last = current_text(doc, count - CONTEXT_LINES, count)
            raise CodePlaneError(
                ErrorCode.MUTATION_PRECONDITION_FAILED,
                f"{path}: lines {start}-{end} are past its end" + ("; last lines:" if last else ""),
                details={"path": path, "edit_index": index, "line_count": count, "reason": "span out of range",
                         **last},
            )
        return start, end, None
    # A span pushed past the end by lines removed above it can still be re-anchored by its text.
    block = expected_lines(expected)
    all_lines = lines if lines is not None else doc.lines()
    if in_range and list(all_lines[start - 1:end]) == block:
        return start, end, None
    if not block:
        raise _drifted(path, index, doc, start, end, reason="is empty but the span is not")
    matches = find_block(all_lines, block, start - 1 - window, start - 1 + window)
    if len(matches) != 1:
        reason = "was not found near the span" if not matches else "matches more than once near the span"
        raise _drifted(path, index, doc, start, end, reason=reason, candidates=matches)
    new_start = matches[0] + 1
    new_end = new_start + len(block) - 1
    return new_start, new_end, Correction(original=(start, end), corrected=(new_start, new_end))


def span_replacement(doc: Document, start: int, end: int, new_content: str, index: int) -> Replacement:
    """Replace lines ``start..end`` (an empty span inserts before ``start``) with ``new_content``."""
    begin, stop = doc.offset(start), doc.offset(end + 1)
    # The replaced lines' own terminator when they agree (a CRLF line of a mostly-LF file stays CRLF), else the
    # file's.
    newline = _own_newline(doc.text[begin:stop]) if end >= start else None
    newline = newline or doc.fmt.newline
    new = to_newline(new_content, newline)
    at_eof = stop == len(doc.text)
    if end >= start:  # replacing lines: keep the terminator the old last line had
        had_newline = doc.text[begin:stop].endswith("\n")
        if new and had_newline and not new.endswith(newline):
            new += newline
    elif new:  # inserting whole lines
        if at_eof and doc.text and not doc.ends_with_newline:
            new = newline + new  # do not glue the insertion onto an unterminated last line
        elif not new.endswith(newline):
            new += newline
    return Replacement(begin, stop, new, index)


def _own_newline(text: str) -> str | None:
    """The one line terminator every terminated line of ``text`` uses, or ``None`` (none, or both)."""
    crlf = text.count("\r\n")
    kinds = [ending for ending, n in (("\r\n", crlf), ("\n", text.count("\n") - crlf)) if n]
    return kinds[0] if len(kinds) == 1 else None


@dataclass(frozen=True)
class Reindent:
    """An ``old_text`` found only with its later lines indented by ``indent`` more (a block ``search`` showed
    without the indentation its lines share): ``new_text``'s later lines were indented alike."""

    edit_index: int
    line: int
    indent: str


def text_replacements(doc: Document, path: str, index: int, *, old_text: str, new_text: str,
                      replace_all: bool) -> tuple[list[Replacement], Reindent | None]:
    """Exact occurrences of ``old_text`` (``\\n`` read as the file's line ending). 5002 unless it occurs
    exactly once, or at least once with ``replace_all``. A block of several lines found nowhere as given is
    looked for once more as ``search`` dedents it: every line after the first indented by the whitespace that
    precedes the first on its line; one such place (not with ``replace_all``) is taken, with ``new_text``
    indented alike, and said (:class:`Reindent`)."""
    newline = doc.fmt.newline
    # The file's own line ending first; the text exactly as given second (files with mixed endings).
    needle, replacement = to_newline(old_text, newline), to_newline(new_text, newline)
    hits = _occurrences(doc.text, needle)
    if not hits and needle != old_text:
        needle, replacement = old_text, new_text
        hits = _occurrences(doc.text, needle)
    if not hits and not replace_all:
        found = _reindented(doc.text, to_newline(old_text, newline), newline)
        if len(found) == 1:
            start, end, indent = found[0]
            new = to_newline(new_text, newline).split(newline)
            indented = newline.join([new[0], *(indent + line if line.strip() else line for line in new[1:])])
            return [Replacement(start, end, indented, index)], Reindent(index, doc.line_of(start), indent)
    if not hits:
        # The lines most like it (it was edited meanwhile, or misquoted) spare a re-read.
        shown = where_text_went(doc, old_text)
        raise CodePlaneError(
            ErrorCode.MUTATION_PRECONDITION_FAILED,
            f"{path}: old_text was not found" + ("; most like it:" if shown else ""),
            details={"path": path, "edit_index": index, "reason": "old_text was not found", **shown},
        )
    if len(hits) > 1 and not replace_all:
        # Each place's lines: the context a unique old_text needs is there, without a re-read (qa58 F5).
        listed = hits[:MAX_CANDIDATES]
        shown = current_lines(doc, [(doc.line_of(h), doc.line_of(h + max(len(needle), 1) - 1)) for h in listed])
        raise CodePlaneError(
            ErrorCode.MUTATION_PRECONDITION_FAILED,
            f"{path}: old_text occurs {len(hits)} times; add context or set replace_all",
            details={"path": path, "edit_index": index, "reason": "old_text is not unique",
                     "candidates": [doc.line_of(h) for h in listed], **shown},
        )
    return [Replacement(h, h + len(needle), replacement, index) for h in hits], None


#: Places looked at for a re-indented ``old_text`` (its first line's occurrences), a bound on a common line.
_REINDENT_TRIES = 1000


def _reindented(text: str, needle: str, newline: str) -> list[tuple[int, int, str]]:
    """``(start, end, indent)`` of each place where ``needle`` (several lines) is, once its lines after the first
    get ``indent``, the whitespace before its first line's start there; blank lines match blank lines."""
    lines = needle.split(newline)
    if len(lines) < 2 or not lines[0].strip() or newline not in ("\n", "\r\n"):
        return []
    found: list[tuple[int, int, str]] = []
    pos, tries = text.find(lines[0]), 0
    while pos != -1 and tries < _REINDENT_TRIES and len(found) < 2:
        tries += 1
        line_start = text.rfind("\n", 0, pos) + 1
        indent = text[line_start:pos]
        if indent and not indent.strip() and (end := _matches_below(text, pos + len(lines[0]), lines[1:], indent,
                                                                     newline)) is not None:
            found.append((pos, end, indent))
        pos = text.find(lines[0], pos + 1)
    return found


def _matches_below(text: str, at: int, lines: Sequence[str], indent: str, newline: str) -> int | None:
    """Where the match of ``lines`` (each after a line break, indented by ``indent``) ends, or ``None``; the last
    line may end mid-line, as ``old_text`` may."""
    for n, line in enumerate(lines):
        if not text.startswith(newline, at):
            return None
        at += len(newline)
        if not line.strip():  # shown empty by the search: any whitespace-only line
            if n == len(lines) - 1 and not line:
                return at  # old_text ended with a line break
            end = text.find(newline, at)
            end = len(text) if end == -1 else end
            if text[at:end].strip():
                return None
            at = end
            continue
        if not text.startswith(indent + line, at):
            return None
        at += len(indent) + len(line)
    return at


def _occurrences(text: str, needle: str) -> list[int]:
    hits: list[int] = []
    pos = text.find(needle)
    while pos != -1:
        hits.append(pos)
        pos = text.find(needle, pos + len(needle))
    return hits


def check_disjoint(path: str, replacements: Sequence[Replacement]) -> list[Replacement]:
    """Sorted replacements; 5006 if two overlap or two insert at the same point (order would be a guess)."""
    ordered = sorted(replacements, key=lambda r: (r.start, r.end, r.edit_index))
    for before, after in pairwise(ordered):
        same_insertion = before.start == before.end == after.start == after.end
        if after.start < before.end or same_insertion:
            raise CodePlaneError(
                ErrorCode.EDIT_CONFLICT,
                f"{path}: edits {before.edit_index} and {after.edit_index} overlap",
                details={"path": path, "edits": sorted({before.edit_index, after.edit_index})},
            )
    return ordered


def apply_replacements(text: str, ordered: Sequence[Replacement]) -> str:
    """``text`` with disjoint, sorted replacements applied in one pass."""
    parts: list[str] = []
    cursor = 0
    for rep in ordered:
        parts.append(text[cursor:rep.start])
        parts.append(rep.new)
        cursor = rep.end
    parts.append(text[cursor:])
    return "".join(parts)
