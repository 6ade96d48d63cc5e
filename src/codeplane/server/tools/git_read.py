"""Read-side git tools: ``git_status``, ``git_diff``, ``git_log``, ``git_history``, ``git_inspect``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.blame import BlamePage
from codeplane.git.diffs import DiffLimits, DiffReport
from codeplane.git.history import HistoryPage
from codeplane.git.log import LogPage
from codeplane.git.recovery import RecoveryPoint
from codeplane.git.show import ShowResult
from codeplane.git.status import StatusReport, UntrackedMode
from codeplane.git.tags import TagInfo
from codeplane.server.answers import compact_json
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolKind, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.cursor_arg import Cursor
from codeplane.server.tools.git_common import CATEGORY, ActionResult, as_result, run
from codeplane.server.tools.git_pages import split_diff, split_show, split_status
from codeplane.server.tools.git_render import (
    MAX_FILES_ASKED,
    render_blame,
    render_diff,
    render_history,
    render_log,
    render_show,
    render_status,
)
from codeplane.server.tools.git_write_render import render_git_write
from codeplane.server.tools.paging import (
    CURSOR_STAND_IN,
    P,
    PageCursors,
    PagedText,
    first_of_list,
    first_parts,
    items_that_fit,
    next_of_list,
    page_line,
    split_rendered,
)

#: 1-based; the git service refuses a reversed range or one starting past the end (1003 naming line_range).
LineRange = tuple[Annotated[int, Field(ge=1)], Annotated[int, Field(ge=1)]]

#: Parts of diffs and shown objects too long for one text, kept for their cursors.
_DIFF_PAGES: PageCursors[DiffReport] = PageCursors()
_SHOW_PAGES: PageCursors[ShowResult] = PageCursors()
_STATUS_PAGES: PageCursors[StatusReport] = PageCursors()
_INSPECT_LISTS: PageCursors[GitInspectResult] = PageCursors()


class GitStatusParams(ToolParams):
    paths: list[str] | None = Field(default=None, description="Only report these files/directories (git globs: "
                                                              "`*.py` matches in every directory).")
    limit: int = Field(default=1000, ge=1, le=10_000, description="Cap per list; *_total counts stay exact.")
    untracked: UntrackedMode = Field(default="normal", description="normal: a directory holding no tracked file "
                                     "is one `dir/` entry, as git's default; all: every untracked file (-uall).")
    cursor: Cursor = Field(default=None, description="next_cursor of the previous part (same arguments).")


class GitDiffParams(ToolParams):
    base: str | None = Field(default=None, description="Commit/ref to diff against (default: the index, or HEAD "
                                                       "with staged/target).")
    target: str | None = Field(default=None, description="Second commit/ref (default: the working tree).")
    staged: bool = Field(default=False, description="Diff the index (staged changes) instead of the working tree.")
    paths: list[str] | None = None
    include_hunks: bool = Field(default=True, description="false: per-file stats only (like --numstat).")
    context_lines: int = Field(default=3, ge=0, le=50)
    max_files: int = Field(default=200, ge=1, le=MAX_FILES_ASKED)
    max_hunks_per_file: int = Field(default=100, ge=1, le=1000)
    max_lines: int | None = Field(default=None, ge=1, le=100_000,
                                  description="Cap on hunk lines overall (default: config git.diff_max_lines).")
    cursor: Cursor = Field(default=None, description="next_cursor of the previous part (same arguments).")


class GitDiffResult(PagedText, DiffReport):
    pass


class GitStatusResult(PagedText, StatusReport):
    pass


class GitLogParams(ToolParams):
    ref: str | None = Field(default=None, description="Start commit/branch (default HEAD).")
    limit: int = Field(default=50, ge=1, le=200)
    since: str | None = Field(default=None, description="ISO date; commits at or after it (committer date).")
    until: str | None = Field(default=None, description="ISO date; commits at or before it.")
    paths: list[str] | None = Field(default=None, description="Only commits that change these paths.")
    cursor: Cursor = Field(default=None, description="pagination.next_cursor of the previous page.")


class GitLogResult(ToolResult, LogPage):
    pass


class GitHistoryParams(ToolParams):
    path: str
    line_range: LineRange | None = Field(default=None, description="[first, last] lines (1-based) to follow.")
    ref: str | None = None
    limit: int = Field(default=20, ge=1, le=100)
    cursor: Cursor = None


class GitHistoryResult(ToolResult, HistoryPage):
    pass


class GitInspectParams(ToolParams):
    action: Literal["show", "blame", "tags", "tag_create", "tag_delete", "recovery_points"] = "show"
    ref: str | None = Field(default=None, description="show/blame/tag_create: commit, tag or ref (default HEAD).")
    path: str | None = Field(default=None, description="show: object at ref:path; blame: the file.")
    line_range: LineRange | None = Field(default=None, description="blame: [first, last] lines.")
    limit: int | None = Field(default=None, ge=1, le=2000, description="blame: lines per page (default 200); "
                                                                        "tags: tags per part (default 500; the "
                                                                        "cursor goes on to the last); "
                                                                        "recovery_points: entries.")
    cursor: Cursor = Field(default=None, description="blame: pagination.next_cursor; show, tags, "
                                                         "recovery_points: next_cursor.")
    name: str | None = Field(default=None, description="tag_create/tag_delete: tag name.")
    message: str | None = Field(default=None, description="tag_create: makes an annotated tag.")
    force: bool = Field(default=False, description="tag_create: move an existing tag.")
    include_hunks: bool = Field(default=True, description="show: include the commit's diff hunks.")
    max_lines: int | None = Field(default=None, ge=1, le=100_000, description="show: diff line cap.")
    max_files: int = Field(default=200, ge=1, le=MAX_FILES_ASKED, description="show: files listed.")
    paths: list[str] | None = Field(default=None, description="show: the commit's diff under these paths only.")


class GitInspectResult(PagedText, ActionResult):
    show: ShowResult | None = None
    blame: BlamePage | None = None
    tags: list[TagInfo] = []
    tags_total: int | None = None
    tag: TagInfo | None = None
    recovery_points: list[RecoveryPoint] = []


async def _status(ctx: ToolContext, p: GitStatusParams) -> GitStatusResult:
    key = _query("git_status", p)
    if p.cursor is not None:
        return _paged(GitStatusResult, *_STATUS_PAGES.next(p.cursor, key))
    pages = split_status(await run(lambda: ctx.services.git.status(p.paths or (), p.limit, p.untracked)))
    first, next_cursor = _STATUS_PAGES.first(pages, key)
    return _paged(GitStatusResult, first, 1, len(pages), next_cursor)


def _limits(ctx: ToolContext, include_hunks: bool, max_lines: int | None, *, context: int = 3,
            max_files: int = 200, max_hunks: int = 100) -> DiffLimits:
    return DiffLimits(max_files=max_files, max_hunks_per_file=max_hunks, include_hunks=include_hunks,
                      max_lines=max_lines or ctx.services.config.git.diff_max_lines, context_lines=context)


def _query(tool: str, p: ToolParams) -> str:
    return compact_json([tool, p.model_dump(mode="json", exclude={"cursor"})])


def _paged(cls: type[P], record: BaseModel, part: int, parts: int, next_cursor: str | None) -> P:
    result = as_result(cls, record)
    if parts == 1:
        return result
    return result.model_copy(update={"part": part, "parts": parts, "next_cursor": next_cursor})


async def _diff(ctx: ToolContext, p: GitDiffParams) -> GitDiffResult:
    key = _query("git_diff", p)
    if p.cursor is not None:
        return _paged(GitDiffResult, *_DIFF_PAGES.next(p.cursor, key))
    limits = _limits(ctx, p.include_hunks, p.max_lines, context=p.context_lines, max_files=p.max_files,
                     max_hunks=p.max_hunks_per_file)
    report = await run(lambda: ctx.services.git.diff(base=p.base, target=p.target, staged=p.staged,
                                                     paths=p.paths or (), limits=limits))
    pages = split_diff(report)
    first, next_cursor = _DIFF_PAGES.first(pages, key)
    return _paged(GitDiffResult, first, 1, len(pages), next_cursor)


async def _log(ctx: ToolContext, p: GitLogParams) -> GitLogResult:
    def page(limit: int) -> LogPage:
        return ctx.services.git.log(ref=p.ref, limit=limit, since=p.since, until=p.until, paths=p.paths or (),
                                    cursor=p.cursor)

    found = await run(lambda: page(p.limit))
    fit = items_that_fit(len(found.commits), lambda k: render_log(found.commits[:k], CURSOR_STAND_IN))
    # Fewer commits, so that the text fits; the cursor resumes after the last one shown.
    return as_result(GitLogResult, found if fit == len(found.commits) else await run(lambda: page(fit)))


async def _history(ctx: ToolContext, p: GitHistoryParams) -> GitHistoryResult:
    def page(limit: int) -> HistoryPage:
        return ctx.services.git.history(p.path, ref=p.ref, line_range=p.line_range, limit=limit, cursor=p.cursor)

    found = await run(lambda: page(p.limit))
    pagination = found.pagination.model_copy(update={"next_cursor": CURSOR_STAND_IN})
    fit = items_that_fit(len(found.entries), lambda k: render_history(found.model_copy(
        update={"entries": found.entries[:k], "pagination": pagination})))
    return as_result(GitHistoryResult, found if fit == len(found.entries) else await run(lambda: page(fit)))


def _need(value: str | None, field: str, action: str) -> str:
    if not value:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"action={action!r} needs {field}", details={"field": field})
    return value


async def _inspect(ctx: ToolContext, p: GitInspectParams) -> GitInspectResult:
    git = ctx.services.git
    if p.action == "show":
        key = _query("git_inspect", p)
        if p.cursor is not None:
            show, part, parts, next_cursor = _SHOW_PAGES.next(p.cursor, key)
            return GitInspectResult(action=p.action, show=show, part=part, parts=parts, next_cursor=next_cursor)
        limits = _limits(ctx, p.include_hunks, p.max_lines, max_files=p.max_files)
        pages = split_show(await run(lambda: git.show(p.ref or "HEAD", p.path, limits, p.paths or ())))
        first, next_cursor = _SHOW_PAGES.first(pages, key)
        if len(pages) == 1:
            return GitInspectResult(action=p.action, show=first)
        return GitInspectResult(action=p.action, show=first, part=1, parts=len(pages), next_cursor=next_cursor)
    if p.action == "blame":
        return GitInspectResult(action=p.action, blame=await run(lambda: _blame(ctx, p)))
    if p.action in ("tags", "recovery_points"):
        key = _query("git_inspect", p)
        if p.cursor is not None:
            return next_of_list(_INSPECT_LISTS, p.cursor, key)
        if p.action == "tags":
            found, total = await run(git.tags)
            return _tag_parts(GitInspectResult(action=p.action, tags=found, tags_total=total), p.limit or 500, key)
        points = await run(lambda: git.recovery_points(p.limit or 50))
        return first_of_list(GitInspectResult(action=p.action, recovery_points=points), "recovery_points",
                             _INSPECT_LISTS, key, _render_inspect)
    name = _need(p.name, "name", p.action)
    if p.action == "tag_create":
        made = await run(lambda: git.tag_create(name, p.ref, message=p.message, force=p.force))
        return GitInspectResult(action=p.action, tag=made.tag, effect=made.effect)
    gone = await run(lambda: git.tag_delete(name))
    return GitInspectResult(action=p.action, tag=gone.tag, effect=gone.effect)


def _tag_parts(result: GitInspectResult, per_part: int, key: str) -> GitInspectResult:
    """Every tag, in parts of at most ``per_part`` whose text fits: ``limit`` used to cap the listing at 2000
    with no way to the rest (``tags_total`` said 3000); the cursor now goes on to the last tag."""
    return first_parts(split_rendered(result, "tags", _render_inspect, max_items=per_part), _INSPECT_LISTS, key)


def _blame(ctx: ToolContext, p: GitInspectParams) -> BlamePage:
    """A blame window, narrowed to the lines whose rendering fits a text (the cursor resumes after them)."""
    path = _need(p.path, "path", p.action)
    page = ctx.services.git.blame(path, ref=p.ref, line_range=p.line_range, limit=p.limit or 200, cursor=p.cursor)
    pagination = page.pagination.model_copy(update={"next_cursor": CURSOR_STAND_IN})
    fit = items_that_fit(len(page.hunks), lambda k: render_blame(page.model_copy(
        update={"hunks": page.hunks[:k], "pagination": pagination})))
    if fit == len(page.hunks):
        return page
    lines = page.hunks[fit].start_line - page.hunks[0].start_line
    return ctx.services.git.blame(path, ref=p.ref, line_range=p.line_range, limit=lines, cursor=p.cursor)


def _inspect_kind(p: GitInspectParams) -> ToolKind:
    return "mutation" if p.action in ("tag_create", "tag_delete") else "read"


def _render_log(result: GitLogResult) -> str:
    return render_log(result.commits, result.pagination.next_cursor)


def _with_part(text: str, result: PagedText) -> str:
    if result.part is None or result.parts is None:
        return text
    return f"{text}\n{page_line(result.part, result.parts, result.next_cursor)}"


def _render_status(result: GitStatusResult) -> str:
    return _with_part(render_status(result), result)


def _render_diff(result: GitDiffResult) -> str:
    return _with_part(render_diff(result), result)


def _render_inspect(result: GitInspectResult) -> str:
    if result.show is not None and result.action == "show":
        return _with_part(render_show(result.show), result)
    if result.blame is not None and result.action == "blame":
        return render_blame(result.blame)
    return render_git_write(result)


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            name="git_status", category=CATEGORY, params=GitStatusParams, result=GitStatusResult, handler=_status,
            render=_render_status,
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
            render=_render_diff,
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
