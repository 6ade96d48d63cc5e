"""Diff stats and unified diffs for deltas.

Stats are counted per edited segment (the old lines an edit covers against the new lines it produced)
with difflib, so an edit that rewrites 10 lines but changes one reports ``+1 -1`` like ``git diff``
would, without diffing whole files on the write path. Whole-file unified diffs are only built for dry
runs, where the caller asked to see them.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def count_changes(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """``(insertions, deletions)`` between two line lists."""
    if not old or not new:
        return len(new), len(old)
    insertions = deletions = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            deletions += i2 - i1
            insertions += j2 - j1
    return insertions, deletions


def unified(old_path: str | None, new_path: str | None, old: Sequence[str], new: Sequence[str]) -> str:
    """A git-style unified diff (3 lines of context) of one file; ``None`` paths mean created/deleted."""
    lines = list(difflib.unified_diff(
        list(old), list(new),
        fromfile=f"a/{old_path}" if old_path else "/dev/null",
        tofile=f"b/{new_path}" if new_path else "/dev/null",
        lineterm="", n=3,
    ))
    if not lines and old_path != new_path:
        lines = [f"rename from {old_path}", f"rename to {new_path}"]
    return "\n".join(lines) + "\n" if lines else ""


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
