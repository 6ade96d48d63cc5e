"""Output models of test discovery and impact selection (``discover_test_targets``, ``inspect_affected_tests``).

A run's models are in ``tests_run_models``; the text of these answers is rendered in ``tests_render``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from codeplane.server.tooling import ToolResult
from codeplane.testing.impact import ImpactResult
from codeplane.testing.impact_models import TestMatch
from codeplane.testing.impact_reach import CoverageUse
from codeplane.testing.model import Target

#: Inline bound on impact matches (and module-level fallbacks); ``matches_total`` says how many matched.
MAX_MATCHES = 500
#: Changed modules, symbols, unresolved files and fallbacks an impact lists, at most each (``*_total`` counts all).
MAX_LISTED = 50


def _totals(**lists: Sequence[object]) -> dict[str, int]:
    return {f"{name}_total": len(items) for name, items in lists.items() if len(items) > MAX_LISTED}


class TargetModel(ToolResult):
    target_id: str
    runner: str
    lang: str
    kind: str
    cwd: str
    cmd: list[str]
    estimated_cost: float
    #: Only these cases run (impact selection at test-case level); empty: the whole target.
    cases: list[str] = []

    @classmethod
    def from_target(cls, target: Target) -> TargetModel:
        return cls(target_id=target.target_id, runner=target.runner, lang=target.lang, kind=target.kind,
                   cwd=target.cwd, cmd=list(target.cmd), estimated_cost=target.estimated_cost,
                   cases=list(target.cases))


class MissingRunnerModel(ToolResult):
    runner: str
    project: str
    hint: str


class ImpactCaseModel(ToolResult):
    #: ``test_x``, ``TestC::test_x`` or a whole class ``TestC`` (run as ``test_file::case``).
    case: str
    confidence: Literal["high", "low"]
    #: From the test to a changed definition (inspect_affected_tests only).
    chain: list[str] = []
    #: ``coverage``: recorded running a changed definition (else reached through the reference graph).
    source: Literal["graph", "coverage"] = "graph"


class ImpactMatchModel(ToolResult):
    test_file: str
    confidence: Literal["high", "low"]
    reasons: list[str]
    #: The selected cases (symbol-level selection); empty: the whole file.
    cases: list[ImpactCaseModel] = []


class ImpactCoverageModel(ToolResult):
    """What recorded coverage evidence (``run_test_targets(coverage=true)``) did to the selection."""

    #: Whether it could leave tests out (else ``note`` says why: only confirms and adds).
    narrowed: bool
    note: str = ""
    confirmed: int = 0
    added: int = 0
    #: Selected by the graph, but fresh evidence shows they ran none of the changed code (max 20).
    dropped: list[str] = []
    dropped_total: int = 0
    #: Why some evidence was not trusted (max 20); the tests it concerned stay selected by the graph.
    stale: list[str] = []
    stale_tests: int = 0
    #: Of those: kept because changed code ran earlier in their test process (a cache it filled may be why
    #: they did not run it) and they ran code that leads to it.
    after_change: int = 0
    unrecorded: int = 0

    @classmethod
    def from_use(cls, use: CoverageUse) -> ImpactCoverageModel:
        return cls(narrowed=use.narrowed, note=use.note, confirmed=use.confirmed, added=use.added,
                   dropped=list(use.dropped), dropped_total=use.dropped_total, stale=list(use.stale),
                   stale_tests=use.stale_tests, after_change=use.after_change, unrecorded=use.unrecorded)


class ImpactModel(ToolResult):
    """§11.9.4: ``complete`` only when every changed file resolved and no test import is dynamic."""

    confidence: Literal["complete", "partial"]
    changed_modules: list[str]
    unresolved_files: list[str]
    matches: list[ImpactMatchModel]
    matches_total: int
    high: int
    low: int
    null_literal_imports: int
    source_dirs: list[str]
    uncovered_modules: list[str] = []
    uncovered_total: int = 0
    agentic_hint: str = ""
    #: Imports of a changed package that name no file (why the tier is partial), at most 20.
    unresolved_imports: list[str] = []
    #: Changed definitions the symbol-level selection started from.
    changed_symbols: list[str] = []
    #: ``path: reason`` for each change selected at module level instead (the symbol graph could not follow it).
    fallbacks: list[str] = []
    #: Present once coverage evidence was recorded.
    coverage: ImpactCoverageModel | None = None
    #: How many changed modules, changed symbols, unresolved files and fallbacks there are in all, when more than
    #: the lists hold (:data:`MAX_LISTED`): each page of a 1,800-file change repeated ~150 KB of them.
    changed_modules_total: int = 0
    changed_symbols_total: int = 0
    unresolved_files_total: int = 0
    fallbacks_total: int = 0

    @classmethod
    def from_result(cls, result: ImpactResult, *, detailed: bool = False,
                    shown: Sequence[TestMatch] | None = None) -> ImpactModel:
        """``shown``: the matches this answer lists (a page's); by default the first :data:`MAX_MATCHES`. The
        counts are of all."""
        matches = list(shown) if shown is not None else result.matches[:MAX_MATCHES]
        return cls(
            confidence=result.confidence, changed_modules=list(result.changed_modules[:MAX_LISTED]),
            unresolved_files=list(result.unresolved_files[:MAX_LISTED]),
            matches=[ImpactMatchModel(test_file=m.test_file, confidence=m.confidence,
                                      reasons=list(m.reasons) if detailed else list(m.reasons[:1]),
                                      cases=[ImpactCaseModel(case=c.case, confidence=c.confidence,
                                                             chain=list(c.chain) if detailed else [], source=c.source)
                                             for c in m.cases]) for m in matches],
            matches_total=len(result.matches), high=sum(1 for m in result.matches if m.confidence == "high"),
            low=sum(1 for m in result.matches if m.confidence == "low"),
            null_literal_imports=result.null_literal_imports, source_dirs=list(result.source_dirs),
            uncovered_modules=list(result.uncovered_modules), uncovered_total=result.uncovered_total,
            agentic_hint=result.hint, unresolved_imports=list(result.unresolved_imports),
            changed_symbols=list(result.changed_symbols[:MAX_LISTED]), fallbacks=list(result.fallbacks[:MAX_LISTED]),
            coverage=ImpactCoverageModel.from_use(result.coverage) if result.coverage is not None else None,
            **_totals(changed_modules=result.changed_modules, changed_symbols=result.changed_symbols,
                      unresolved_files=result.unresolved_files, fallbacks=result.fallbacks))
