"""What the refactor engine answers: previews, candidates, coverage, impact and apply results.

Every model is frozen and JSON-friendly so the server layer can hand it to the agent as is. Positions are
1-based lines and 0-based columns counted in characters (the tools show columns 1-based, as search hits:
``server/tools/refactor_columns.py``), and every planned edit is
one exact token span (D7): ``old_text`` is the text at that span when the preview was made.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from codeplane.mutation.delta import Delta

Certainty = Literal["high", "medium", "low"]
Operation = Literal["rename", "move", "delete"]
PlanStatus = Literal["ready", "needs_decision"]

#: Ordering used for thresholds (``min_certainty``) and for sorting.
CERTAINTY_RANK: dict[str, int] = {"high": 2, "medium": 1, "low": 0}


class _Frozen(BaseModel):
    # defer_build: built on first use, or by the server's warm-up after /ready (issue 19's warm restart)
    model_config = ConfigDict(frozen=True, defer_build=True)


class SymbolRef(_Frozen):
    """The definition a refactor is about."""

    def_uid: str
    name: str
    qualified_name: str
    kind: str
    path: str
    line: int
    column: int
    language: str | None = None


class PlannedEdit(_Frozen):
    """One exact-span replacement (or a whole-file operation for moves/deletes).

    ``reason`` says why the edit has its certainty: ``definition``, ``proven``, ``strong``, ``anchored``,
    ``import``, ``qualified_string`` (a string that is exactly the qualified name) for code edits; ``string``,
    ``comment``, ``dynamic_access``, ``unresolved_receiver``,
    ``other_binding``, ``excluded_path``, ``unindexed`` for lexical-only candidates (always ``low``).
    """

    edit_id: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    old_text: str
    new_text: str
    certainty: Certainty
    reason: str
    #: ``code`` for structural edits and lexical candidates, ``doc`` for the documentation sweep (§8.11).
    kind: Literal["code", "doc"] = "code"
    #: The source line the edit sits on (trimmed, bounded) so a preview is readable without a file read.
    snippet: str = ""


class FileMove(_Frozen):
    from_path: str
    to_path: str


class AffectedFile(_Frozen):
    path: str
    #: SHA-256 of the exact bytes at preview time; apply refuses (5002) if the file changed since.
    sha256: str
    high: int = 0
    medium: int = 0
    low: int = 0
    doc: int = 0


class Collision(_Frozen):
    """An existing binding of the new name that the rename would clash with (reported, never applied)."""

    path: str
    line: int
    column: int
    kind: str
    scope: str
    detail: str


#: How many kept occurrences a preview lists by position (the count is always exact).
KEPT_LISTED = 100


class Coverage(_Frozen):
    """"No silent misses": what was looked at and where every lexical occurrence went."""

    files_scanned: int
    #: Every whole-identifier occurrence of the old name in scanned files.
    lexical_occurrences: int
    in_plan: int
    low_candidates: int
    #: ``reason -> count`` over the low candidates (``string``, ``comment``, ``other_binding`` ...).
    by_reason: dict[str, int] = {}
    #: ``.cplignore``'d files that mention the old name; reported as ``excluded_path`` candidates.
    excluded_files_with_hits: list[str] = []
    #: Directory names never walked (PRUNABLE_DIRS such as ``node_modules``), stated so the gap is visible.
    pruned_dirs: list[str] = []
    #: Files whose language has no structural facts (only the lexical sweep covered them).
    unindexed_files: int = 0
    #: Occurrences in the plan that stay as they are: uses of a name an aliased import keeps (``from m import new
    #: as old``); ``kept`` lists the first :data:`KEPT_LISTED` as ``path:line:column``.
    kept_count: int = 0
    kept: list[str] = []
    #: Occurrences that cannot be the target (a Go package-level definition's ``x.Name`` of another value or
    #: package; a Rust or Java call ``x.len()`` of a field's name, a read ``x.len`` of a method's): counted under
    #: ``other_symbol`` in ``by_reason``, the first :data:`KEPT_LISTED` listed here.
    set_aside: list[str] = []
    truncated: bool = False


class DocEditSummary(_Frozen):
    """The §8.11 sweep: mentions in comments, docstrings and documentation files, kept apart from code."""

    count: int = 0
    files_changed: int = 0
    by_confidence: dict[str, int] = {}
    #: How many of them ``apply_docs`` applies (at ``min_confidence`` or above), in how many files: the rest (a
    #: ``low`` mention, perhaps another symbol's) are applied only by id (``include``).
    applies: int = 0
    applies_files: int = 0
    review_recommended: bool = False
    #: Whether these edits are applied by default (config ``refactor.doc_sweep``).
    auto_apply: bool = False
    min_confidence: Certainty = "medium"


class DecisionCandidate(_Frozen):
    """One reading of an ambiguous target (§8.5a); choose it with ``refactor_apply(candidate_id=...)``."""

    candidate_id: str
    description: str
    confidence: float
    provenance: Literal["structural", "lexical"]
    symbol: SymbolRef
    counts: dict[str, int]
    files: int


class WitnessFact(_Frozen):
    fact_type: str
    path: str
    line: int
    content: str
    provenance: str
    confidence: float


class ChecklistItem(_Frozen):
    question: str
    fact_needed: str
    how_to_verify: str


class Witness(_Frozen):
    """Evidence for a decision (§8.5b): what was scanned, the facts found and what to verify."""

    files_scanned: list[str]
    contexts_queried: list[str]
    truncated: bool
    facts: list[WitnessFact]
    invariants_failed: list[str]
    disambiguation_checklist: list[ChecklistItem]


class DecisionCapsule(_Frozen):
    """A bounded question the agent can answer by reading code (§8.5c)."""

    capsule_type: Literal["scope_resolution", "receiver_resolution", "context_membership"]
    question: str
    options: list[str]
    stop_rule: str


class RefactorPreview(_Frozen):
    """The answer to ``refactor_rename`` / ``refactor_move`` / a deletion preview."""

    refactor_id: str
    operation: Operation
    status: PlanStatus
    symbol: SymbolRef | None = None
    new_name: str | None = None
    move: FileMove | None = None
    #: Edits applied by default (high + medium); lows are proposals only.
    matches: int
    counts: dict[str, int]
    verification_required: bool
    #: The first ``assemble.MAX_AFFECTED_FILES`` by path; ``affected_files_total`` counts them all (every edit in
    #: ``refactor_inspect``'s pages names its file).
    affected_files: list[AffectedFile] = []
    affected_files_total: int = 0
    #: Of those, the files applying the high and medium code edits (and the moves) changes: the head line's count.
    edited_files_total: int = 0
    #: The first edits (high then medium, then low), bounded; ``refactor_inspect`` pages the rest.
    edits: list[PlannedEdit] = []
    edits_truncated: bool = False
    doc_edits: DocEditSummary = DocEditSummary()
    #: At most ``collisions.MAX_COLLISIONS``.
    collisions: list[Collision] = []
    coverage: Coverage | None = None
    candidates: list[DecisionCandidate] = []
    witness: Witness | None = None
    decision_capsules: list[DecisionCapsule] = []
    expires_at: str
    #: The first ``preview.PREVIEW_WARNINGS``, then one saying how many more.
    warnings: list[str] = []


class InspectItem(_Frozen):
    edit: PlannedEdit
    #: ``(line number, text)`` around the edit, bounded by ``context_lines``.
    context: list[tuple[int, str]]


class InspectPage(_Frozen):
    refactor_id: str
    candidate_id: str
    certainties: list[Certainty]
    kinds: list[str]
    total: int
    items: list[InspectItem]
    next_cursor: str | None = None


class AppliedFile(_Frozen):
    path: str
    sha256: str
    edits: int


class ApplyOutcome(_Frozen):
    refactor_id: str
    candidate_id: str
    applied_edits: int
    applied_doc_edits: int
    skipped_low: int
    files: list[AppliedFile]
    moves: list[FileMove] = []
    deleted: list[str] = []
    git_mv: bool = False
    insertions: int = 0
    deletions: int = 0
    warnings: list[str] = []
    #: The mutation engine's structured delta for the batch (new hashes, ranges, fingerprint).
    delta: Delta | None = None


class ImpactRef(_Frozen):
    path: str
    line: int
    column: int
    tier: str
    certainty: Certainty
    snippet: str


class ImpactReport(_Frozen):
    """``refactor_impact``: what depends on a symbol or file, and a deletion plan to preview/apply."""

    target_kind: Literal["symbol", "file"]
    symbol: SymbolRef | None = None
    path: str | None = None
    references: list[ImpactRef]
    references_total: int
    by_tier: dict[str, int]
    #: The first ``impact.MAX_FILES`` by path of each list; the totals count them all.
    importing_files: list[str]
    importing_files_total: int = 0
    affected_tests: list[str]
    affected_tests_total: int = 0
    affected_tests_note: str = ""
    lexical_mentions: int = 0
    next_cursor: str | None = None
    #: The deletion plan (apply with ``refactor_apply``); ``None`` when deletion is not possible.
    delete_refactor_id: str | None = None
    safe_to_delete: bool = False
    warnings: list[str] = []
