"""Turn classified span edits into a plan option and the preview the agent sees.

Edit ids are assigned in (path, line, column) order, so the same request over the same files yields the
same ids. The preview is bounded: it lists the first edits (high, then medium, then low) and every
affected file; ``refactor_inspect`` pages the rest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.refactor.models import (
    CERTAINTY_RANK,
    AffectedFile,
    Certainty,
    Collision,
    Coverage,
    DocEditSummary,
    FileMove,
    PlannedEdit,
    SymbolRef,
)
from codeplane.refactor.plans import PlanOption
from codeplane.refactor.spans import SourceText, SpanEdit

#: Edits listed inline in a preview; the rest are reachable through ``refactor_inspect``.
PREVIEW_EDITS = 50
#: Affected files a preview lists (with ``affected_files_total``): a rename of Django's ``Model`` listed 665 files,
#: 68 KB of structured answer. Every edit names its file, so ``refactor_inspect`` pages reach the rest.
MAX_AFFECTED_FILES = 100


@dataclass
class Draft:
    """A plan option being built: edits with their certainty, plus what the preview reports."""

    symbol: SymbolRef | None = None
    code: list[tuple[SpanEdit, Certainty]] = field(default_factory=list)
    docs: list[tuple[SpanEdit, Certainty]] = field(default_factory=list)
    moves: list[FileMove] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    #: New files (a symbol move's new module): their content is the plan's edits on an empty text.
    creates: list[str] = field(default_factory=list)
    collisions: list[Collision] = field(default_factory=list)
    coverage: Coverage | None = None
    warnings: list[str] = field(default_factory=list)

    def planned_positions(self) -> set[tuple[str, int, int]]:
        return {(e.path, e.line, e.column) for e, _ in self.code + self.docs}


_RANK: dict[Certainty, int] = {"high": 0, "medium": 1, "low": 2}


def _offset_in(outer: SpanEdit, line: int, column: int) -> int:
    """Character offset of a position inside ``outer``'s old text (the position lies within its span)."""
    if line == outer.line:
        return column - outer.column
    lines = outer.old_text.split("\n")
    return sum(len(text) + 1 for text in lines[: line - outer.line]) + column


def _agree(outer: SpanEdit, inner: SpanEdit) -> bool:
    """``inner`` lies within ``outer`` and applying it alone writes what ``outer`` writes."""
    if (inner.line, inner.column) < (outer.line, outer.column) or (
            (inner.end_line, inner.end_column) > (outer.end_line, outer.end_column)):
        return False
    start = _offset_in(outer, inner.line, inner.column)
    end = _offset_in(outer, inner.end_line, inner.end_column)
    if outer.old_text[start:end] != inner.old_text:
        return False
    return outer.old_text[:start] + inner.new_text + outer.old_text[end:] == outer.new_text


def merge_agreeing(edits: Sequence[tuple[SpanEdit, Certainty]]) -> list[tuple[SpanEdit, Certainty]]:
    """One change reached by two planners (an import's module as an import and as a module mention, or the same
    span twice) is one edit, at the higher certainty. Overlapping edits that write different text are kept:
    :func:`check_divergence` refuses them (§8.6), never picking one."""
    ordered = sorted(edits, key=lambda p: (p[0].path, p[0].line, p[0].column, -p[0].end_line, -p[0].end_column,
                                           _RANK[p[1]]))
    out: list[tuple[SpanEdit, Certainty]] = []
    # The kept edit reaching furthest in the current file: a later edit can only overlap it or a wider one.
    widest: int | None = None
    for edit, certainty in ordered:
        if widest is not None and out[widest][0].path == edit.path:
            outer, outer_certainty = out[widest]
            if _agree(outer, edit):
                # Equal text either way. The outer span stays (a later edit overlapping it must still be checked
                # against all of it), with the more certain edit's certainty and reason.
                if _RANK[certainty] < _RANK[outer_certainty]:
                    out[widest] = (replace(outer, reason=edit.reason), certainty)
                continue
        out.append((edit, certainty))
        if widest is None or out[widest][0].path != edit.path or (edit.end_line, edit.end_column) > (
                out[widest][0].end_line, out[widest][0].end_column):
            widest = len(out) - 1
    return out


def _planned(edits: Sequence[tuple[SpanEdit, Certainty]], kind: str, sources: Mapping[str, SourceText],
             start: int) -> list[PlannedEdit]:
    out: list[PlannedEdit] = []
    seen: set[tuple[str, int, int]] = set()
    changing = merge_agreeing([(e, c) for e, c in edits if e.old_text != e.new_text])
    for number, (edit, certainty) in enumerate(sorted(changing, key=lambda p: p[0]), start=start):
        key = (edit.path, edit.line, edit.column)
        if key in seen:
            continue
        seen.add(key)
        src = sources.get(edit.path)
        out.append(PlannedEdit(
            edit_id=f"{'d' if kind == 'doc' else 'e'}{number}", path=edit.path, line=edit.line,
            column=edit.column, end_line=edit.end_line, end_column=edit.end_column, old_text=edit.old_text,
            new_text=edit.new_text, certainty=certainty, reason=edit.reason,
            kind="doc" if kind == "doc" else "code", snippet=src.snippet(edit.line) if src else "",
        ))
    return out


def check_divergence(edits: Sequence[PlannedEdit]) -> None:
    """Two planned edits over one span that disagree (§8.6): fail and report, never pick one."""
    ordered = sorted(edits, key=lambda e: (e.path, e.line, e.column, e.end_line, e.end_column))
    for before, after in pairwise(ordered):
        if before.path == after.path and (after.line, after.column) < (before.end_line, before.end_column):
            raise CodePlaneError(
                ErrorCode.REFACTOR_DIVERGENCE,
                f"{before.path}:{before.line}: two planned edits overlap and disagree; nothing can be applied",
                details={"path": before.path, "edits": [before.model_dump(), after.model_dump()]},
            )


def build_option(candidate_id: str, draft: Draft, sources: Mapping[str, SourceText],
                 hashes: Mapping[str, str]) -> PlanOption:
    code = _planned(draft.code, "code", sources, 1)
    docs = _planned(draft.docs, "doc", sources, 1)
    check_divergence(code + docs)
    touched = {e.path for e in code + docs} | {m.from_path for m in draft.moves} | set(draft.deletes)
    return PlanOption(
        candidate_id=candidate_id, symbol=draft.symbol, edits=tuple(code), doc_edits=tuple(docs),
        file_hashes=tuple(sorted((p, hashes[p]) for p in touched if p in hashes)),
        moves=tuple(draft.moves), deletes=tuple(sorted(draft.deletes)), collisions=tuple(draft.collisions),
        creates=tuple(sorted(draft.creates)),
    )


def counts(option: PlanOption) -> dict[str, int]:
    tally = Counter(e.certainty for e in option.edits)
    return {"high": tally["high"], "medium": tally["medium"], "low": tally["low"],
            "doc": len(option.doc_edits), "moves": len(option.moves), "deletes": len(option.deletes)}


def edited_files(option: PlanOption) -> int:
    """How many files applying the plan as it stands changes: its high and medium code edits, moves and deletes
    (doc edits and low proposals are counted apart)."""
    return len({e.path for e in option.edits if e.certainty != "low"}
               | {m.from_path for m in option.moves} | set(option.deletes))


def affected_files(option: PlanOption) -> tuple[list[AffectedFile], int]:
    """The files the plan touches, the first ``MAX_AFFECTED_FILES`` by path, and how many in all."""
    hashes = dict(option.file_hashes)
    per: dict[str, Counter[str]] = {}
    for edit in option.edits:
        per.setdefault(edit.path, Counter())[edit.certainty] += 1
    for edit in option.doc_edits:
        per.setdefault(edit.path, Counter())["doc"] += 1
    for path in [m.from_path for m in option.moves] + list(option.deletes):
        per.setdefault(path, Counter())
    return [AffectedFile(path=p, sha256=hashes.get(p, ""), high=c["high"], medium=c["medium"], low=c["low"],
                         doc=c["doc"])
            for p, c in sorted(per.items())[:MAX_AFFECTED_FILES]], len(per)


def preview_edits(option: PlanOption) -> tuple[list[PlannedEdit], bool]:
    rank = {"high": 0, "medium": 1, "low": 2}
    ordered = sorted(option.edits, key=lambda e: (rank[e.certainty], e.path, e.line, e.column))
    return ordered[:PREVIEW_EDITS], len(ordered) > PREVIEW_EDITS


def doc_summary(option: PlanOption, *, auto_apply: bool, min_confidence: Certainty) -> DocEditSummary:
    tally = Counter(e.certainty for e in option.doc_edits)
    # What ``apply.select_edits`` takes with ``apply_docs``: the preview counts it, not only the whole sweep.
    applied = [e for e in option.doc_edits if CERTAINTY_RANK[e.certainty] >= CERTAINTY_RANK[min_confidence]]
    return DocEditSummary(
        count=len(option.doc_edits), files_changed=len({e.path for e in option.doc_edits}),
        by_confidence={k: tally[k] for k in ("high", "medium", "low") if tally[k]},
        applies=len(applied), applies_files=len({e.path for e in applied}),
        review_recommended=bool(tally["medium"] or tally["low"]),
        auto_apply=auto_apply, min_confidence=min_confidence,
    )
