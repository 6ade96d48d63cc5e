"""Index and commit tools: ``git_stage``, ``git_commit``, ``git_stage_and_commit``, ``git_stash``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.commits import Author, CommitResult
from codeplane.git.results import StageResult, StashResult
from codeplane.git.stash import StashEntry
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolKind, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.cursor_arg import Cursor
from codeplane.server.tools.git_common import CATEGORY, CONFIRM_FIELD, RECOVERY_NOTE, ActionResult, as_result, run
from codeplane.server.tools.git_write_render import PATHS_SHOWN, render_commit, render_git_write
from codeplane.server.tools.paging import PageCursors, PagedText, first_of_list, next_of_list


class AuthorParam(BaseModel):
    # defer_build: built by the warm-up after /ready (server/app.py), or on first use
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str = Field(min_length=1)
    email: str = Field(min_length=1)


class GitStageParams(ToolParams):
    every_action = frozenset({"paths", "all"})
    paths: list[str] | None = Field(default=None, description="Files or directories (new, modified, deleted).")
    all: bool = Field(default=False, description="Every change in the repository (git add -A).")
    action: Literal["stage", "unstage"] = Field(default="stage", description="unstage: back to HEAD's version in "
                                                                              "the index; files are untouched.")


class GitStageResult(ToolResult, StageResult):
    pass


class GitCommitParams(ToolParams):
    message: str = Field(description="Commit message (trailing whitespace and blank lines are cleaned like git). "
                                     "With amend, empty keeps the old message.")
    paths: list[str] | None = Field(default=None, description="Commit only these tracked paths as they are on "
                                                              "disk (git commit -- paths); default: everything staged.")
    author: AuthorParam | None = None
    allow_empty: bool = False
    amend: bool = Field(default=False, description="Replace HEAD's commit (same parents).")
    pre_commit: bool = Field(default=True, description="Run the repository's pre-commit and commit-msg hooks "
                                                       "(false: git's --no-verify); a failing hook aborts with "
                                                       "8007 and leaves the index as it was.")


class GitCommitResult(ToolResult, CommitResult):
    pass


class GitStageAndCommitParams(ToolParams):
    paths: list[str] | None = Field(default=None, description="Stage these (files or directories), then commit "
                                                              "everything staged.")
    all: bool = Field(default=False, description="Stage every change first (git commit -a plus new files).")
    message: str
    author: AuthorParam | None = None
    allow_empty: bool = False
    pre_commit: bool = True


MAX_STASH_INDEX = 100_000


class GitStashParams(ToolParams):
    every_action = frozenset({"confirm"})
    action: Literal["list", "push", "apply", "pop", "drop"] = "list"
    message: str | None = Field(default=None, description="push: the stash message.")
    include_untracked: bool = Field(default=False, description="push: stash untracked files too.")
    keep_index: bool = Field(default=False, description="push: leave staged changes in place.")
    paths: list[str] | None = Field(default=None, description="push: stash only these paths.")
    # Bounded like every count field (no stash reflog comes near it); a missing entry below it is 8002.
    index: int = Field(default=0, ge=0, le=MAX_STASH_INDEX, description="apply/pop/drop: which entry "
                       "(stash@{index}).")
    reinstate_index: bool = Field(default=False, description="apply/pop: restore the staged state too.")
    confirm: bool = CONFIRM_FIELD
    cursor: Cursor = Field(default=None, description="list: next_cursor of the previous part.")


class GitStashResult(PagedText, ActionResult):
    #: action=list: the entries (in parts with a cursor).
    stashes: list[StashEntry] = []
    #: push/apply/pop/drop: what the action did.
    result: StashResult | None = None
    #: pop that stopped on conflicts: the entry was kept, as git keeps it (git says so; the answer did not).
    note: str | None = None


#: Stash lists too long for one text, kept for their cursors.
_STASH_LISTS: PageCursors[GitStashResult] = PageCursors()


def _author(a: AuthorParam | None) -> Author | None:
    return Author(a.name, a.email) if a is not None else None


async def _stage(ctx: ToolContext, p: GitStageParams) -> GitStageResult:
    if not p.paths and not p.all:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "give paths, or all: true for every change",
                             details={"field": "paths"})
    paths = [] if p.all else (p.paths or [])
    git = ctx.services.git
    result = await run(lambda: git.unstage(paths) if p.action == "unstage" else git.stage(paths))
    return as_result(GitStageResult, result)


async def _commit(ctx: ToolContext, p: GitCommitParams) -> GitCommitResult:
    result = await run(lambda: ctx.services.git.commit(p.message, only=p.paths or (), author=_author(p.author),
                                                       allow_empty=p.allow_empty, amend=p.amend,
                                                       run_hooks=p.pre_commit, stat_files=PATHS_SHOWN))
    return as_result(GitCommitResult, result)


async def _stage_and_commit(ctx: ToolContext, p: GitStageAndCommitParams) -> GitCommitResult:
    if not p.paths and not p.all:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "give paths, or all: true to stage every change",
                             details={"field": "paths"})
    result = await run(lambda: ctx.services.git.commit(p.message, stage=p.paths or (), stage_all=p.all,
                                                       author=_author(p.author), allow_empty=p.allow_empty,
                                                       run_hooks=p.pre_commit, stat_files=PATHS_SHOWN))
    return as_result(GitCommitResult, result)


async def _stash(ctx: ToolContext, p: GitStashParams) -> GitStashResult:
    git = ctx.services.git
    if p.action == "list":
        if p.cursor is not None:
            return next_of_list(_STASH_LISTS, p.cursor, "git_stash")
        return first_of_list(GitStashResult(action="list", stashes=await run(git.stashes)), "stashes", _STASH_LISTS,
                             "git_stash", render_git_write)
    if p.action == "push":
        result = await run(lambda: git.stash_push(message=p.message, include_untracked=p.include_untracked,
                                                  keep_index=p.keep_index, paths=p.paths or ()))
    elif p.action == "drop":
        result = await run(lambda: git.stash_drop(p.index, confirm=p.confirm))
    else:
        result = await run(lambda: git.stash_apply(p.index, pop=p.action == "pop", reinstate_index=p.reinstate_index))
    # The entry pushed, applied or dropped is in ``result``; the whole list (unbounded, and the same entry again
    # after a push) is git_stash(action="list")'s.
    note = None
    if p.action == "pop" and result.conflicts and not result.dropped:
        note = (f"the stash entry stays (stash@{{{p.index}}}): resolve the conflicts, then drop it with "
                f"git_stash(action='drop', index={p.index}, confirm=true)")
    return GitStashResult(action=p.action, result=result, effect=result.effect, note=note)


def _stash_kind(p: GitStashParams) -> ToolKind:
    return "read" if p.action == "list" else "mutation"


_HOOK_NOTE = ("Hooks run as in git commit (pre-commit, prepare-commit-msg, commit-msg, post-commit; pre_commit: "
              "false is --no-verify), output in hooks; a failing hook before the commit aborts cleanly with 8007.")


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            render=render_git_write,
            name="git_stage", category=CATEGORY, params=GitStageParams, result=GitStageResult, handler=_stage,
            kind="mutation", read_only=False, idempotent=True,
            summary="Stage paths as they are on disk (new, modified and deleted files; directories recurse) or "
                    "unstage them (index back to HEAD, files untouched). Ignored files are skipped and listed.",
            when_to_use=("preparing a commit from some of the changes",),
            when_not_to_use=("staging and committing at once (git_stage_and_commit)",),
            examples=(ToolExample("stage two files", {"paths": ["a.py", "b.py"]}),
                      ToolExample("unstage a file", {"paths": ["a.py"], "action": "unstage"})),
        ),
        ToolSpec(
            render=render_commit,
            name="git_commit", category=CATEGORY, params=GitCommitParams, result=GitCommitResult, handler=_commit,
            kind="mutation", read_only=False, idempotent=False,
            summary="Commit what is staged (or only the given paths, as on disk). Concludes a merge, "
                    "cherry-pick or revert in progress once conflicts are staged. " + _HOOK_NOTE,
            when_to_use=("recording staged work", "finishing a merge after resolving conflicts",
                         "amending the last commit"),
            when_not_to_use=("nothing is staged yet (git_stage_and_commit)",),
            examples=(ToolExample("commit staged", {"message": "Fix parser"}),
                      ToolExample("commit two files only", {"message": "Docs", "paths": ["README.md", "docs/"]})),
        ),
        ToolSpec(
            render=render_commit,
            name="git_stage_and_commit", category=CATEGORY, params=GitStageAndCommitParams, result=GitCommitResult,
            handler=_stage_and_commit, kind="mutation", read_only=False, idempotent=False,
            summary="Stage the given paths (or all changes) and commit everything staged, in one step. If the "
                    "hook fails or there is nothing to commit, the index is left as before. " + _HOOK_NOTE,
            when_to_use=("the usual edit → commit loop", "concluding a merge: stage the fixed conflicted files"),
            when_not_to_use=("committing only part of what is staged (git_commit with paths)",),
            examples=(ToolExample("commit edited files", {"paths": ["src/app.py"], "message": "Handle None"}),
                      ToolExample("commit everything", {"all": True, "message": "WIP"})),
        ),
        ToolSpec(
            render=render_git_write,
            name="git_stash", category=CATEGORY, params=GitStashParams, result=GitStashResult, handler=_stash,
            kind="mutation", kind_for=_stash_kind, read_only=False, destructive=True, idempotent=False,
            detail_for=lambda p: f"action={p.action}",
            summary="Stash list/push/apply/pop/drop. apply and pop stop with 8004 if they would overwrite local "
                    "changes; conflicts come back as data (pop then keeps the entry). " + RECOVERY_NOTE,
            when_to_use=("setting work aside to switch branches", "bringing stashed work back"),
            when_not_to_use=("keeping work for long (commit it on a branch)",),
            examples=(ToolExample("stash including untracked", {"action": "push", "include_untracked": True}),
                      ToolExample("pop the latest", {"action": "pop"}),
                      ToolExample("drop an entry", {"action": "drop", "index": 1, "confirm": True})),
        ),
    ]
