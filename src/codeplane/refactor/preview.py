"""The preview an agent sees for a plan: counts by certainty, affected files with hashes, coverage, and —
for an ambiguous target — the decision packet (§8.5a–c)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from codeplane.core.config import DocSweepConfig
from codeplane.refactor.assemble import affected_files, counts, doc_summary, edited_files, preview_edits
from codeplane.refactor.decisions import candidates, receiver_capsule, scope_capsule, witness
from codeplane.refactor.facts import Def
from codeplane.refactor.models import (
    Coverage,
    DecisionCapsule,
    FileMove,
    Operation,
    RefactorPreview,
    SymbolRef,
)
from codeplane.refactor.plans import PlanOption

#: Warnings a preview lists, then a count of the rest (collisions are bounded where they are found).
PREVIEW_WARNINGS = 50
#: ``.cplignore``'d files named in a preview's coverage (their mentions are low edits ``refactor_inspect`` pages).
PREVIEW_EXCLUDED_FILES = 100


def bounded_warnings(warnings: Sequence[str]) -> list[str]:
    """The first :data:`PREVIEW_WARNINGS`, then how many more (a move over many unresolved imports warns per file)."""
    if len(warnings) <= PREVIEW_WARNINGS:
        return list(warnings)
    return [*warnings[:PREVIEW_WARNINGS], f"… {len(warnings) - PREVIEW_WARNINGS} more warnings"]


@dataclass
class OptionReport:
    """What the planner learnt about one option besides its edits."""

    option: PlanOption
    coverage: Coverage | None
    warnings: list[str] = field(default_factory=list)
    unresolved_owners: list[str] = field(default_factory=list)
    files_scanned: list[str] = field(default_factory=list)


def _verification_required(option: PlanOption, coverage: Coverage | None, warnings: Sequence[str]) -> bool:
    uncertain = any(e.certainty != "high" for e in option.edits)
    docs = any(e.certainty != "high" for e in option.doc_edits)
    return uncertain or docs or bool(option.collisions) or bool(warnings) or bool(coverage and coverage.truncated)


def single_preview(refactor_id: str, operation: Operation, report: OptionReport, *, expires_at: str,
                   docs: DocSweepConfig, symbol: SymbolRef | None = None, new_name: str | None = None,
                   move: FileMove | None = None) -> RefactorPreview:
    option = report.option
    tally = counts(option)
    shown, truncated = preview_edits(option)
    files, files_total = affected_files(option)
    capsules: list[DecisionCapsule] = []
    unresolved = sum(1 for e in option.edits if e.reason == "unresolved_receiver")
    if unresolved and symbol is not None:
        capsules.append(receiver_capsule(symbol.name, report.unresolved_owners, unresolved))
    coverage = report.coverage
    if coverage is not None and len(coverage.excluded_files_with_hits) > PREVIEW_EXCLUDED_FILES:
        coverage = coverage.model_copy(
            update={"excluded_files_with_hits": coverage.excluded_files_with_hits[:PREVIEW_EXCLUDED_FILES]})
    return RefactorPreview(
        refactor_id=refactor_id, operation=operation, status="ready", symbol=symbol, new_name=new_name,
        move=move, matches=tally["high"] + tally["medium"], counts=tally,
        verification_required=_verification_required(option, report.coverage, report.warnings),
        affected_files=files, affected_files_total=files_total, edited_files_total=edited_files(option),
        edits=shown, edits_truncated=truncated,
        doc_edits=doc_summary(option, auto_apply=docs.auto_apply, min_confidence=docs.min_confidence),
        collisions=list(option.collisions),
        coverage=coverage, decision_capsules=capsules, expires_at=expires_at,
        warnings=bounded_warnings(report.warnings),
    )


def decision_preview(refactor_id: str, reports: Sequence[OptionReport], defs: Sequence[Def], def_lines: Sequence[str],
                     *, expires_at: str, new_name: str, total_matches: int) -> RefactorPreview:
    options = [r.option for r in reports]
    scanned = sorted({p for r in reports for p in r.files_scanned})
    warnings = [w for r in reports for w in r.warnings]
    if total_matches > len(defs):
        warnings.append(f"{total_matches} definitions match; only the first {len(defs)} are offered as candidates")
    return RefactorPreview(
        refactor_id=refactor_id, operation="rename", status="needs_decision", new_name=new_name,
        matches=0, counts={}, verification_required=True,
        candidates=candidates(options, defs),
        witness=witness(defs, def_lines, scanned, truncated=total_matches > len(defs),
                        invariants_failed=["ambiguous_target"]),
        decision_capsules=[scope_capsule(defs)], expires_at=expires_at,
        warnings=bounded_warnings(sorted(set(warnings))),
    )


def needs_judgment(preview: RefactorPreview) -> str | None:
    """Why a preview cannot be applied without the agent's judgment, or ``None`` when every edit is
    high-certainty and nothing else asks for a decision (``verification_required`` is false)."""
    if preview.status == "needs_decision":
        return f"{len(preview.candidates)} definitions match: choose a candidate_id"
    if not preview.verification_required:
        return None
    counts = preview.counts
    uncertain = ", ".join(f"{counts[c]} {c}" for c in ("medium", "low") if counts.get(c))
    plural = "s" if counts.get("medium", 0) + counts.get("low", 0) > 1 else ""
    # Doc edits not applied by default (``doc_sweep.auto_apply`` off) are left to ``apply_docs``: they need no
    # judgment for the code's apply (one low comment mention held back a rename whose every code edit was high).
    docs = {k: v for k, v in preview.doc_edits.by_confidence.items() if k != "high"} \
        if preview.doc_edits.auto_apply else {}
    reasons = [
        f"{uncertain} edit{plural} to review" if uncertain else "",
        f"{sum(docs.values())} doc edits below high confidence" if docs else "",
        f"{len(preview.collisions)} collisions" if preview.collisions else "",
        "warnings" if preview.warnings else "",
        "the lexical sweep was truncated" if preview.coverage is not None and preview.coverage.truncated else "",
    ]
    return "; ".join(r for r in reasons if r) or None
