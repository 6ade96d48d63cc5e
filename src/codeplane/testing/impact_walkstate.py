"""What one symbol-level impact walk has reached and selected (``impact_symbols.SymbolWalk``'s base).

:class:`WalkState` holds the walk's bookkeeping over one read transaction: the best :class:`Reach` of every
definition reached so far and the queue of those still to spread from, the cases selected per test file and the
files that fell back to module-level selection. The rule families (``impact_uses.py``, ``impact_pytest.py``)
and the driver (``impact_symbols.py``) record into it; :func:`is_dunder` is a question they both ask.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Iterable, Mapping

from codeplane.testing.impact_code import PythonCode, ReadLines
from codeplane.testing.impact_reach import Def, Reach, SymbolSelection
from codeplane.testing.impact_walkfacts import WalkFacts


def is_dunder(name: str) -> bool:
    """``__init__``, ``__eq__``...: Python runs these without the name being spelled."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


class WalkState(PythonCode):
    """What one walk over one read transaction reached and selected. ``tests``: the discovered test files;
    ``read_lines``: a file's current lines (``None`` when unreadable)."""

    #: The source files this walk seeds from (``impact_go.GoWalk``: Go).
    suffixes: tuple[str, ...] = (".py", ".pyi")
    language = "Python"

    def __init__(self, conn: sqlite3.Connection, id_of: Mapping[str, int], path_of: Mapping[int, str],
                 tests: Iterable[str], read_lines: ReadLines, *, facts: WalkFacts | None = None) -> None:
        super().__init__(conn, path_of, read_lines, facts if facts is not None else WalkFacts())
        self.id_of = id_of
        self.tests = frozenset(tests)
        self.best: dict[str, Reach] = {}
        self.queue: deque[Def] = deque()
        self.out = SymbolSelection()
        self._fallen: set[str] = set()
        #: How many times the walk recorded where something leads (a selection, a fallback, a definition
        #: reached): a changed definition whose spread left it unchanged is referenced by nothing it resolves.
        self.effects = 0

    def select(self, test_file: str, case: str, reach: Reach) -> None:
        self.effects += 1
        cases = self.out.cases.setdefault(test_file, {})
        if reach.better_than(cases.get(case)):
            cases[case] = reach

    def fallback(self, path: str, reason: str) -> None:
        self.effects += 1
        if path not in self._fallen:
            self._fallen.add(path)
            self.out.fallbacks.append((path, reason))

    def enqueue(self, d: Def, reach: Reach) -> None:
        self.effects += 1
        if reach.better_than(self.best.get(d.uid)):
            self.best[d.uid] = reach
            self.queue.append(d)
