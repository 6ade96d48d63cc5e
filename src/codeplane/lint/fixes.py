"""A linter's fixed text turned into mutation-engine edits, so fixes reach the tree like any other write.

Linters never write the work tree here: each fixer reads the bytes CodePlane hands it (ruff on stdin) or
is checked to have seen the bytes CodePlane read (eslint, read before and after its run) and returns the
fixed text. Each changed run of lines becomes one :class:`UpdateSpan` pinned by ``expected_file_sha256``
(the bytes the fix was computed from) and ``expected_content``, so a file that changed since makes the
whole batch fail with nothing written.
"""

from __future__ import annotations

import difflib

from codeplane.core.hashing import sha256_bytes
from codeplane.mutation import UpdateSpan

_BOM = "\ufeff"


def decode(data: bytes) -> str | None:
    """The text a fixer works on, or ``None`` for content fixes cannot be mapped back onto line spans
    (not UTF-8, or ``\\r``-only line endings)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = text.removeprefix(_BOM)
    if "\r" in text and "\n" not in text:
        return None
    return text


def _lines(text: str) -> list[str]:
    """Lines with their terminators, split on ``\\n`` only: the engine's line numbering (mutation/document.py)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def span_edits(path: str, original: bytes, fixed: str, *, max_edits: int) -> list[UpdateSpan]:
    """Edits turning the file whose bytes were ``original`` into ``fixed``; one edit per changed run of
    lines, or one edit spanning them all when there would be more than ``max_edits``."""
    text = decode(original)
    if text is None or fixed.removeprefix(_BOM) == text:
        return []
    old, new = _lines(text), _lines(fixed.removeprefix(_BOM))
    blocks = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(blocks) > max_edits:
        blocks = [("replace", blocks[0][1], blocks[-1][2], blocks[0][3], blocks[-1][4])]
    sha = sha256_bytes(original)
    edits: list[UpdateSpan] = []
    for _tag, i1, i2, j1, j2 in blocks:
        edits.append(UpdateSpan(
            path=path, expected_file_sha256=sha, start_line=i1 + 1, end_line=i2,
            new_content="".join(new[j1:j2]), expected_content="".join(old[i1:i2]) if i2 > i1 else None))
    return edits
