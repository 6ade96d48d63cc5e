"""``getattr(self, <computed name>)``: a use of the members of the instance's classes the name may spell.

A literal name is a dynamic site like any other (``impact_dynamic``); a computed one names nothing the index can
match, so without this rule packaging's ``getattr(self, f"_compare_{self._operators[op]}")`` in
``Specifier._get_operator`` left a change to ``Specifier._compare_compatible`` with no test (18 failed). The name
is unknown, the receiver is not: ``self``/``cls`` inside a method of class ``C`` is an instance of ``C`` or of a
subclass, so the site may reach a member of ``C``, of its bases, or of a class deriving from it. A constant
prefix (``f"_compare_{...}"``, ``"on_" + event``) narrows the names to those it starts. Other receivers with a
computed name stay unknown to the walk (every member of every class would be too wide a net to be useful).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping

from codeplane.testing.impact_code import ReadLines

#: ``getattr(self, `` or ``getattr(cls, ``, arguments possibly on the next lines.
_RECEIVER = re.compile(r"getattr\s*\(\s*(?:self|cls)\s*,\s*")
#: The constant start of the name argument: an f-string's text before its first field, or a literal before ``+``.
_PREFIX = re.compile(r"""(?:[fF][rR]?|[rR][fF])(["'])([^"'{\\]*)\{|(["'])([^"'\\]*)\3\s*\+""")
_SELECT = ("SELECT file_id, start_line, start_col FROM st_dynamic_site WHERE pattern_type = 'getattr' "
           "AND has_non_literal_key = 1 ORDER BY site_id")


class ComputedSelfSites:
    """The ``getattr(self|cls, <computed>)`` sites of one walk: (file id, line, column, name prefix)."""

    def __init__(self, conn: sqlite3.Connection, path_of: Mapping[int, str], read_lines: ReadLines) -> None:
        self._conn = conn
        self._path_of = path_of
        self._read_lines = read_lines
        self._sites: list[tuple[int, int, int, str]] | None = None

    def sites(self) -> list[tuple[int, int, int, str]]:
        if self._sites is None:
            self._sites = []
            for file_id, line, col in self._conn.execute(_SELECT):
                found = self._read(int(file_id), int(line), int(col))
                if found is not None:
                    self._sites.append((int(file_id), int(line), int(col), found))
        return self._sites

    def _read(self, file_id: int, line: int, col: int) -> str | None:
        """The name prefix at a site whose receiver is ``self``/``cls`` ("" for none), else None."""
        lines = self._read_lines(self._path_of.get(file_id, ""))
        if not 0 < line <= len(lines):
            return None
        text = " ".join([lines[line - 1][col:], *lines[line:line + 2]])  # ``getattr(`` then the arguments below
        receiver = _RECEIVER.match(text)
        if receiver is None:
            return None
        prefix = _PREFIX.match(text, receiver.end())
        if prefix is None:
            return ""
        return prefix.group(2) if prefix.group(2) is not None else prefix.group(4) or ""
