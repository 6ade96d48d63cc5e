"""The repository's dominant line ending, for new files and for files that have no line break yet.

Sampled from files in git's index (evenly spread, deterministic), counting CRLF against lone LF in their
first bytes. A repository without tracked text files defaults to LF.
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from codeplane.mutation.document import LineEnding
from codeplane.repo.content import is_binary

_SAMPLE_FILES = 64
_SAMPLE_BYTES = 8192


def dominant_line_ending(root: Path) -> LineEnding:
    try:
        repo = pygit2.Repository(str(root))
        paths = [entry.path for entry in repo.index]
    except (pygit2.GitError, KeyError, ValueError):
        return "LF"
    step = max(1, len(paths) // _SAMPLE_FILES)
    crlf = lf = 0
    for rel in paths[::step][:_SAMPLE_FILES]:
        try:
            with (root / rel).open("rb") as handle:
                head = handle.read(_SAMPLE_BYTES)
        except OSError:
            continue
        if is_binary(head):
            continue
        pairs = head.count(b"\r\n")
        crlf += pairs
        lf += head.count(b"\n") - pairs
    return "CRLF" if crlf > lf else "LF"
