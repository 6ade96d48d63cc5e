"""``lint_tools`` and ``lint_check`` (§23.4 Lint Tools): the repository's linters, and their diagnostics in one
shape, with fixes applied as one mutation batch (``lint/``)."""

from __future__ import annotations

import asyncio

import anyio
from pydantic import Field, PrivateAttr

from codeplane.core.calls import MutationReport
from codeplane.lint import Diagnostic, FixOutcome, LinterInfo, Progress, ToolRun
from codeplane.repo.universe import quoted_path
from codeplane.server.answers import in_repo, short_sha
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolKind, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.cursor_arg import Cursor
from codeplane.server.tools.paging import CURSOR_STAND_IN, items_that_fit

#: How often a running lint_check looks for finished linters to report as progress.
_POLL_S = 0.2


class LintToolsParams(ToolParams):
    pass


class LintToolsResult(ToolResult):
    #: The repository's root, for the text alone: an executable inside it is shown repo-relative.
    _root: str = PrivateAttr(default="")

    linters: list[LinterInfo] = []


class LintCheckParams(ToolParams):
    paths: list[str] | None = Field(default=None, max_length=500,
                                    description="Files or directories to lint (default: the whole repository).")
    tools: list[str] | None = Field(default=None, max_length=50,
                                    description="Linters to run by name (ruff, mypy, ...: as the answer's run lines "
                                                "name them); default all.")
    fix: bool = Field(default=False, description="Apply the linters' safe fixes first, as one atomic batch.")
    limit: int = Field(default=100, ge=1, le=500, description="Diagnostics per page.")
    cursor: Cursor = Field(default=None, description="next_cursor of an earlier answer: its next page.")


class LintCheckResult(ToolResult):
    diagnostics: list[Diagnostic] = []
    total: int = 0
    errors: int = 0
    warnings: int = 0
    fixable: int = 0
    offset: int = 0
    next_cursor: str | None = None
    truncated: bool = False
    runs: list[ToolRun] = []
    fix: FixOutcome | None = None
    notes: list[str] = []

    def mutation_report(self) -> MutationReport | None:
        if self.fix is None or self.fix.delta.files_changed == 0:
            return None
        return self.fix.delta.mutation_report()


async def _lint_tools(ctx: ToolContext, params: LintToolsParams) -> LintToolsResult:
    linters = await anyio.to_thread.run_sync(ctx.services.lint.tools)
    result = LintToolsResult(linters=linters)
    result._root = str(ctx.services.root)
    return result


async def _lint_check(ctx: ToolContext, params: LintCheckParams) -> LintCheckResult:
    service = ctx.services.lint
    if params.cursor is not None:
        cursor = params.cursor
        report = await anyio.to_thread.run_sync(
            lambda: service.page(cursor, params.limit, paths=params.paths, tools=params.tools))
        return await _fitted(ctx, LintCheckResult.model_validate(report, from_attributes=True), report.cursor)
    progress = Progress()
    work = asyncio.get_running_loop().run_in_executor(None, lambda: service.check(
        paths=params.paths, tools=params.tools, fix=params.fix, limit=params.limit, progress=progress))
    sent = 0
    while True:
        finished, _ = await asyncio.wait({work}, timeout=_POLL_S)
        while sent < len(progress.finished):  # one notification per linter run that ended
            sent += 1
            await ctx.progress(float(sent), float(progress.total) or None, progress.finished[sent - 1])
        if finished:
            break
    report = work.result()
    return await _fitted(ctx, LintCheckResult.model_validate(report, from_attributes=True), report.cursor)


async def _fitted(ctx: ToolContext, result: LintCheckResult, cursor: str) -> LintCheckResult:
    """``result`` with as many of its diagnostics as fit a text; the cursor resumes after the last shown."""
    fit = items_that_fit(len(result.diagnostics), lambda k: render_lint_check(result.model_copy(
        update={"diagnostics": result.diagnostics[:k], "next_cursor": CURSOR_STAND_IN})))
    if fit == len(result.diagnostics):
        return result
    report = await anyio.to_thread.run_sync(lambda: ctx.services.lint.page(cursor, fit))
    return result.model_copy(update={"diagnostics": report.diagnostics, "next_cursor": report.next_cursor})


def _kind(params: LintCheckParams) -> ToolKind:
    return "mutation" if params.fix and params.cursor is None else "read"


def _detail(params: LintCheckParams) -> str:
    parts = [f"paths={len(params.paths or [])}", f"fix={str(params.fix).lower()}"]
    if params.tools:
        parts.append("tools=" + ",".join(sorted(params.tools)))
    return " ".join(parts)


def render_lint_tools(result: LintToolsResult) -> str:
    """One line per linter: name, where, config, executable or how to install it."""
    if not result.linters:
        return "no linters configured or conventional here"
    lines = []
    for info in result.linters:
        where = f"{quoted_path(info.root)}/" if info.root != "." else "./"
        config = quoted_path(info.config_file) if info.config_file else "(conventional, defaults)"
        state = in_repo(info.executable or "", result._root) if info.found else f"MISSING - {info.install_hint}"
        flags = [f for f, on in (("can fix", info.can_fix), ("listed only", not info.runnable)) if on]
        lines.append(f"{info.name} {where} {config} {' '.join(info.extensions)}: {state}"
                     + (f" [{', '.join(flags)}]" if flags else ""))
    return "\n".join(lines)


def _diagnostic_line(d: Diagnostic, *, one_tool: bool) -> str:
    """``path:line:col: CODE message`` (``path:cell N:line:col`` in a notebook), as ``ruff check --output-format
    concise`` prints it (``[*]``: fixable), the tool named only when several ran, the severity when it is not an
    error."""
    mark = " [*]" if d.fixable else ""
    code = f"{d.code} " if d.code else ""
    tags = [t for t in ((None if one_tool else d.tool), (None if d.severity == "error" else d.severity)) if t]
    path = quoted_path(d.path)
    where = f"{path}:cell {d.cell}" if d.cell is not None else path  # ruff's form for a notebook
    return f"{where}:{d.line}:{d.column}: {code}{d.message}" + (f" [{' '.join(tags)}]" if tags else "") + mark


def _run_line(run: ToolRun) -> str:
    """``mypy: ok`` for a linter that ran and reported nothing, else what it reported (``mypy: 5 diagnostics``,
    ``ruff: failed, 1 diagnostic - why``): "ok (5)" read as no problems when there were five."""
    where = "" if run.root == "." else f"@{quoted_path(run.root)}"
    elsewhere = f"; {run.elsewhere} in other files, not shown" if run.elsewhere else ""
    found = (f"{run.diagnostics} diagnostic{'' if run.diagnostics == 1 else 's'}" if run.diagnostics
             else "no diagnostics here" if run.elsewhere else "") + elsewhere
    if run.status == "ok":
        return f"{run.tool}{where}: {found or 'ok'}"
    head = f"{run.tool}{where}: {run.status}" + (f", {found}" if found else "")
    return head + (f" - {run.message}" if run.message else "")


def render_lint_check(result: LintCheckResult) -> str:
    """``path:line:col: CODE message`` per diagnostic, then the fix, the runs and a summary line. No timings: the
    same repository and call answer the same bytes (the record has them)."""
    one_tool = len({d.tool for d in result.diagnostics}) <= 1
    lines = [_diagnostic_line(d, one_tool=one_tool) for d in result.diagnostics]
    if result.fix is not None:
        lines.append(f"fixed {len(result.fix.files)} file(s)")
        lines += [f"{quoted_path(f.path)} {f.edits} edit(s) by {f.tool} {short_sha(f.new_sha256 or '')}".rstrip()
                  for f in result.fix.files]
    lines += [f"note: {n}" for n in result.notes]
    lines += [_run_line(run) for run in result.runs]
    all_shown = result.offset == 0 and len(result.diagnostics) == result.total and not result.next_cursor
    if not result.total:
        # Each run that ended ok says so on its line (``ruff: ok``): the summary said it again.
        summary = "" if result.runs and all(r.status == "ok" for r in result.runs) else "no diagnostics"
    else:
        # Only counts no other line says, non-zero: the one run's line counted them (``ruff: 491 diagnostics``),
        # and errors and warnings only when both occur (a diagnostic line tags a severity that is not an error).
        mixed = result.errors and result.warnings
        tally = [f"{n} {what}" for n, what in ((result.errors if mixed else 0, "error"),
                                               (result.warnings if mixed else 0, "warning"),
                                               (result.fixable, "fixable ([*])")) if n]
        total = f"{result.total} diagnostic(s)" if len(result.runs) != 1 else ""
        summary = f"{total}: {', '.join(tally)}" if total and tally else total or ", ".join(tally)
        if not all_shown:
            shown = f"{result.offset + 1}-{result.offset + len(result.diagnostics)}" if result.diagnostics else "none"
            summary += f"{'; ' if summary else ''}showing {shown}"
    if result.truncated:
        summary += " (more than lint.max_diagnostics; only the first are kept)"
    if result.next_cursor:
        summary += f"; next cursor: {result.next_cursor}"
    lines += [summary.lstrip()] if summary else []
    return "\n".join(lines)


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            name="lint_tools",
            category="lint",
            summary=("The linters this repository uses (ruff, mypy, eslint, biome, tsc, go vet, golangci-lint, "
                     "clippy): each with its project directory, config file, executable or how to install it, "
                     "and whether lint_check can fix its findings."),
            params=LintToolsParams,
            result=LintToolsResult,
            handler=_lint_tools,
            when_to_use=("learning which linters lint_check will run and which are missing",),
            render=render_lint_tools,
        ),
        ToolSpec(
            name="lint_check",
            category="lint",
            summary=("Run the repository's linters in parallel and answer their diagnostics in one shape "
                     "(path:line:col, code, severity, message, fixable, tool), sorted and paged. fix: true "
                     "applies the safe fixes as one atomic write (delta, ledger, index) and lists what is left; "
                     "a missing or hanging linter is reported, never fatal."),
            params=LintCheckParams,
            result=LintCheckResult,
            handler=_lint_check,
            kind="read",
            kind_for=_kind,
            detail_for=_detail,
            read_only=False,
            destructive=False,
            idempotent=False,
            when_to_use=("after an edit, to see lint and type errors without a terminal",
                         "cleaning up auto-fixable findings (unused imports, import order, prefer-const)"),
            when_not_to_use=("formatting a whole codebase (use the project's formatter)",),
            examples=(
                ToolExample("lint the files just edited", {"paths": ["src/app.py", "src/util.py"]}),
                ToolExample("fix what ruff can fix under src/", {"paths": ["src"], "tools": ["ruff"], "fix": True}),
                ToolExample("next page", {"cursor": "<next_cursor>"}),
            ),
            render=render_lint_check,
        ),
    ]
