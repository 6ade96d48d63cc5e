"""Diff stats and unified diffs for deltas.

Stats are counted per edited segment (the old lines an edit covers against the new lines it produced)
with difflib, so an edit that rewrites 10 lines but changes one reports ``+1 -1`` like ``git diff``
would, without diffing whole files on the write path. Whole-file unified diffs are only built for dry
runs, where the caller asked to see them.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Literal

#: Above this many line pairs in the part of two texts that differs, difflib's popular-line heuristic is used
#: (``autojunk``): without it, matching is quadratic in repeated lines (12,000 ``}`` lines took 14 s).
_EXACT_PAIRS = 4_000_000

Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]


def _opcodes(old: Sequence[str], new: Sequence[str]) -> list[Opcode]:
    """difflib's opcodes from ``old`` to ``new``, the common head and tail matched first (an edit changes a part
    of a file: the rest is never handed to the matcher)."""
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    a, b = old[head:len(old) - tail], new[head:len(new) - tail]
    codes: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    if a or b:
        exact = len(a) * len(b) <= _EXACT_PAIRS
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=not exact).get_opcodes():
            codes.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        codes.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return codes


class _Given(difflib.SequenceMatcher[str]):
    """difflib's hunk grouping over opcodes computed here (not by difflib's own matching)."""

    def __init__(self, codes: list[Opcode]) -> None:
        super().__init__(None, [], [])
        self._codes = codes

    def get_opcodes(self) -> list[Opcode]:
        return list(self._codes)


def count_changes(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """``(insertions, deletions)`` between two line lists."""
    if not old or not new:
        return len(new), len(old)
    insertions = deletions = 0
    for tag, i1, i2, j1, j2 in _opcodes(old, new):
        if tag != "equal":
            deletions += i2 - i1
            insertions += j2 - j1
    return insertions, deletions


def unified(old_path: str | None, new_path: str | None, old: Sequence[str], new: Sequence[str]) -> str:
    """A git-style unified diff (3 lines of context) of one file; ``None`` paths mean created/deleted."""
    lines: list[str] = []
    for group in _Given(_opcodes(old, new)).get_grouped_opcodes(3):
        if not lines:
            lines += [f"--- a/{old_path}" if old_path else "--- /dev/null",
                      f"+++ b/{new_path}" if new_path else "+++ /dev/null"]
        first, last = group[0], group[-1]
        lines.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in old[i1:i2]]
                continue
            lines += ["-" + line for line in old[i1:i2]]
            lines += ["+" + line for line in new[j1:j2]]
    # Only a move with equal contents is a bare rename; an empty file created or deleted has no diff at all
    # (its A/D mark says everything: git prints only a mode line).
    if not lines and old_path and new_path and old_path != new_path:
        lines = [f"rename from {old_path}", f"rename to {new_path}"]
    return "\n".join(lines) + "\n" if lines else ""


def _range(start: int, stop: int) -> str:
    """A hunk side as ``git diff`` writes it (difflib's ``_format_range_unified``)."""
    length = stop - start
    beginning = start + 1 if length else start
    return str(beginning) if length == 1 else f"{beginning},{length}"


def segment_hunk(old_start: int, old: Sequence[str], new_start: int, new: Sequence[str]) -> str:
    """A zero-context hunk for one edited segment (the ledger's short diff)."""
    header = f"@@ -{old_start},{len(old)} +{new_start},{len(new)} @@"
    return "\n".join([header, *(f"-{line}" for line in old), *(f"+{line}" for line in new)]) + "\n"


def bounded(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut at a line boundary to at most ``limit`` characters, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    cut = text.rfind("\n", 0, limit)
    return text[:cut + 1 if cut > 0 else limit], True
