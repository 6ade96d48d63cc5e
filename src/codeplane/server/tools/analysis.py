"""``semantic_diff`` (§23.7): structural changes between two states with their blast radius.

``codeplane.analysis`` is imported by the functions that need it, not here: the server imports every tool
adapter at boot, and the semantic diff engine is left for the first call (``Services.analysis`` is deferred).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import anyio
from pydantic import Field

from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.git_render import path_text
from codeplane.server.tools.paging import CURSOR_STAND_IN, items_that_fit

if TYPE_CHECKING:
    from codeplane.analysis.models import Change, FileChange, Impact
    from codeplane.analysis.service import DiffPage

class SemanticDiffParams(ToolParams):
    base: str | None = Field(default=None, description="Git revision or 'epoch:N' (default HEAD).")
    target: str | None = Field(default=None, description=(
        "Git revision or 'epoch:M'; omitted = the work tree (git) or the current epoch (epoch mode)."))
    paths: list[str] | None = Field(default=None, max_length=1000, description="Only these files/directories.")
    cursor: str | None = Field(default=None, description="pagination.next_cursor of the previous page.")
    limit: int = Field(default=20, ge=1, le=100, description="Items per page (changes and non-structural files).")


class RefTiers(ToolResult):
    proven: int = 0
    strong: int = 0
    anchored: int = 0
    unknown: int = 0


class ImpactInfo(ToolResult):
    reference_basis: str = Field(description=(
        "ref_facts_resolved: proven/strong counts are references the index resolved to this definition (see "
        "indexed_at, refs_of); ref_facts_partial: a removed definition, only same-named unresolved references; "
        "unknown: nothing counted (refs_unknown says why when the index answered)."))
    confidence: str
    reference_count: int = 0
    ref_tiers: RefTiers | None = None
    referencing_files: list[str] = []
    referencing_files_total: int = 0
    importing_files: list[str] = Field(default=[], description="The first 20, by path.")
    importing_files_total: int = 0
    affected_test_files: list[str] = Field(default=[], description="The first 20, by path.")
    affected_test_files_total: int = 0
    visibility: str | None = None
    refs_of: str | None = Field(default=None, description=(
        "Set on a required member added to a type (tag required_member_added): the type whose references these "
        "are (every literal or implementation of it must now supply the member)."))
    indexed_at: str | None = Field(default=None, description=(
        "The file the index holds this definition in now, when the target revision's file moved since: the "
        "references were counted there."))
    refs_unknown: str | None = Field(default=None, description=(
        "With reference_basis unknown: why nothing was counted: file_not_in_index (moved or removed since the "
        "target), not_in_file (renamed or removed since), not_indexed_yet (work tree ahead of the index)."))


class ContainerRef(ToolResult):
    """A changed container (a class) an earlier page showed, named by what finds it there."""

    kind: str
    qualified_name: str
    entity_id: str


class StructuralChange(ToolResult):
    path: str
    kind: str
    name: str
    qualified_name: str
    change: str
    structural_severity: str
    behavior_change_risk: str
    entity_id: str = Field(description="def_uid (the target side's, or the base side's for a removal).")
    old_entity_id: str | None = None
    old_signature: str | None = None
    new_signature: str | None = None
    old_name: str | None = None
    old_path: str | None = None
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    lines_changed: int | None = None
    delta_tags: list[str] = []
    change_preview: str | None = None
    impact: ImpactInfo | None = None
    nested_changes: list[StructuralChange] = []
    parent: ContainerRef | None = Field(default=None, description=(
        "Set on a page's first changes when the changed container holding them (a class whose other changes ran "
        "past the previous page) was on an earlier page: that container. On one page a change nests in it."))


class FileChangeInfo(ToolResult):
    path: str
    status: str
    category: str
    language: str | None = None
    reason: str | None = None
    old_path: str | None = None


class FileCount(ToolResult):
    status: str
    category: str
    language: str | None = None
    reason: str | None = None
    files: int


class Pagination(ToolResult):
    next_cursor: str | None = None
    total_estimate: int = Field(description="Items in the whole answer (structural changes + files).")


class SemanticDiffResult(ToolResult):
    summary: str
    breaking_summary: str | None = None
    files_analyzed: int
    base: str
    target: str
    mode: str
    structural_changes: list[StructuralChange] = []
    non_structural_changes: list[FileChangeInfo] = []
    non_structural_counts: list[FileCount] = Field(default=[], description=(
        "Instead of non_structural_changes when nothing structural changed and the files fill more than a page: "
        "how many files of each kind (git_diff lists them)."))
    agentic_hint: str
    notes: list[str] = []
    pagination: Pagination


def _impact(impact: Impact | None) -> ImpactInfo | None:
    if impact is None:
        return None
    tiers = RefTiers(proven=impact.proven, strong=impact.strong, anchored=impact.anchored, unknown=impact.unknown)
    return ImpactInfo(reference_basis=impact.reference_basis, confidence=impact.confidence,
                      reference_count=impact.reference_count, ref_tiers=tiers if impact.reference_count else None,
                      referencing_files=list(impact.referencing_files),
                      referencing_files_total=impact.referencing_files_total,
                      importing_files=list(impact.importing_files), importing_files_total=impact.importing_files_total,
                      affected_test_files=list(impact.affected_test_files),
                      affected_test_files_total=impact.affected_test_files_total, visibility=impact.visibility,
                      refs_of=impact.refs_of, indexed_at=impact.indexed_at, refs_unknown=impact.refs_unknown)


def _change(c: Change, nested: list[StructuralChange], parent: Change | None = None) -> StructuralChange:
    from codeplane.analysis.models import ADDED, RENAMED

    e = c.entity
    renamed = c.change == RENAMED and c.old is not None
    return StructuralChange(
        path=c.path, kind=c.kind, name=c.name, qualified_name=c.qualified_name, change=c.change,
        structural_severity=c.structural_severity, behavior_change_risk=c.behavior_change_risk, entity_id=e.def_uid,
        old_entity_id=c.old.def_uid if c.old is not None and c.new is not None and c.old.def_uid != c.new.def_uid
        else None,
        # The old signature only where it differs: a body change or a move would repeat the new one.
        old_signature=c.old.display_name if c.old is not None and c.change != ADDED and (
            c.new is None or c.new.display_name != c.old.display_name) else None,
        new_signature=c.new.display_name if c.new is not None else None,
        old_name=c.old.name if renamed and c.old is not None else None, old_path=c.old_path,
        start_line=e.start_line, start_col=e.start_col, end_line=e.end_line, end_col=e.end_col,
        lines_changed=c.lines_changed, delta_tags=list(c.delta_tags),
        change_preview="\n".join(c.preview) or None, impact=_impact(c.impact), nested_changes=nested,
        parent=ContainerRef(kind=parent.kind, qualified_name=parent.qualified_name, entity_id=parent.entity.def_uid)
        if parent is not None else None)


def build_result(page: DiffPage, *, counted: bool = False) -> SemanticDiffResult:
    """The page's changes nested under their changed containers when those are on the same page; a change whose
    container an earlier page showed (a page that starts inside a class) names it as its ``parent``, instead of
    reading as a change in no class. The first ``counted``: the files by kind instead, for a diff with no
    structural change and more files than a page (paging through files said to hold nothing cost 3 calls for
    "nothing to act on")."""
    built: dict[int, StructuralChange] = {}
    kids: dict[int, list[int]] = {}
    first = page.first_index
    indexes = range(first, first + len(page.changes))
    for i in indexes:
        parent = page.changes[i - first].parent
        if parent is not None and parent in indexes:
            kids.setdefault(parent, []).append(i)
    for i in reversed(indexes):  # children come after their parent, so build bottom-up
        change = page.changes[i - first]
        earlier = page.report.changes[change.parent] if change.parent is not None and change.parent < first else None
        built[i] = _change(change, [built[k] for k in kids.get(i, [])], earlier)
    top = [built[i] for i in indexes if page.changes[i - first].parent not in indexes]
    r = page.report
    if counted:
        counts: dict[tuple[str, str, str | None, str | None], int] = {}
        for f in r.files:
            key = (f.status, f.category, f.language, f.reason)
            counts[key] = counts.get(key, 0) + 1
        return SemanticDiffResult(
            summary=page.summary, breaking_summary=page.breaking_summary, files_analyzed=r.files_analyzed,
            base=r.base, target=r.target, mode=r.mode, agentic_hint=page.agentic_hint, notes=r.notes,
            non_structural_counts=[FileCount(status=k[0], category=k[1], language=k[2], reason=k[3], files=n)
                                   for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))],
            pagination=Pagination(total_estimate=page.total))
    return SemanticDiffResult(
        summary=page.summary, breaking_summary=page.breaking_summary, files_analyzed=r.files_analyzed,
        base=r.base, target=r.target, mode=r.mode, structural_changes=top,
        non_structural_changes=[_file(f) for f in page.files], agentic_hint=page.agentic_hint, notes=r.notes,
        pagination=Pagination(next_cursor=page.next_cursor, total_estimate=page.total))


def _file(f: FileChange) -> FileChangeInfo:
    return FileChangeInfo(path=f.path, status=f.status, category=f.category, language=f.language, reason=f.reason,
                          old_path=f.old_path)


# -- text ------------------------------------------------------------------------------------------------


_UNKNOWN = {"file_not_in_index": "file not in index: moved or removed since",
            "not_in_file": "not in its file in the index: renamed or removed since",
            "not_indexed_yet": "not indexed yet"}


def _refs(info: ImpactInfo | None, show_tests: bool) -> str:
    if info is None or info.reference_basis == "unknown":
        parts = [f"refs: unknown ({_UNKNOWN.get(info.refs_unknown, info.refs_unknown)})"] \
            if info is not None and info.refs_unknown else []
    elif info.reference_basis == "ref_facts_resolved":
        t = info.ref_tiers or RefTiers()
        whose = f"refs of {path_text(info.refs_of)}" if info.refs_of else "refs"
        parts = [f"{whose}: {t.proven} proven, {t.strong} strong" + (
            f", {t.anchored + t.unknown} same-name unresolved" if t.anchored + t.unknown else "")
            + (f" (in {path_text(info.indexed_at)} now)" if info.indexed_at else "")]
    else:
        t = info.ref_tiers or RefTiers()
        # A removed definition's uses through imports of its name (``from .k import K``) break with it.
        through = f"{t.proven} proven, {t.strong} strong through imports, " if t.proven + t.strong else ""
        parts = [f"refs: not in index, {through}{t.anchored + t.unknown} same-name unresolved"]
    if info is not None and info.importing_files_total:
        parts.append(f"importers: {info.importing_files_total}")
    if info is not None and info.affected_test_files_total and show_tests:
        parts.append(f"tests: {info.affected_test_files_total}")
    return "; ".join(parts)


def _signature(c: StructuralChange) -> str:
    from codeplane.analysis import signatures
    from codeplane.analysis.models import RENAMED

    # A qualified name holds its module's, which comes from the file's path: quoted as the path is when a control
    # character there would break the line (path_text leaves every other name as it is).
    qualified = path_text(c.qualified_name)
    new = signatures.short(c.new_signature or "", c.name, qualified) if c.new_signature else None
    if c.change == RENAMED and c.old_name is not None:
        old_qualified = c.qualified_name.rpartition(".")[0]
        old_qualified = f"{old_qualified}.{c.old_name}" if old_qualified else c.old_name
        return f"{c.kind} {path_text(old_qualified)} -> {new or qualified}"
    old = signatures.short(c.old_signature or "", c.name, qualified) if c.old_signature else None
    if c.change == "signature_changed" and old and new:
        return f"{c.kind} {old} -> {new}"
    return f"{c.kind} {new or old or qualified}"


def _lines(c: StructuralChange, depth: int, show_tests: bool = True) -> list[str]:
    from codeplane.analysis.models import ADDED, MOVED, REMOVED, RENAMED

    mark = {ADDED: "+", REMOVED: "-", RENAMED: ">", MOVED: ">"}
    pad = "  " * depth
    tags = f" [{', '.join(c.delta_tags)}]" if c.delta_tags else ""
    extra = [f"{'breaking ' if c.structural_severity == 'breaking' else ''}risk:{c.behavior_change_risk}"]
    if c.lines_changed is not None and c.change not in (ADDED, REMOVED):
        extra.append(f"lines:{c.lines_changed}")
    refs = _refs(c.impact, show_tests)
    # As the git tools show paths: the record already writes a byte that is not UTF-8 as ``\xNN``.
    moved = f" (from {path_text(c.old_path)})" if c.old_path else ""
    path = path_text(c.path)
    out = [f"{pad}{mark.get(c.change, '~')} {path}{moved}  {_signature(c)}  {c.change}{tags} {' '.join(extra)}"
           + (f"  {refs}" if refs else "") + f"  {c.entity_id}"
           + (f" (was {c.old_entity_id})" if c.old_entity_id else "")]
    if c.change_preview and c.change in ("body_changed", "signature_changed"):
        out += [f"{pad}    | {line}" for line in c.change_preview.split("\n")]
    for n in c.nested_changes:
        out += _lines(n, depth + 1, show_tests)
    return out


#: The analysis' hint when nothing structural changed (``analysis/report.py``).
_NOTHING_TO_DO = "nothing to act on"


def render(result: SemanticDiffResult) -> str:
    lines = [f"semantic_diff {result.base} -> {result.target}: {result.summary}"]
    if result.breaking_summary:
        lines.append(result.breaking_summary)
    if result.agentic_hint != _NOTHING_TO_DO:  # the head's summary says there is nothing (the record keeps it)
        lines.append(f"hint: {result.agentic_hint}")
    lines += [f"note: {n}" for n in result.notes]
    # A work-tree diff's changes all reached the same tests (``tests: 600`` on every line): said once.
    tests = {c.impact.affected_test_files_total if c.impact else 0 for c in _flat(result.structural_changes)}
    shared = tests.pop() if len(tests) == 1 and _count(result.structural_changes) > 1 else 0
    if shared and f"re-run {shared} affected test" not in result.agentic_hint:
        lines.append(f"tests: {shared} for each change")
    container = None
    for c in result.structural_changes:
        # The changes of a container an earlier page showed: under one line naming it, as they would nest on its page.
        if c.parent is not None and c.parent != container:
            lines.append(f"… {path_text(c.path)}  {c.parent.kind} {path_text(c.parent.qualified_name)}  (continued)  "
                         f"{c.parent.entity_id}")
        container = c.parent
        lines += _lines(c, 1 if c.parent is not None else 0, show_tests=not shared)
    # Files of one kind under one heading: the kind on each line repeated itself.
    groups: dict[str, list[str]] = {}
    for f in result.non_structural_changes:
        groups.setdefault(_kind(f.status, f.category, f.language, f.reason), []).append(
            f"  {path_text(f.path)}" + (f" (from {path_text(f.old_path)})" if f.old_path else ""))
    for kind, paths in groups.items():
        lines += [f"? {kind}:", *paths]
    lines += [f"? {n.files} file{'s' if n.files != 1 else ''} {_kind(n.status, n.category, n.language, n.reason)}"
              for n in result.non_structural_counts]
    shown = len(result.non_structural_changes) + _count(result.structural_changes)
    if result.pagination.next_cursor:
        lines.append(f"{shown} of {result.pagination.total_estimate} items; "
                     f"next cursor: {result.pagination.next_cursor}")
    return "\n".join(lines)


def _kind(status: str, category: str, language: str | None, reason: str | None) -> str:
    return f"{status} {category}" + (f" {language}" if language else "") + (f" ({reason})" if reason else "")


def _flat(changes: list[StructuralChange]) -> list[StructuralChange]:
    return [x for c in changes for x in (c, *_flat(c.nested_changes))]


def _first(page: DiffPage, count: int) -> DiffPage:
    """The page's first ``count`` items (changes, then files), as a page with a next cursor."""
    changes = page.changes[:count]
    return replace(page, changes=changes, files=page.files[:count - len(changes)], next_cursor=CURSOR_STAND_IN)


def _count(changes: list[StructuralChange]) -> int:
    return sum(1 + _count(c.nested_changes) for c in changes)


def tools(services: Services) -> list[ToolSpec]:
    async def _semantic_diff(ctx: ToolContext, params: SemanticDiffParams) -> SemanticDiffResult:
        page = await anyio.to_thread.run_sync(lambda: ctx.services.analysis.diff(
            params.base, params.target, params.paths, cursor=params.cursor, limit=params.limit))
        fit = items_that_fit(len(page.changes) + len(page.files), lambda k: render(build_result(_first(page, k))))
        whole = fit == len(page.changes) + len(page.files)
        if params.cursor is None and not page.report.changes and (page.next_cursor is not None or not whole):
            return build_result(page, counted=True)
        if whole:
            return build_result(page)
        # Fewer items, so that the text fits; the cursor resumes after the last one shown.
        page = await anyio.to_thread.run_sync(lambda: ctx.services.analysis.diff(
            params.base, params.target, params.paths, cursor=params.cursor, limit=fit))
        return build_result(page)

    return [
        ToolSpec(
            name="semantic_diff",
            category="analysis",
            summary=("What changed structurally between two git revisions (default HEAD -> work tree) or two index "
                     "epochs: definitions added, removed, renamed, with changed signatures or bodies, each with "
                     "its references by tier, importers and affected tests. Use it to review a change before "
                     "committing or to see which callers and tests an edit touches."),
            params=SemanticDiffParams,
            result=SemanticDiffResult,
            handler=_semantic_diff,
            kind="read",
            render=render,
            when_to_use=("reviewing your own edits before committing", "checking which callers a signature change "
                         "breaks", "summarising what a branch or commit range changed"),
            when_not_to_use=("reading the line diff itself (use git_diff)",),
            examples=(ToolExample("work tree against HEAD", {}),
                      ToolExample("two commits, one directory", {"base": "main", "target": "HEAD",
                                                                 "paths": ["src/"]}),
                      ToolExample("since an earlier index epoch", {"base": "epoch:12"})),
        )
    ]
