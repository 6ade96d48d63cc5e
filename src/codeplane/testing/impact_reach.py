"""What a symbol-level impact walk produces (``impact_symbols.py``): how a definition or case was reached
(:class:`Reach`, a bounded chain back to a changed definition with its confidence), the definitions it walks
(:class:`Def`) and the answer (:class:`SymbolSelection`); and what coverage evidence did to a selection
(:class:`CoverageUse`, ``coverage_select.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Confidence = Literal["high", "low"]
#: Steps kept in a reason chain; longer ones keep the first steps, "…" and the changed definition.
CHAIN_STEPS = 8


@dataclass(frozen=True)
class Reach:
    """How a definition or case was reached: the chain from it back to a changed definition.

    ``runs``: calling the definition runs changed code (False for a class whose construction is unchanged
    and only its instances behave differently), which decides whether an import-time call matters.
    """

    confidence: Confidence
    chain: tuple[str, ...]
    runs: bool = True

    def then(self, step: str, confidence: Confidence, *, runs: bool = True) -> Reach:
        chain = (step, *self.chain)
        if len(chain) > CHAIN_STEPS:
            chain = (*chain[:CHAIN_STEPS - 2], "…", chain[-1])
        return Reach("low" if "low" in (confidence, self.confidence) else "high", chain, runs)

    def better_than(self, other: Reach | None) -> bool:
        if other is None:
            return True
        rank = (self.confidence == "high", self.runs)
        return rank > (other.confidence == "high", other.runs) and not (
            other.confidence == "high" and self.confidence == "low")


@dataclass(frozen=True)
class Def:
    uid: str
    file_id: int
    kind: str
    name: str
    lexical_path: str
    qualified_name: str
    start: int
    end: int
    parent: str | None


@dataclass
class SymbolSelection:
    #: test file → case id (``test_x``, ``TestC::test_x``, ``TestC``; ``""`` = the whole file) → reach.
    cases: dict[str, dict[str, Reach]] = field(default_factory=dict)
    #: (changed or reached file, why) for the module-level selection.
    fallbacks: list[tuple[str, str]] = field(default_factory=list)
    #: Changed definitions (qualified names), the walk's seeds.
    seeds: list[str] = field(default_factory=list)
    reached: int = 0
    #: (path, qualified name) of every definition reached through resolved references (``high``): what
    #: certainly leads to a changed one (a use by name reaches half a code base for a name like ``write``).
    reached_defs: set[tuple[str, str]] = field(default_factory=set)
    #: The walk stopped early: the module-level selection of its fallbacks already held every test file
    #: (``reached_defs`` is then partial).
    stopped: bool = False


@dataclass(frozen=True)
class CoverageUse:
    """How recorded coverage evidence shaped a selection (``coverage_select.py``)."""

    #: Whether evidence could leave out tests: every change lies inside function bodies of files that a
    #: recorded run loaded (else ``note`` says why not, and it only confirms and adds).
    narrowed: bool
    note: str = ""
    #: Selected tests whose evidence shows they ran a changed definition; of them, not reached by the graph.
    confirmed: int = 0
    added: int = 0
    #: Tests the graph selected that fresh evidence shows ran none of the changed code (the first 20).
    dropped: tuple[str, ...] = ()
    dropped_total: int = 0
    #: Why some evidence was not trusted (``path: reason``, the first 20), and how many selected tests it kept.
    stale: tuple[str, ...] = ()
    stale_tests: int = 0
    #: Selected tests with no evidence recorded (new, or never run with coverage).
    unrecorded: int = 0
    #: Of ``stale_tests``: kept because a changed definition ran earlier in their test process, and they ran
    #: code that leads to it through resolved references (a cache it filled may be why they did not run it).
    after_change: int = 0
