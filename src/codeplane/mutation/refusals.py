"""What a refused edit shows, so the agent can redo it without reading the file again (issue 16).

A 5002 is the moment an agent would otherwise spend a call re-reading: its text changed underneath, or the
old text it quoted is not there. So the refusal carries what the retry needs: the file's current SHA-256
(``actual_file_sha256``, the precondition a retry passes) and the *current* text where the edit was aimed —
the span's lines, the lines holding ``old_text`` (each place, when it is there more than once), or, when
``old_text`` is gone, the lines that most resemble it. Bounded: at most :data:`MAX_SHOWN_LINES` lines and
:data:`MAX_SHOWN_BYTES` bytes of text, lines cut at :data:`MAX_SHOWN_CHARS`; what does not fit is named as line
ranges (``more_lines``) to read.
Pure: works on a decoded :class:`Document`, never touches disk.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Any

from codeplane.mutation.document import Document, to_newline

#: Lines of context either side of a drifted span.
CONTEXT_LINES = 3
MAX_SHOWN_LINES = 40
MAX_SHOWN_CHARS = 400
MAX_SHOWN_BYTES = 2048
#: How alike (difflib ratio) a line must be to the quoted text's most telling line to be shown as where it went.
NEAR_CUTOFF = 0.6
#: A quoted line shorter than this (after stripping) says too little to look for lookalikes.
_NEAR_MIN_CHARS = 4


def current_text(doc: Document, start: int, end: int, *, context: int = 0) -> dict[str, Any]:
    """``{"current": [{"line", "text"}...]}`` for lines ``start - context .. end + context`` of ``doc``
    (clipped to the file), bounded; ``more_lines: "a-b"`` names the part of the range that did not fit."""
    if doc.line_count == 0:
        return {}
    lo = max(1, min(start, doc.line_count) - context)
    hi = min(doc.line_count, max(end, start) + context)
    return current_lines(doc, [(lo, hi)])


def current_lines(doc: Document, spans: Sequence[tuple[int, int]]) -> dict[str, Any]:
    """``current`` for the lines of several spans (1-based, inclusive, within the file), each line once, in file
    order, within the same bounds as one span; ``more_lines`` names what did not fit, a range per span left
    (``"7-9,15-15"``)."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    shown: list[dict[str, object]] = []
    used = 0
    for at, (lo, hi) in enumerate(merged):
        for n in range(lo, hi + 1):
            text = doc.line(n)[:MAX_SHOWN_CHARS]
            size = len(text.encode("utf-8")) + len(str(n)) + 2
            if shown and (len(shown) >= MAX_SHOWN_LINES or used + size > MAX_SHOWN_BYTES):
                left = [(n, hi), *merged[at + 1:]]
                return {"current": shown, "more_lines": ",".join(f"{a}-{b}" for a, b in left)}
            shown.append({"line": n, "text": text})
            used += size
    return {"current": shown} if shown else {}


def lines_of_text(doc: Document, text: str) -> tuple[int, int] | None:
    """The lines of ``text``'s first exact occurrence in ``doc`` (``\\n`` read as the file's line ending)."""
    for needle in (to_newline(text, doc.fmt.newline), text):
        at = doc.text.find(needle)
        if at != -1 and needle:
            return doc.line_of(at), doc.line_of(at + len(needle) - 1)
    return None


def nearest_lines(doc: Document, text: str) -> tuple[int, int] | None:
    """Where ``text`` most likely went: the lines around the line most like its most telling line (the longest
    one, stripped), if any line is at least :data:`NEAR_CUTOFF` alike; the first of equally alike lines."""
    block = [line.strip() for line in to_newline(text, "\n").strip("\n").split("\n")]
    at, anchor = max(enumerate(block), key=lambda item: (len(item[1]), -item[0]))
    if len(anchor) < _NEAR_MIN_CHARS:
        return None
    # seq2 is the fixed side: difflib caches its index, so each file line costs one comparison.
    matcher = SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(anchor)
    best, found = NEAR_CUTOFF, 0
    for n in range(1, doc.line_count + 1):
        matcher.set_seq1(doc.line(n).strip())
        if matcher.real_quick_ratio() < best or matcher.quick_ratio() < best:
            continue
        ratio = matcher.ratio()
        if ratio > best or (ratio == best and not found):
            best, found = ratio, n
    if not found:
        return None
    start = max(1, found - at)
    return start, min(doc.line_count, start + len(block) - 1)


def where_text_went(doc: Document, text: str) -> dict[str, Any]:
    """The current lines of ``text`` (exact), else of its nearest lookalike, else nothing."""
    span = lines_of_text(doc, text) or nearest_lines(doc, text)
    return current_text(doc, *span) if span else {}
