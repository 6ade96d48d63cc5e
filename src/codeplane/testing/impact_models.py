"""What impact selection answers (§11.9): the selected test files (:class:`TestMatch`), the cases in them
(:class:`CaseMatch`) and the whole answer (:class:`ImpactResult`), shared by the module-level walk
(``impact_modules.py``), the symbol-level merge and the Go selection (``impact.py``) and coverage evidence
(``coverage_select.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from codeplane.testing.impact_reach import CoverageUse

Confidence = Literal["high", "low"]
#: §11.9.6: coverage gaps are capped.
UNCOVERED_CAP = 20
#: Reasons kept per selected test file.
MAX_REASONS = 5


@dataclass(frozen=True)
class CaseMatch:
    """A selected test case (``test_x``, ``TestC::test_x``, or a whole class ``TestC``) and how it is reached."""

    case: str
    confidence: Confidence
    #: From the test to a changed definition, e.g. ``tests/t.py::test_x → helper → pkg.mod.f (changed)``.
    chain: tuple[str, ...]
    #: ``graph``: reached through the reference graph; ``coverage``: recorded running a changed definition.
    source: Literal["graph", "coverage"] = "graph"


@dataclass(frozen=True)
class TestMatch:
    __test__ = False

    test_file: str
    confidence: Confidence
    #: How the test reaches a change, e.g. ``imports attr._make (exact)``; at most 5, sorted.
    reasons: tuple[str, ...]
    #: The cases to run (symbol-level selection); empty: the whole file.
    cases: tuple[CaseMatch, ...] = ()

    @property
    def node_ids(self) -> tuple[str, ...]:
        """What to hand the runner: ``file::case`` per selected case, or the file."""
        return tuple(f"{self.test_file}::{c.case}" for c in self.cases) or (self.test_file,)


@dataclass(frozen=True)
class ImpactResult:
    changed_modules: tuple[str, ...]
    unresolved_files: tuple[str, ...]
    confidence: Literal["complete", "partial"]
    matches: tuple[TestMatch, ...]
    null_literal_imports: int = 0
    #: Source directories the selected tests import (``--cov=<dir>`` scoping, §11.9.5).
    source_dirs: tuple[str, ...] = ()
    uncovered_modules: tuple[str, ...] = ()
    uncovered_total: int = 0
    hint: str = ""
    #: Imports of a changed module's own top-level package that resolve to no file (``path imports module``,
    #: at most 20): edges the walk cannot follow, so the tier is ``partial``.
    unresolved_imports: tuple[str, ...] = ()
    #: Changed definitions the symbol-level walk started from (qualified names).
    changed_symbols: tuple[str, ...] = ()
    #: ``path: reason`` for each change the symbol graph could not follow (module-level selection instead).
    fallbacks: tuple[str, ...] = ()
    #: What recorded coverage evidence did to the selection (None: none recorded).
    coverage: CoverageUse | None = None
    #: (path, qualified name) of the definitions the symbol walk reached through resolved references (None: no
    #: walk ran, or it failed).
    reached: frozenset[tuple[str, str]] | None = None

    @property
    def test_files(self) -> tuple[str, ...]:
        return tuple(m.test_file for m in self.matches)
