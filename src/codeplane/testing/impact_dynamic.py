"""The dynamic accesses of an index epoch by the literal they spell (``getattr(obj, "name")``, ``setattr``...).

The symbol walk asks, for every definition it reaches, which dynamic accesses spell its name: on Django that is
thousands of names per selection. One read of ``st_dynamic_site`` per epoch answers them all (a ``LIKE`` per
name scanned the table thousands of times). An edit makes a new epoch but changes the sites of its own files
only, so the next epoch's index is this one's without those files' sites, plus what they hold now: re-reading
the whole table after each write cost ~20 ms of every selection made right after it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

#: (site id, file id, line, column, pattern): a site id first, so a list sorts in the index's order.
_Site = tuple[int, int, int, int, str]
#: Files whose sites are read per query when an index is carried.
_CHUNK = 500
_SELECT = "SELECT site_id, file_id, start_line, start_col, pattern_type, extracted_literals FROM st_dynamic_site"


class DynamicSites:
    """Lowered literal → the sites spelling it. Built whole (``read``) or from the previous epoch's (``carried``);
    never changed once built, so walks of other threads may share it."""

    def __init__(self, by_literal: dict[str, list[_Site]], literals_of: dict[int, frozenset[str]]) -> None:
        self._by_literal = by_literal
        #: file id → the literals its sites spell: what a carry must take out when the file changed.
        self._literals_of = literals_of

    @classmethod
    def read(cls, conn: sqlite3.Connection) -> DynamicSites:
        found: dict[str, list[_Site]] = {}
        literals_of: dict[int, set[str]] = {}
        _add(found, literals_of, conn.execute(_SELECT))
        for sites in found.values():
            sites.sort()
        return cls(found, {f: frozenset(names) for f, names in literals_of.items()})

    def carried(self, conn: sqlite3.Connection, changed: Iterable[int]) -> DynamicSites:
        """The index of the epoch whose files differ from this one's only in ``changed`` (their contents)."""
        gone = set(changed)
        files = sorted(gone)
        by_literal = dict(self._by_literal)
        literals_of = {f: names for f, names in self._literals_of.items() if f not in gone}
        touched: set[str] = set()
        for file_id in files:
            for literal in self._literals_of.get(file_id, ()):
                touched.add(literal)
                by_literal[literal] = [site for site in by_literal[literal] if site[1] not in gone]
        added: dict[str, list[_Site]] = {}
        new_literals: dict[int, set[str]] = {}
        for start in range(0, len(files), _CHUNK):
            chunk = files[start:start + _CHUNK]
            _add(added, new_literals, conn.execute(f"{_SELECT} WHERE file_id IN ({','.join('?' * len(chunk))})",
                                                   chunk))
        for literal, sites in added.items():
            touched.add(literal)
            by_literal[literal] = [*by_literal.get(literal, ()), *sites]
        for literal in touched:
            if by_literal[literal]:
                by_literal[literal].sort()
            else:
                del by_literal[literal]
        literals_of.update((f, frozenset(names)) for f, names in new_literals.items())
        return DynamicSites(by_literal, literals_of)

    def spelling(self, name: str) -> list[tuple[int, int, int, str]]:
        """(file id, line, column, pattern) of the sites spelling ``name`` (case-insensitive), in site order."""
        return [site[1:] for site in self._by_literal.get(name.lower(), ())]


def _add(found: dict[str, list[_Site]], literals_of: dict[int, set[str]],
         rows: Iterable[tuple[Any, ...]]) -> None:
    for site, file_id, line, col, pattern, literals in rows:
        try:
            spelled = json.loads(literals)
        except (TypeError, ValueError):
            spelled = []
        if not isinstance(spelled, list):
            continue
        for text in {str(t).lower() for t in spelled}:
            found.setdefault(text, []).append((int(site), int(file_id), int(line), int(col), str(pattern)))
            literals_of.setdefault(int(file_id), set()).add(text)
