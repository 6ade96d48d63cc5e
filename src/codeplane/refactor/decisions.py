"""Two-phase decisions (§8.5a–c): candidates, a witness packet and decision capsules.

When a symbol names several definitions the engine does not pick one: each reading becomes a candidate
with its own complete plan, the witness says what was scanned and found, and capsules ask the bounded
questions that settle it. The agent commits with ``refactor_apply(refactor_id, candidate_id)``; commit
re-plans the chosen candidate from the current index and refuses (5002) if anything shifted.
"""

from __future__ import annotations

from collections.abc import Sequence

from codeplane.refactor.facts import Def
from codeplane.refactor.models import (
    ChecklistItem,
    DecisionCandidate,
    DecisionCapsule,
    SymbolRef,
    Witness,
    WitnessFact,
)
from codeplane.refactor.plans import PlanOption

_MAX_FILES_LISTED = 50


def symbol_ref(d: Def) -> SymbolRef:
    return SymbolRef(def_uid=d.def_uid, name=d.name, qualified_name=d.qualified_name, kind=d.kind, path=d.path,
                     line=d.name_line, column=d.name_column, language=d.language)


def candidates(options: Sequence[PlanOption], defs: Sequence[Def]) -> list[DecisionCandidate]:
    """One candidate per option; confidence is the option's share of structurally proven edits."""
    proven = [sum(1 for e in o.edits if e.certainty == "high") for o in options]
    total = sum(proven) + len(options)
    out: list[DecisionCandidate] = []
    for option, d, count in zip(options, defs, proven, strict=True):
        tally = {c: sum(1 for e in option.edits if e.certainty == c) for c in ("high", "medium", "low")}
        out.append(DecisionCandidate(
            candidate_id=option.candidate_id,
            description=f"{d.kind} {d.qualified_name} in {d.path}:{d.name_line}",
            confidence=round((count + 1) / total, 3), provenance="structural", symbol=symbol_ref(d),
            counts=tally, files=len({e.path for e in option.edits}),
        ))
    return out


def witness(defs: Sequence[Def], lines: Sequence[str], files_scanned: Sequence[str], truncated: bool,
            invariants_failed: Sequence[str]) -> Witness:
    facts = [WitnessFact(fact_type="definition", path=d.path, line=d.name_line, content=text,
                         provenance="structural", confidence=1.0) for d, text in zip(defs, lines, strict=True)]
    return Witness(
        files_scanned=sorted(files_scanned)[:_MAX_FILES_LISTED], contexts_queried=["repository"],
        truncated=truncated or len(files_scanned) > _MAX_FILES_LISTED, facts=facts,
        invariants_failed=list(invariants_failed),
        disambiguation_checklist=[
            ChecklistItem(question="Which of these definitions does the request mean?",
                          fact_needed="symbol_identity",
                          how_to_verify="compare each candidate's path and qualified name with the call sites "
                                        "you intend to change (refactor_inspect with candidate_id lists them)"),
        ],
    )


def scope_capsule(defs: Sequence[Def]) -> DecisionCapsule:
    return DecisionCapsule(
        capsule_type="scope_resolution",
        question=f"Which of these {len(defs)} definitions named {defs[0].name!r} is the rename about?",
        options=[f"{d.qualified_name} ({d.path}:{d.name_line})" for d in defs],
        stop_rule="the first definition that is importable and not shadowed at the call sites you care about",
    )


def receiver_capsule(name: str, owners: Sequence[str], unresolved: int) -> DecisionCapsule:
    return DecisionCapsule(
        capsule_type="receiver_resolution",
        question=f"{unresolved} call site(s) of .{name} have a receiver the index cannot type; which classes "
                 "can reach them?",
        options=list(owners),
        stop_rule="every assignment flowing into the receiver position; include the site's edit id only if "
                  "all of them are instances of the renamed class (or its subclasses)",
    )
