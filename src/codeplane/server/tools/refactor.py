"""Refactor tools (§23.7): ``refactor_rename``/``refactor_move``/``refactor_impact`` preview,
``refactor_inspect`` pages uncertain edits, ``refactor_apply`` writes one atomic batch, ``refactor_cancel``.

``refactor_rename``/``refactor_move`` with ``apply: true`` also apply the plan in the same call when nothing in
it needs a judgment (``RefactorService.apply_when_certain``): a rename whose every edit is certain costs one
call instead of two. So both tools may write, and are annotated as writing tools."""

from __future__ import annotations

from typing import Literal

import anyio
from pydantic import Field

from codeplane.core.calls import MutationReport
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.refactor.models import ApplyOutcome, ImpactReport, InspectPage, RefactorPreview
from codeplane.server.services import Services
from codeplane.server.tooling import (
    LINE_MAX,
    ToolContext,
    ToolExample,
    ToolKind,
    ToolParams,
    ToolResult,
    ToolSpec,
)
from codeplane.server.tools.cursor_arg import Cursor
from codeplane.server.tools.paging import CURSOR_STAND_IN, items_that_fit
from codeplane.server.tools.refactor_columns import engine_position, one_based, one_based_error
from codeplane.server.tools.refactor_render import render_apply, render_impact, render_inspect, render_plan

_CATEGORY = "refactor"
_APPLY_NOW = ("Apply at once (as refactor_apply) if every edit is high-certainty and nothing needs a decision; "
              "otherwise the preview, not applied.")


class RenameParams(ToolParams):
    symbol: str | None = Field(
        default=None, description="Qualified name (pkg.mod.Class.method or Class.method), a def_uid, or "
                                  "path:line[:column]. Several matching definitions answer needs_decision.")
    new_name: str = Field(min_length=1, max_length=200, description="The new identifier (checked per language).")
    path: str | None = Field(default=None, description="With symbol: the file defining it. With line: the file of "
                                                          "the definition or a reference (instead of symbol).")
    line: int | None = Field(default=None, ge=1, le=LINE_MAX, description="With path: 1-based line.")
    column: int | None = Field(default=None, ge=1, le=LINE_MAX, description=(
        "With path+line: 1-based column of the name; or give symbol as the name on that line. A line holding "
        "several names with neither answers needs_decision."))
    apply: bool = Field(default=False, description=_APPLY_NOW)


class MoveParams(ToolParams):
    from_path: str | None = Field(default=None, min_length=1,
                                  description="File (or directory) to move, repo-relative; with symbol, the file "
                                              "defining it.")
    to_path: str = Field(min_length=1, description="Destination path; must not exist for a file move. For a "
                                                   "symbol: the destination module (created if missing).")
    symbol: str | None = Field(default=None, min_length=1,
                               description="Python/JS/TS function, class, constant or type to move instead of a file: "
                                           "qualified name, def_uid or path:line[:column].")
    keep_reexport: bool = Field(default=False, description="With symbol: leave 'from new import name' in the old "
                                                           "module for compatibility.")
    apply: bool = Field(default=False, description=_APPLY_NOW)


class ImpactParams(ToolParams):
    target: str = Field(min_length=1, description="A file path, qualified name, def_uid or path:line[:column].")
    path: str | None = None
    line: int | None = Field(default=None, ge=1, le=LINE_MAX)
    column: int | None = Field(default=None, ge=1, le=LINE_MAX)
    limit: int = Field(default=100, ge=1, le=500)
    cursor: Cursor = None


class InspectParams(ToolParams):
    refactor_id: str
    candidate_id: str | None = Field(default=None, description="Which candidate of a needs_decision plan.")
    certainty: list[Literal["high", "medium", "low"]] = Field(default=["medium", "low"], min_length=1)
    kind: list[Literal["code", "doc"]] = Field(default=["code", "doc"], min_length=1)
    cursor: Cursor = None
    limit: int = Field(default=50, ge=1, le=200)
    context_lines: int = Field(default=2, ge=0, le=10)


class ApplyParams(ToolParams):
    refactor_id: str
    candidate_id: str | None = Field(default=None, description="Required when the preview said needs_decision.")
    include: list[str] = Field(default=[], max_length=10_000,
                               description="Edit ids to apply in addition (e.g. verified low candidates).")
    exclude: list[str] = Field(default=[], max_length=10_000, description="Edit ids to leave out.")
    min_certainty: Literal["high", "medium"] = Field(
        default="medium", description="Apply edits at or above this certainty (low is never applied by default).")
    apply_docs: bool | None = Field(default=None,
                                    description="Apply documentation edits (default: refactor.doc_sweep.auto_apply).")
    accept_collisions: bool = Field(default=False, description="Apply although the preview reported collisions.")


class CancelParams(ToolParams):
    refactor_id: str


class RefactorPreviewResult(RefactorPreview, ToolResult):
    """A previewed plan; nothing has been written unless ``applied`` is set."""

    #: With ``apply: true`` and nothing to decide: what refactor_apply answered (the plan's edits are in it).
    applied: ApplyOutcome | None = None
    #: With ``apply: true`` when something needs a decision: why it was not applied (apply with refactor_apply).
    not_applied: str | None = None


class AppliedPlanResult(RefactorPreviewResult):
    """A plan ``apply: true`` applied. Only this type reports a mutation: a call asked to apply that did not is
    not a mutation that changed nothing (no ``no_op`` signal, no fingerprint), it wrote nothing at all."""

    def mutation_report(self) -> MutationReport | None:
        delta = self.applied.delta if self.applied is not None else None
        return delta.mutation_report() if delta is not None and delta.files_changed else None


class ImpactResult(ImpactReport, ToolResult):
    """References, importers and affected tests; ``delete_refactor_id`` previews the deletion."""


class InspectResult(InspectPage, ToolResult):
    """One page of a plan's edits with context lines."""


class ApplyResult(ApplyOutcome, ToolResult):
    """What the applied batch changed."""

    def mutation_report(self) -> MutationReport | None:
        return self.delta.mutation_report() if self.delta is not None and self.delta.files_changed else None


class CancelResult(ToolResult):
    refactor_id: str
    operation: str
    cancelled: bool


async def _answer(ctx: ToolContext, preview: RefactorPreview, apply: bool) -> RefactorPreviewResult:
    """The preview, or with ``apply`` the preview applied at once when nothing in it needs a judgment. An applied
    plan's answer leaves out the preview's edits and affected files: they are written, and the apply's delta
    says what changed with the new hashes."""
    result = one_based(RefactorPreviewResult.model_validate(preview, from_attributes=True))
    if not apply:
        return result
    service = ctx.services.refactor
    outcome = await anyio.to_thread.run_sync(lambda: service.apply_when_certain(preview))
    if isinstance(outcome, str):
        return result.model_copy(update={"not_applied": outcome})
    applied = result.model_copy(update={"applied": outcome, "edits": [], "edits_truncated": False,
                                        "affected_files": [], "affected_files_total": 0, "edited_files_total": 0})
    return AppliedPlanResult.model_validate(applied, from_attributes=True)


def _kind(params: RenameParams | MoveParams) -> ToolKind:
    return "mutation" if params.apply else "read"


def tools(services: Services) -> list[ToolSpec]:
    async def rename(ctx: ToolContext, p: RenameParams) -> RefactorPreviewResult:
        symbol, column = engine_position(p.symbol, p.column)
        try:
            preview = await anyio.to_thread.run_sync(
                lambda: ctx.services.refactor.rename(symbol, p.new_name, path=p.path, line=p.line, column=column))
        except CodePlaneError as exc:
            raise one_based_error(exc) from None
        return await _answer(ctx, preview, p.apply)

    async def move(ctx: ToolContext, p: MoveParams) -> RefactorPreviewResult:
        if p.from_path is None and p.symbol is None:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "give from_path (a file move) or symbol (a symbol move)",
                                 details={"field": "from_path/symbol"})
        if p.symbol is not None:
            symbol = engine_position(p.symbol, None)[0] or p.symbol
            preview = await anyio.to_thread.run_sync(lambda: ctx.services.refactor.move_symbol(
                symbol, p.to_path, keep_reexport=p.keep_reexport, from_path=p.from_path))
            return await _answer(ctx, preview, p.apply)
        from_path = p.from_path or ""
        preview = await anyio.to_thread.run_sync(lambda: ctx.services.refactor.move(from_path, p.to_path))
        return await _answer(ctx, preview, p.apply)

    async def impact(ctx: ToolContext, p: ImpactParams) -> ImpactResult:
        target, column = engine_position(p.target, p.column)

        def run(limit: int) -> ImpactResult:
            return one_based(ImpactResult.model_validate(ctx.services.refactor.impact(
                target or p.target, path=p.path, line=p.line, column=column, limit=limit, cursor=p.cursor),
                from_attributes=True))

        try:
            result = await anyio.to_thread.run_sync(lambda: run(p.limit))
        except CodePlaneError as exc:
            raise one_based_error(exc) from None
        refs = result.references
        fit = items_that_fit(len(refs), lambda k: render_impact(result.model_copy(
            update={"references": refs[:k], "next_cursor": CURSOR_STAND_IN})))
        # Fewer references, so that the text fits; the cursor resumes after the last one shown.
        return result if fit == len(refs) else await anyio.to_thread.run_sync(lambda: run(fit))

    async def inspect(ctx: ToolContext, p: InspectParams) -> InspectResult:
        def run(limit: int) -> InspectResult:
            return one_based(InspectResult.model_validate(ctx.services.refactor.inspect(
                p.refactor_id, candidate_id=p.candidate_id, certainties=p.certainty, kinds=p.kind, cursor=p.cursor,
                limit=limit, context_lines=p.context_lines), from_attributes=True))

        try:
            result = await anyio.to_thread.run_sync(lambda: run(p.limit))
        except CodePlaneError as exc:
            raise one_based_error(exc) from None
        items = result.items
        fit = items_that_fit(len(items), lambda k: render_inspect(result.model_copy(
            update={"items": items[:k], "next_cursor": CURSOR_STAND_IN})))
        return result if fit == len(items) else await anyio.to_thread.run_sync(lambda: run(fit))

    async def apply(ctx: ToolContext, p: ApplyParams) -> ApplyResult:
        try:
            outcome = await anyio.to_thread.run_sync(lambda: ctx.services.refactor.apply(
                p.refactor_id, candidate_id=p.candidate_id, include=p.include, exclude=p.exclude,
                min_certainty=p.min_certainty, apply_docs=p.apply_docs, accept_collisions=p.accept_collisions))
        except CodePlaneError as exc:
            raise one_based_error(exc) from None
        return one_based(ApplyResult.model_validate(outcome, from_attributes=True))

    async def cancel(ctx: ToolContext, p: CancelParams) -> CancelResult:
        plan = ctx.services.refactor.cancel(p.refactor_id)
        return CancelResult(refactor_id=plan.refactor_id, operation=plan.operation, cancelled=True)

    preview_note = ("nothing is written until refactor_apply, or at once with apply: true when every edit is "
                    "high-certainty")
    return [
        ToolSpec(
            name="refactor_rename", category=_CATEGORY, params=RenameParams, result=RefactorPreviewResult,
            render=render_plan,
            handler=rename, kind="read", kind_for=_kind, read_only=False, destructive=True, idempotent=False,
            summary="Preview renaming one definition and exactly its references (token spans, certainty per edit); "
                    "returns refactor_id for refactor_inspect and refactor_apply; " + preview_note + ".",
            when_to_use=("renaming a function, class, method or variable across the repository",
                         "you need every reference found or explained (coverage lists every other mention)"),
            when_not_to_use=("editing text that is not an identifier (use write_source)",
                             "renaming a file (use refactor_move)"),
            examples=(ToolExample("rename a method", {"symbol": "app.models.User.save", "new_name": "persist"}),
                      ToolExample("rename and apply if nothing is uncertain",
                                  {"symbol": "app.util.load", "new_name": "load_config", "apply": True}),
                      ToolExample("rename at a position", {"path": "src/app.py", "line": 12, "column": 5,
                                                           "new_name": "load_config"})),
        ),
        ToolSpec(
            name="refactor_move", category=_CATEGORY, params=MoveParams, result=RefactorPreviewResult,
            render=render_plan,
            handler=move, kind="read", kind_for=_kind, read_only=False, destructive=True, idempotent=False,
            summary="Preview moving a file or directory (git mv for clean tracked files), or a Python/JS/TS symbol "
                    "to another module, and rewriting the imports that name it; " + preview_note + ".",
            when_to_use=("moving or renaming a module and keeping its importers working",
                         "moving a function, class or constant to another module (symbol + to_path)"),
            when_not_to_use=("moving a symbol in Go, Rust or other languages (not supported)",),
            examples=(ToolExample("move a module",
                                  {"from_path": "src/pkg/util.py", "to_path": "src/pkg/core/util.py"}),
                      ToolExample("move a function", {"symbol": "pkg.util.helper", "to_path": "src/pkg/paths.py",
                                                      "keep_reexport": True})),
        ),
        ToolSpec(
            name="refactor_impact", category=_CATEGORY, params=ImpactParams, result=ImpactResult,
            handler=impact, kind="read", idempotent=False, render=render_impact,
            summary="What depends on a symbol or file: references with tiers, importing files, affected tests; "
                    "delete_refactor_id previews deleting it (apply with refactor_apply).",
            when_to_use=("before deleting or changing a symbol or file",
                         "finding the call sites of a definition with their certainty"),
            when_not_to_use=("free-text search (use search)",),
            examples=(ToolExample("impact of a function", {"target": "pkg.util.helper"}),
                      ToolExample("impact of a file", {"target": "src/pkg/util.py"})),
        ),
        ToolSpec(
            name="refactor_inspect", category=_CATEGORY, params=InspectParams, result=InspectResult,
            handler=inspect, kind="read", render=render_inspect,
            summary="Page through a pending plan's medium/low (or any) edits with the lines around each one.",
            when_to_use=("the preview said verification_required",
                         "choosing which low candidates to include in refactor_apply"),
            when_not_to_use=("no plan is pending",),
            examples=(ToolExample("low candidates", {"refactor_id": "rf_ab12cd00001", "certainty": ["low"]}),),
        ),
        ToolSpec(
            name="refactor_apply", category=_CATEGORY, params=ApplyParams, result=ApplyResult,
            render=render_apply,
            handler=apply, kind="mutation", read_only=False, destructive=True, idempotent=False,
            summary="Apply a previewed plan in one atomic batch (high+medium by default, plus include, minus "
                    "exclude); refused with 5002 listing the files changed since the preview.",
            when_to_use=("after refactor_rename/refactor_move/refactor_impact previewed what you want",),
            when_not_to_use=("the preview is older than the files (preview again)",),
            examples=(ToolExample("apply", {"refactor_id": "rf_ab12cd00001"}),
                      ToolExample("commit a decision", {"refactor_id": "rf_ab12cd00002", "candidate_id": "c2"}),
                      ToolExample("high only", {"refactor_id": "rf_ab12cd00003", "min_certainty": "high"})),
        ),
        ToolSpec(
            render=lambda r: f"{r.refactor_id} ({r.operation}) {'cancelled' if r.cancelled else 'not cancelled'}",
            name="refactor_cancel", category=_CATEGORY, params=CancelParams, result=CancelResult,
            handler=cancel, kind="meta", read_only=False, idempotent=False,
            summary="Forget a pending refactor plan (nothing was written by the preview).",
            when_to_use=("a preview is not what you want",),
            when_not_to_use=("the plan was already applied (use git tools to undo)",),
            examples=(ToolExample("cancel", {"refactor_id": "rf_ab12cd00001"}),),
        ),
    ]
