"""Read-side git tools: ``git_status``, ``git_diff``, ``git_log``, ``git_history``, ``git_inspect``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.blame import BlamePage
from codeplane.git.diffs import DiffLimits, DiffReport
from codeplane.git.history import HistoryPage
from codeplane.git.log import LogPage
from codeplane.git.recovery import RecoveryPoint
from codeplane.git.show import ShowResult
from codeplane.git.status import StatusReport
from codeplane.git.tags import TagInfo
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolKind, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.git_common import CATEGORY, ActionResult, as_result, run
from codeplane.server.tools.git_render import (
    render_blame,
    render_diff,
    render_git_write,
    render_history,
    render_log,
    render_show,
    render_status,
)

LineRange = tuple[int, int]


class GitStatusParams(ToolParams):
    paths: list[str] | None = Field(default=None, description="Only report these files/directories.")
    limit: int = Field(default=1000, ge=1, le=10_000, description="Cap per list; *_total counts stay exact.")


class GitStatusResult(ToolResult, StatusReport):
    pass


class GitDiffParams(ToolParams):
    base: str | None = Field(default=None, description="Commit/ref to diff against (default: the index, or HEAD "
                                                       "with staged/target).")
    target: str | None = Field(default=None, description="Second commit/ref (default: the working tree).")
    staged: bool = Field(default=False, description="Diff the index (staged changes) instead of the working tree.")
    paths: list[str] | None = None
    include_hunks: bool = Field(default=True, description="false: per-file stats only (like --numstat).")
    context_lines: int = Field(default=3, ge=0, le=50)
    max_files: int = Field(default=200, ge=1, le=2000)
    max_hunks_per_file: int = Field(default=100, ge=1, le=1000)
    max_lines: int | None = Field(default=None, ge=1, le=100_000,
                                  description="Cap on hunk lines overall (default: config git.diff_max_lines).")


class GitDiffResult(ToolResult, DiffReport):
    pass


class GitLogParams(ToolParams):
    ref: str | None = Field(default=None, description="Start commit/branch (default HEAD).")
    limit: int = Field(default=50, ge=1, le=200)
    since: str | None = Field(default=None, description="ISO date; commits at or after it (committer date).")
    until: str | None = Field(default=None, description="ISO date; commits at or before it.")
    paths: list[str] | None = Field(default=None, description="Only commits that change these paths.")
    cursor: str | None = Field(default=None, description="pagination.next_cursor of the previous page.")


class GitLogResult(ToolResult, LogPage):
    pass


class GitHistoryParams(ToolParams):
    path: str
    line_range: LineRange | None = Field(default=None, description="[first, last] lines (1-based) to follow.")
    ref: str | None = None
    limit: int = Field(default=20, ge=1, le=100)
    cursor: str | None = None


class GitHistoryResult(ToolResult, HistoryPage):
    pass


class GitInspectParams(ToolParams):
    action: Literal["show", "blame", "tags", "tag_create", "tag_delete", "recovery_points"] = "show"
    ref: str | None = Field(default=None, description="show/blame/tag_create: commit, tag or ref (default HEAD).")
    path: str | None = Field(default=None, description="show: object at ref:path; blame: the file.")
    line_range: LineRange | None = Field(default=None, description="blame: [first, last] lines.")
    limit: int | None = Field(default=None, ge=1, le=2000, description="blame: lines per page (default 200); "
                                                                        "tags/recovery_points: entries.")
    cursor: str | None = Field(default=None, description="blame: pagination.next_cursor.")
    name: str | None = Field(default=None, description="tag_create/tag_delete: tag name.")
    message: str | None = Field(default=None, description="tag_create: makes an annotated tag.")
    force: bool = Field(default=False, description="tag_create: move an existing tag.")
    include_hunks: bool = Field(default=True, description="show: include the commit's diff hunks.")
    max_lines: int | None = Field(default=None, ge=1, le=100_000, description="show: diff line cap.")


class GitInspectResult(ActionResult):
    show: ShowResult | None = None
    blame: BlamePage | None = None
    tags: list[TagInfo] = []
    tags_total: int | None = None
    tag: TagInfo | None = None
    recovery_points: list[RecoveryPoint] = []


async def _status(ctx: ToolContext, p: GitStatusParams) -> GitStatusResult:
    return as_result(GitStatusResult, await run(lambda: ctx.services.git.status(p.paths or (), p.limit)))


def _limits(ctx: ToolContext, include_hunks: bool, max_lines: int | None, *, context: int = 3,
            max_files: int = 200, max_hunks: int = 100) -> DiffLimits:
    return DiffLimits(max_files=max_files, max_hunks_per_file=max_hunks, include_hunks=include_hunks,
                      max_lines=max_lines or ctx.services.config.git.diff_max_lines, context_lines=context)


async def _diff(ctx: ToolContext, p: GitDiffParams) -> GitDiffResult:
    limits = _limits(ctx, p.include_hunks, p.max_lines, context=p.context_lines, max_files=p.max_files,
                     max_hunks=p.max_hunks_per_file)
    report = await run(lambda: ctx.services.git.diff(base=p.base, target=p.target, staged=p.staged,
                                                     paths=p.paths or (), limits=limits))
    return as_result(GitDiffResult, report)


async def _log(ctx: ToolContext, p: GitLogParams) -> GitLogResult:
    page = await run(lambda: ctx.services.git.log(ref=p.ref, limit=p.limit, since=p.since, until=p.until,
                                                  paths=p.paths or (), cursor=p.cursor))
    return as_result(GitLogResult, page)


async def _history(ctx: ToolContext, p: GitHistoryParams) -> GitHistoryResult:
    page = await run(lambda: ctx.services.git.history(p.path, ref=p.ref, line_range=p.line_range, limit=p.limit,
                                                      cursor=p.cursor))
    return as_result(GitHistoryResult, page)


def _need(value: str | None, field: str, action: str) -> str:
    if not value:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"action={action!r} needs {field}", details={"field": field})
    return value


async def _inspect(ctx: ToolContext, p: GitInspectParams) -> GitInspectResult:
    git = ctx.services.git
    if p.action == "show":
        limits = _limits(ctx, p.include_hunks, p.max_lines)
        return GitInspectResult(action=p.action, show=await run(lambda: git.show(p.ref or "HEAD", p.path, limits)))
    if p.action == "blame":
        path = _need(p.path, "path", p.action)
        page = await run(lambda: git.blame(path, ref=p.ref, line_range=p.line_range, limit=p.limit or 200,
                                           cursor=p.cursor))
        return GitInspectResult(action=p.action, blame=page)
    if p.action == "tags":
        found, total = await run(lambda: git.tags(p.limit or 500))
        return GitInspectResult(action=p.action, tags=found, tags_total=total)
    if p.action == "recovery_points":
        return GitInspectResult(action=p.action, recovery_points=await run(lambda: git.recovery_points(p.limit or 50)))
    name = _need(p.name, "name", p.action)
    if p.action == "tag_create":
        made = await run(lambda: git.tag_create(name, p.ref, message=p.message, force=p.force))
        return GitInspectResult(action=p.action, tag=made.tag, effect=made.effect)
    gone = await run(lambda: git.tag_delete(name))
    return GitInspectResult(action=p.action, tag=gone.tag, effect=gone.effect)


def _inspect_kind(p: GitInspectParams) -> ToolKind:
    return "mutation" if p.action in ("tag_create", "tag_delete") else "read"


def _render_log(result: GitLogResult) -> str:
    return render_log(result.commits, result.pagination.next_cursor)


def _render_inspect(result: GitInspectResult) -> str:
    if result.show is not None and result.action == "show":
        return render_show(result.show)
    if result.blame is not None and result.action == "blame":
        return render_blame(result.blame)
    return render_git_write(result)


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            name="git_status", category=CATEGORY, params=GitStatusParams, result=GitStatusResult, handler=_status,
            render=render_status,
            summary="Branch, HEAD, staged/modified/untracked files, conflicts (with ancestor/ours/theirs oids) and "
                    "the operation in progress (state: none|merge|revert|cherrypick|rebase|bisect), like "
                    "`git status --porcelain=v2`. Non-UTF-8 names appear with \\xNN escapes.",
            when_to_use=("before committing or switching branches", "after a merge/rebase/stash pop to see "
                         "conflicts", "checking whether the tree is clean"),
            when_not_to_use=("seeing the content of changes (use git_diff)",),
            examples=(ToolExample("whole repository", {}), ToolExample("one directory", {"paths": ["src/"]})),
        ),
        ToolSpec(
            name="git_diff", category=CATEGORY, params=GitDiffParams, result=GitDiffResult, handler=_diff,
            render=render_diff,
            summary="Structured diff with renames and binary detection: unstaged (default), staged, a commit vs "
                    "the working tree (base), or two commits (base+target). Bounded: max_files, "
                    "max_hunks_per_file, max_lines; anything cut is counted and 'truncation' says how to get it. "
                    "stats always cover the whole diff.",
            when_to_use=("reviewing changes before a commit", "comparing branches or commits",
                         "per-file insertions/deletions (include_hunks=false)"),
            when_not_to_use=("listing changed files only (git_status is cheaper)",),
            examples=(ToolExample("unstaged changes", {}), ToolExample("staged changes", {"staged": True}),
                      ToolExample("two branches, stats only", {"base": "main", "target": "feature",
                                                               "include_hunks": False})),
        ),
        ToolSpec(
            name="git_log", category=CATEGORY, params=GitLogParams, result=GitLogResult, handler=_log,
            render=_render_log,
            summary="Commit history, newest first (like `git log`), optionally filtered by paths and ISO dates. "
                    "Paginated: pass pagination.next_cursor back as cursor; pages are pinned to the first "
                    "page's start commit.",
            when_to_use=("finding recent commits", "commits touching a path", "paging through history"),
            when_not_to_use=("who changed specific lines (git_inspect blame or git_history line_range)",),
            examples=(ToolExample("last 20 commits", {"limit": 20}),
                      ToolExample("commits touching a file", {"paths": ["src/app.py"]})),
        ),
        ToolSpec(
            render=render_history,
            name="git_history", category=CATEGORY, params=GitHistoryParams, result=GitHistoryResult,
            handler=_history,
            summary="History of one file following renames (`git log --follow`), or of a line range "
                    "(`git log -L`): each commit that touched it with the file's name and the range at that "
                    "commit. Paginated with cursor.",
            when_to_use=("why/when a file or a few lines changed", "tracing a function's evolution"),
            when_not_to_use=("repository-wide history (git_log)",),
            examples=(ToolExample("file history", {"path": "src/app.py"}),
                      ToolExample("lines 10-20", {"path": "src/app.py", "line_range": [10, 20]})),
        ),
        ToolSpec(
            name="git_inspect", category=CATEGORY, params=GitInspectParams, result=GitInspectResult,
            render=_render_inspect,
            handler=_inspect, kind_for=_inspect_kind, read_only=False, idempotent=False,
            detail_for=lambda p: f"action={p.action}",
            summary="Inspect objects: show (a commit with its bounded diff, a tag, or ref+path for a file at a "
                    "commit), blame (who last changed each committed line; paginated by line windows), tags "
                    "(list), tag_create/tag_delete, recovery_points (saved states to restore with git_reset).",
            when_to_use=("looking at one commit", "line authorship", "listing or creating tags",
                         "finding a recovery point to restore"),
            when_not_to_use=("working-tree changes (git_diff)",),
            examples=(ToolExample("show HEAD", {}), ToolExample("blame a file", {"action": "blame", "path": "a.py"}),
                      ToolExample("annotated tag", {"action": "tag_create", "name": "v1.0", "message": "release"})),
        ),
    ]
