"""What a symbol-level impact walk produces (``impact_symbols.py``): how a definition or case was reached
(:class:`Reach`, a bounded chain back to a changed definition with its confidence), the definitions it walks
(:class:`Def`) and the answer (:class:`SymbolSelection`)."""

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
