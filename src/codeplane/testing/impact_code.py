"""The repository's Python definitions as one impact walk reads them (issue 22).

:class:`PythonCode` answers the questions :class:`~codeplane.testing.impact_symbols.SymbolWalk` asks of the code
rather than of the change: the definitions of a file and the innermost one around a line, a definition's
decorator block (decorators lie above its span), its enclosing definitions, and a class's repository bases
(transitively; ``None`` when one cannot be resolved) or whether one comes from another library. Answers that
every walk of an index epoch reads alike live in :class:`WalkFacts`; the rest is memoised per walk.
"""

from __future__ import annotations

import bisect
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codeplane.testing.impact_reach import Def
from codeplane.testing.impact_text import builtin_class, header_end, keyword_at
from codeplane.testing.impact_walkfacts import WalkFacts

#: Lines above a ``def`` looked at for its decorators.
_DECORATOR_LINES = 400

ReadLines = Callable[[str], Sequence[str]]


class PythonCode:
    """Definitions, decorators and class bases over one read transaction; ``read_lines``: a file's current
    lines (``()`` when unreadable)."""

    def __init__(self, conn: sqlite3.Connection, path_of: Mapping[int, str], read_lines: ReadLines,
                 facts: WalkFacts) -> None:
        self.conn = conn
        self.facts = facts
        self.path_of = path_of
        self._read_lines = read_lines
        self._texts: dict[str, Sequence[str]] = {}
        self._defs = facts.defs
        self._starts = facts.starts
        self._by_uid = facts.by_uid
        self._base_memo: dict[str, frozenset[str] | None] = {}
        self._external_memo: dict[str, bool] = {}
        self._decorators: dict[str, tuple[int, str]] = {}

    def rows(self, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        """A query's rows, read once per index epoch (``WalkFacts``): walks repeat the same questions."""
        return self.facts.rows(self.conn, sql, params)

    def read_lines(self, path: str) -> Sequence[str]:
        """A file's lines, read once per walk."""
        lines = self._texts.get(path)
        if lines is None:
            lines = self._texts[path] = self._read_lines(path) if path else ()
        return lines

    def defs_of(self, file_id: int) -> list[Def]:
        found = self._defs.get(file_id)
        if found is None:
            found = [Def(str(u), file_id, str(k), str(n), str(lp), str(q), int(s), int(e), p)
                     for u, k, n, lp, q, s, e, p in self.conn.execute(
                         "SELECT def_uid, kind, name, lexical_path, qualified_name, start_line, end_line, parent_uid "
                         "FROM st_def WHERE file_id = ? ORDER BY start_line, -end_line", (file_id,))]
            self._defs[file_id] = found
            self._by_uid.update((d.uid, d) for d in found)
        return found

    def get(self, uid: str | None) -> Def | None:
        if uid is None:
            return None
        if uid not in self._by_uid:
            found = self.rows("SELECT file_id FROM st_def WHERE def_uid = ?", (uid,))
            if not found:
                return None
            self.defs_of(int(found[0][0]))
        return self._by_uid.get(uid)

    def innermost(self, file_id: int, line: int) -> Def | None:
        defs = self.defs_of(file_id)
        starts = self._starts.get(file_id)
        if starts is None:
            starts = self._starts[file_id] = [d.start for d in defs]
        # Sorted by start (outer first on ties): the innermost container is the nearest one at or before.
        for i in range(bisect.bisect_right(starts, line) - 1, -1, -1):
            if defs[i].end >= line:
                return defs[i]
        return self._decorated(file_id, line)

    def _decorated(self, file_id: int, line: int) -> Def | None:
        """The definition whose decorator block holds ``line`` (decorators lie outside a def's span)."""
        following = next((d for d in self.defs_of(file_id) if d.start > line), None)
        if following is None:
            return None
        top, _ = self.decorator_block(following)
        return following if top <= line else None

    def decorator_block(self, d: Def) -> tuple[int, str]:
        """(first line, text) of the decorators right above ``d`` (``(d.start, "")`` when there are none):
        the lines above the ``def`` up to the topmost one at its indentation starting with ``@``, as long as
        every line at that indentation in between is a decorator, a comment or closes a bracket (``)``, ``]``)
        and every other one is indented deeper (a decorator's arguments: a ``parametrize`` table may run for
        hundreds of lines). Any other line ends the block: a statement there is module code, not a decorator
        (then the lines below it are attributed to no definition: module level, the safe answer)."""
        known = self._decorators.get(d.uid)
        if known is None:
            known = self._decorators[d.uid] = self._decorator_block(d)
        return known

    def _decorator_block(self, d: Def) -> tuple[int, str]:
        lines = self.read_lines(self.path_of.get(d.file_id, ""))
        if not 0 < d.start <= len(lines):
            return d.start, ""
        head = lines[d.start - 1]
        indent = len(head) - len(head.lstrip())
        top = d.start
        line = d.start - 1
        while line >= 1 and d.start - line <= _DECORATOR_LINES:
            text = lines[line - 1]
            body = text.lstrip()
            depth = len(text) - len(body)
            if body and depth == indent and body.startswith("@"):
                top = line
            elif body and (depth < indent or (depth == indent and not body.startswith((")", "]", "}", "#")))):
                break
            line -= 1
        return top, " ".join(x.strip() for x in lines[top - 1:d.start - 1])

    def ancestors(self, d: Def) -> list[Def]:
        """``d`` and its enclosing definitions, innermost first."""
        chain = [d]
        parent = self.get(d.parent)
        while parent is not None and len(chain) < 32:
            chain.append(parent)
            parent = self.get(parent.parent)
        return chain

    def _may_dispatch(self, user: Def | None, used: Def) -> bool:
        """Whether ``self.name``/``cls.name`` inside ``user`` can be ``used``: only a method or attribute of the
        enclosing class, of a base or of a subclass (unknown bases: yes)."""
        owner = self.get(used.parent)
        if owner is None or owner.kind != "class":
            return False
        enclosing = next((a for a in self.ancestors(user) if a.kind == "class"), None) if user else None
        if enclosing is None or enclosing.uid == owner.uid:
            return True
        mine = self._bases(enclosing)
        if mine is None or owner.uid in mine:
            return True
        theirs = self._bases(owner)
        return theirs is None or enclosing.uid in theirs

    def _generated(self, cls: Def) -> bool:
        """Whether making an instance of ``cls`` may run code its source does not show: it, or a repository
        base, is decorated or names a metaclass, or a base is another library's or unknown."""
        bases = self._bases(cls)
        if bases is None or self._external_base(cls):
            return True
        for d in (cls, *(b for uid in sorted(bases) if (b := self.get(uid)) is not None)):
            lines = self.read_lines(self.path_of.get(d.file_id, ""))
            header = " ".join(lines[d.start - 1:header_end(lines, d.start)])
            if not lines or self.decorator_block(d)[1] or "metaclass" in header:
                return True
        return False

    def _bases(self, cls: Def) -> frozenset[str] | None:
        """Every repository base class of ``cls``, transitively; None when a base cannot be resolved (a name
        under a star import, a dynamic base). Bases imported from outside the repository are left out: they
        cannot dispatch to a repository method unless a repository class derives from ``cls``."""
        if cls.uid in self._base_memo:
            return self._base_memo[cls.uid]
        self._base_memo[cls.uid] = frozenset()  # cycles
        lines = self.read_lines(self.path_of.get(cls.file_id, ""))
        last = header_end(lines, cls.start)
        found: set[str] = set()
        unknown = False
        loose = cls.file_id in self.facts.loose_files(self.conn)
        for target, via, imported, line, col in self.rows(
                "SELECT r.target_uid, i.resolved_file_id IS NULL AND i.import_uid IS NOT NULL, "
                "r.via_import_uid IS NOT NULL, r.start_line, r.start_col FROM st_ref r LEFT JOIN st_import i "
                "ON i.import_uid = r.via_import_uid WHERE r.file_id = ? AND r.start_line BETWEEN ? AND ? "
                "AND r.role = 'REFERENCE'", (cls.file_id, cls.start, last)):
            if self._is_keyword(self.path_of.get(cls.file_id, ""), int(line), int(col)):
                continue
            if target is None and not imported and not loose and builtin_class(lines, int(line), int(col)):
                continue  # ``object``, ``Exception``, ``dict``: no repository method is theirs
            base = self.get(target)
            if base is not None and base.kind == "class":
                found.add(base.uid)
                above = self._bases(base)
                if above is None:
                    unknown = True
                else:
                    found |= above
            elif target is None and not via:
                unknown = True
        result = None if unknown else frozenset(found)
        self._base_memo[cls.uid] = result
        return result

    def _external_base(self, cls: Def, depth: int = 0) -> bool:
        """Whether ``cls`` derives, directly or through repository bases, from a class imported from outside."""
        if cls.uid in self._external_memo:
            return self._external_memo[cls.uid]
        self._external_memo[cls.uid] = False  # cycles
        last = header_end(self.read_lines(self.path_of.get(cls.file_id, "")), cls.start)
        found = False
        # typing and abc never call a subclass's methods (Generic[T], Protocol, ABC): not external here.
        for target, external in self.rows(
                "SELECT r.target_uid, i.resolved_file_id IS NULL AND i.import_uid IS NOT NULL AND "
                "coalesce(i.source_literal, '') NOT IN ('typing', 'typing_extensions', 'abc') FROM st_ref r "
                "LEFT JOIN st_import i ON i.import_uid = r.via_import_uid WHERE r.file_id = ? "
                "AND r.start_line BETWEEN ? AND ? AND r.role = 'REFERENCE'", (cls.file_id, cls.start, last)):
            base = self.get(target)
            if external or (base is not None and base.kind == "class" and depth < 20
                            and self._external_base(base, depth + 1)):
                found = True
                break
        self._external_memo[cls.uid] = found
        return found

    def _is_keyword(self, path: str, line: int, col: int) -> bool:
        text = self._line(path, line)
        return text is not None and keyword_at(text, col)

    def _line(self, path: str, line: int) -> str | None:
        lines = self.read_lines(path)
        return lines[line - 1] if 0 < line <= len(lines) else None
