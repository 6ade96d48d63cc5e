"""The line ending new text gets: the path's ``.gitattributes`` first, else the repository's dominant one.

``eol=lf`` / ``eol=crlf`` is how a repository declares a path's work-tree line ending (a ``*.sh`` that must stay
LF in a Windows checkout, a ``*.bat`` that must be CRLF); ``-text`` (``binary``) says git converts nothing, so
the text is written as given. Only without either does the dominant ending decide: sampled from files in
git's index (evenly spread, deterministic), counting CRLF against lone LF in their first bytes. A repository
without tracked text files defaults to LF.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pygit2

from codeplane.mutation.document import LineEnding
from codeplane.repo.content import is_binary

_SAMPLE_FILES = 64
_SAMPLE_BYTES = 8192

#: A path's declared line ending: ``as-given`` for ``-text``; ``None`` when its attributes say nothing.
Declared = LineEnding | Literal["as-given"] | None


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


class Attributes:
    """``.gitattributes`` line-ending answers for one batch (the repository opened once, on first use)."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._repo: pygit2.Repository | Literal[False] | None = None

    def declared(self, rel: str) -> Declared:
        """The ending ``rel``'s attributes declare, as git applies them on checkout: ``-text`` converts nothing
        (its ``eol`` is ignored); otherwise ``eol`` decides, whether ``text`` is set, ``auto`` or unspecified."""
        if not self._attribute_files(rel):
            return None  # no attributes file on its way: nothing to ask git (opening it costs every batch)
        if self._repo is None:
            try:
                self._repo = pygit2.Repository(str(self._root))
            except (pygit2.GitError, KeyError, ValueError):
                self._repo = False
        if self._repo is False:
            return None
        try:
            text, eol = self._repo.get_attr(rel, "text"), self._repo.get_attr(rel, "eol")
        except (pygit2.GitError, ValueError):
            return None
        if text is False:
            return "as-given"
        if eol == "lf":
            return "LF"
        return "CRLF" if eol == "crlf" else None

    def _attribute_files(self, rel: str) -> bool:
        """Whether a ``.gitattributes`` in ``rel``'s directory or above, or ``.git/info/attributes``, exists."""
        parts = rel.split("/")[:-1]
        dirs = [self._root.joinpath(*parts[:depth]) for depth in range(len(parts) + 1)]
        return (self._root / ".git" / "info" / "attributes").is_file() or any(
            (d / ".gitattributes").is_file() for d in dirs)
