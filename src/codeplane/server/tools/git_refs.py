"""Branch and history tools: ``git_checkout``, ``git_branch``, ``git_merge``, ``git_reset``, ``git_rebase``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.branches import BranchInfo
from codeplane.git.merge import MergeResult
from codeplane.git.rebase import RebaseResult
from codeplane.git.rebase_state import RebasePlan
from codeplane.git.results import CheckoutResult, ResetResult
from codeplane.server.answers import compact_json
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolKind, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.cursor_arg import Cursor
from codeplane.server.tools.git_common import CATEGORY, CONFIRM_FIELD, RECOVERY_NOTE, ActionResult, as_result, run
from codeplane.server.tools.git_write_render import render_git_write, render_reset
from codeplane.server.tools.paging import PageCursors, PagedText, first_of_list, next_of_list


class GitCheckoutParams(ToolParams):
    ref: str | None = Field(default=None, description="Branch, tag or commit to switch to (a commit detaches); "
                                                      "with paths, the commit to restore them from.")
    create: bool = Field(default=False, description="Create branch 'ref' (at start_point or HEAD) and switch.")
    start_point: str | None = None
    paths: list[str] | None = Field(default=None, description="Restore these paths from the index (or from ref) "
                                                              "instead of switching.")
    force: bool = Field(default=False, description="Switch even if local changes would be overwritten.")
    confirm: bool = CONFIRM_FIELD


class GitCheckoutResult(ToolResult, CheckoutResult):
    pass


class GitBranchParams(ToolParams):
    every_action = frozenset({"confirm"})
    action: Literal["list", "create", "delete", "rename"] = "list"
    name: str | None = Field(default=None, description="create/delete/rename: the branch.")
    new_name: str | None = Field(default=None, description="rename: the new name.")
    ref: str | None = Field(default=None, description="create: start commit (default HEAD).")
    force: bool = Field(default=False, description="create/rename: replace an existing branch.")
    remotes: bool = Field(default=False, description="list: include remote-tracking branches.")
    confirm: bool = CONFIRM_FIELD
    cursor: Cursor = Field(default=None, description="list: next_cursor of the previous part.")


class GitBranchResult(PagedText, ActionResult):
    branches: list[BranchInfo] = []
    branch: BranchInfo | None = None
    unmerged: bool = False


#: Branch lists too long for one text, kept for their cursors.
_BRANCH_LISTS: PageCursors[GitBranchResult] = PageCursors()


class GitMergeParams(ToolParams):
    action: Literal["merge", "cherry_pick", "revert", "abort"] = Field(
        default="merge", description="abort: end the merge, cherry-pick or revert in progress (git merge --abort).")
    ref: str | None = Field(default=None, description="merge/cherry_pick/revert: the branch or commit.")
    target: str | None = Field(default=None, description="merge/cherry_pick/revert: alias of ref.")
    message: str | None = Field(default=None, description="merge: commit message (default \"Merge branch '<ref>'\").")
    no_ff: bool = Field(default=False, description="merge: always create a merge commit.")
    ff_only: bool = Field(default=False, description="merge: refuse unless it is a fast-forward.")
    allow_unrelated: bool = Field(default=False, description="merge: allow histories with no common commit.")
    strategy: Literal["normal", "ours", "theirs", "union"] = Field(
        default="normal", description="merge: how conflicting hunks resolve (git -X ours/theirs; union keeps both).")


class GitMergeResult(ToolResult, MergeResult):
    pass


class GitResetParams(ToolParams):
    ref: str | None = Field(default=None, description="Commit to reset to (default HEAD).")
    mode: Literal["soft", "mixed", "hard"] = "mixed"
    recovery_point: str | None = Field(default=None, description="Restore this recovery point instead (exact "
                                                                 "HEAD, index and working tree); needs confirm.")
    confirm: bool = CONFIRM_FIELD


class GitResetResult(ToolResult, ResetResult):
    pass


class GitRebaseParams(ToolParams):
    every_action = frozenset({"confirm"})
    action: Literal["plan", "execute", "start", "continue", "skip", "abort"]
    upstream: str | None = Field(default=None, description="plan/start: rebase the commits not in upstream.")
    onto: str | None = Field(default=None, description="plan/start: new base (default upstream).")
    plan: RebasePlan | None = Field(default=None, description="execute: a plan from action=plan, steps reordered "
                                                              "or re-actioned (pick/reword/edit/squash/fixup/drop).")
    confirm: bool = CONFIRM_FIELD


class GitRebaseResult(ActionResult):
    plan: RebasePlan | None = None
    result: RebaseResult | None = None


async def _checkout(ctx: ToolContext, p: GitCheckoutParams) -> GitCheckoutResult:
    result = await run(lambda: ctx.services.git.checkout(p.ref, create=p.create, start_point=p.start_point,
                                                         paths=p.paths or (), force=p.force, confirm=p.confirm))
    return as_result(GitCheckoutResult, result)


def _need(value: str | None, field: str, action: str) -> str:
    if not value:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"action={action!r} needs {field}", details={"field": field})
    return value


async def _branch(ctx: ToolContext, p: GitBranchParams) -> GitBranchResult:
    git = ctx.services.git
    if p.action == "list":
        key = compact_json(["git_branch", p.remotes])
        if p.cursor is not None:
            return next_of_list(_BRANCH_LISTS, p.cursor, key)
        branches = await run(lambda: git.branches(remotes_too=p.remotes))
        return first_of_list(GitBranchResult(action="list", branches=branches), "branches", _BRANCH_LISTS, key,
                             render_git_write)
    name = _need(p.name, "name", p.action)
    if p.action == "create":
        result = await run(lambda: git.branch_create(name, p.ref, force=p.force))
    elif p.action == "rename":
        new_name = _need(p.new_name, "new_name", p.action)
        result = await run(lambda: git.branch_rename(name, new_name, force=p.force))
    else:
        result = await run(lambda: git.branch_delete(name, confirm=p.confirm))
    return GitBranchResult(action=p.action, branch=result.branch, unmerged=result.unmerged, effect=result.effect)


async def _merge(ctx: ToolContext, p: GitMergeParams) -> GitMergeResult:
    git = ctx.services.git
    if p.action == "abort":
        return as_result(GitMergeResult, await run(git.merge_abort))
    ref = _need(p.ref or p.target, "ref", p.action)
    if p.action == "cherry_pick":
        result = await run(lambda: git.cherry_pick(ref))
    elif p.action == "revert":
        result = await run(lambda: git.revert(ref))
    else:
        result = await run(lambda: git.merge(ref, message=p.message, no_ff=p.no_ff, ff_only=p.ff_only,
                                             favor=p.strategy, allow_unrelated=p.allow_unrelated))
    return as_result(GitMergeResult, result)


async def _reset(ctx: ToolContext, p: GitResetParams) -> GitResetResult:
    git = ctx.services.git
    if p.recovery_point:
        point = p.recovery_point
        return as_result(GitResetResult, await run(lambda: git.restore(point, confirm=p.confirm)))
    return as_result(GitResetResult, await run(lambda: git.reset(p.ref, p.mode, confirm=p.confirm)))


async def _rebase(ctx: ToolContext, p: GitRebaseParams) -> GitRebaseResult:
    git = ctx.services.git
    if p.action == "plan":
        upstream = _need(p.upstream, "upstream", p.action)
        return GitRebaseResult(action="plan", plan=await run(lambda: git.rebase_plan(upstream, p.onto)))
    if p.action == "execute":
        if p.plan is None:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "action='execute' needs plan", details={"field": "plan"})
        plan = p.plan
        result = await run(lambda: git.rebase_execute(plan, confirm=p.confirm))
    elif p.action == "start":
        upstream = _need(p.upstream, "upstream", p.action)
        result = await run(lambda: git.rebase_start(upstream, p.onto, confirm=p.confirm))
    elif p.action == "continue":
        result = await run(git.rebase_continue)
    elif p.action == "skip":
        result = await run(lambda: git.rebase_skip(confirm=p.confirm))
    else:
        result = await run(lambda: git.rebase_abort(confirm=p.confirm))
    return GitRebaseResult(action=p.action, result=result, effect=result.effect)


def _branch_kind(p: GitBranchParams) -> ToolKind:
    return "read" if p.action == "list" else "mutation"


def _rebase_kind(p: GitRebaseParams) -> ToolKind:
    return "read" if p.action == "plan" else "mutation"


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            render=render_git_write,
            name="git_checkout", category=CATEGORY, params=GitCheckoutParams, result=GitCheckoutResult,
            handler=_checkout, kind="mutation", read_only=False, destructive=True, idempotent=False,
            summary="Switch to a branch/tag/commit (create=true makes a new branch; a name that exists only as "
                    "<remote>/<name> becomes a tracking branch), or restore paths from the index or a commit. "
                    "Local changes that would be overwritten stop the switch with 8004 unless force. "
                    + RECOVERY_NOTE,
            when_to_use=("changing branches", "starting a feature branch", "discarding changes to some files"),
            when_not_to_use=("moving the current branch to another commit (git_reset)",),
            examples=(ToolExample("switch", {"ref": "main"}),
                      ToolExample("new branch", {"ref": "feature/x", "create": True}),
                      ToolExample("discard edits to a file", {"paths": ["a.py"], "confirm": True})),
        ),
        ToolSpec(
            render=render_git_write,
            name="git_branch", category=CATEGORY, params=GitBranchParams, result=GitBranchResult, handler=_branch,
            kind="mutation", kind_for=_branch_kind, read_only=False, destructive=True, idempotent=False,
            detail_for=lambda p: f"action={p.action}",
            summary="List (with upstream ahead/behind), create, rename or delete branches. Deleting a branch "
                    "whose commits are not in HEAD or its upstream needs confirm. " + RECOVERY_NOTE,
            when_to_use=("listing branches", "creating a branch without switching", "cleaning up branches"),
            when_not_to_use=("creating and switching at once (git_checkout create=true)",),
            examples=(ToolExample("list", {}), ToolExample("create", {"action": "create", "name": "fix"}),
                      ToolExample("delete", {"action": "delete", "name": "old", "confirm": True})),
        ),
        ToolSpec(
            render=render_git_write,
            name="git_merge", category=CATEGORY, params=GitMergeParams, result=GitMergeResult, handler=_merge,
            kind="mutation", read_only=False, idempotent=False,
            summary="Merge a branch (fast-forward when possible), or cherry-pick / revert one commit. Never "
                    "overwrites local changes (8004 first). Conflicts are data: success=false, each path with "
                    "ancestor/ours/theirs oids, state=merge|cherrypick|revert; resolve, git_stage, then "
                    "git_commit, or abandon with action=abort (local changes elsewhere stay). The repository's "
                    "hooks run as in git "
                    "(output in hooks); one that fails before the commit leaves the operation staged the same way, "
                    "with no conflicts.",
            when_to_use=("integrating a branch", "copying one commit", "undoing a commit with a new commit"),
            when_not_to_use=("rewriting history linearly (git_rebase)",),
            examples=(ToolExample("merge", {"ref": "feature"}),
                      ToolExample("cherry-pick", {"action": "cherry_pick", "ref": "abc1234"})),
        ),
        ToolSpec(
            render=render_reset,
            name="git_reset", category=CATEGORY, params=GitResetParams, result=GitResetResult, handler=_reset,
            kind="mutation", read_only=False, destructive=True, idempotent=False,
            summary="Move HEAD/the branch to a commit: soft (keep index and files), mixed (reset index), hard "
                    "(also files; ends a merge in progress). With recovery_point: restore that saved state "
                    "exactly (HEAD, branch, index, working tree; re-creates a deleted branch or dropped stash). "
                    + RECOVERY_NOTE,
            when_to_use=("undoing commits", "abandoning a conflicted merge (mode=hard)",
                         "undoing a destructive git operation (recovery_point)"),
            when_not_to_use=("discarding changes to a few files (git_checkout paths)",),
            examples=(ToolExample("undo last commit, keep changes", {"ref": "HEAD~1", "mode": "soft"}),
                      ToolExample("restore a recovery point",
                                  {"recovery_point": "refs/codeplane/recovery/20250101T120000000Z-reset-hard",
                                   "confirm": True})),
        ),
        ToolSpec(
            render=render_git_write,
            name="git_rebase", category=CATEGORY, params=GitRebaseParams, result=GitRebaseResult, handler=_rebase,
            kind="mutation", kind_for=_rebase_kind, read_only=False, destructive=True, idempotent=False,
            detail_for=lambda p: f"action={p.action}",
            summary="Interactive rebase: plan (commits of HEAD not in upstream, oldest first), execute an edited "
                    "plan (pick/reword/edit/squash/fixup/drop, any order), start (plan+execute all picks), then "
                    "continue/skip/abort. Conflicts pause with the conflicts as data; edit pauses after its "
                    "commit. The branch moves only when all steps are done. " + RECOVERY_NOTE,
            when_to_use=("squashing or rewording commits before pushing", "updating a branch onto main"),
            when_not_to_use=("integrating without rewriting (git_merge)",),
            examples=(ToolExample("plan", {"action": "plan", "upstream": "main"}),
                      ToolExample("rebase onto main", {"action": "start", "upstream": "main", "confirm": True}),
                      ToolExample("after resolving", {"action": "continue"})),
        ),
    ]
