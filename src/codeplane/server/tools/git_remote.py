"""Remote tools: ``git_push``, ``git_pull``, ``git_remote`` (list/add/remove/fetch)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from codeplane.core.calls import MutationReport
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.remotes import MAX_URL_CHARS, RemoteInfo
from codeplane.git.results import PullResult, PushResult
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolKind, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.git_common import (
    CATEGORY,
    CONFIRM_FIELD,
    RECOVERY_NOTE,
    ActionResult,
    as_result,
    config_change,
    run,
)
from codeplane.server.tools.git_write_render import render_git_write

_CLI_NOTE = ("Runs the git CLI (your credential helpers and ssh agent; no prompts, bounded by "
             "git.remote_timeout_sec).")


class GitPushParams(ToolParams):
    remote: str | None = Field(default=None, description="Default: the branch's remote, else origin.")
    branch: str | None = Field(default=None, description="Local branch (default: the current one).")
    remote_branch: str | None = Field(default=None, description="Default: the upstream's name, else the same name.")
    force: bool = Field(default=False, description="Overwrite the remote branch (--force-with-lease on the last "
                                                   "fetched tip); needs confirm.")
    set_upstream: bool = False
    tags: list[str] | None = Field(default=None, max_length=100, description="Push these tags (alone unless a "
                                                                           "branch is named).")
    delete: bool = Field(default=False, description="Delete remote_branch and/or tags on the remote (the branch "
                                                    "only at its last fetched tip); needs confirm.")
    confirm: bool = CONFIRM_FIELD


class GitPushResult(ToolResult, PushResult):
    pass


class GitPullParams(ToolParams):
    remote: str | None = None
    branch: str | None = Field(default=None, description="Remote branch (default: the upstream of the current one).")
    rebase: bool = Field(default=False, description="Rebase local commits onto it instead of merging.")


class GitPullResult(ToolResult, PullResult):
    pass


class GitRemoteParams(ToolParams):
    action: Literal["list", "add", "remove", "fetch"] = "list"
    # No length bound here: remove must reach a long-named remote another program made (add bounds its names).
    name: str | None = Field(default=None, description="add/remove: remote name; fetch: remote (default origin).")
    url: str | None = Field(default=None, max_length=MAX_URL_CHARS,
                            description="add: URL (file://, https://, ssh, or a path).")
    branch: str | None = Field(default=None, description="fetch: only this branch.")
    prune: bool = Field(default=False, description="fetch: delete remote-tracking branches gone on the remote.")


class GitRemoteResult(ActionResult):
    remotes: list[RemoteInfo] = []
    remote: RemoteInfo | None = None

    def mutation_report(self) -> MutationReport | None:
        name, url = (self.remote.name, self.remote.url or "") if self.remote is not None else ("", "")
        return config_change(super().mutation_report(), f"remote.{name}", f"{self.action} {url}".strip())


async def _push(ctx: ToolContext, p: GitPushParams) -> GitPushResult:
    result = await run(lambda: ctx.services.git.push(p.remote, p.branch, remote_branch=p.remote_branch, force=p.force,
                                                     set_upstream=p.set_upstream, confirm=p.confirm,
                                                     tags=p.tags or (), delete=p.delete))
    return as_result(GitPushResult, result)


async def _pull(ctx: ToolContext, p: GitPullParams) -> GitPullResult:
    return as_result(GitPullResult, await run(lambda: ctx.services.git.pull(p.remote, p.branch, rebase=p.rebase)))


async def _remote(ctx: ToolContext, p: GitRemoteParams) -> GitRemoteResult:
    git = ctx.services.git
    if p.action == "list":
        return GitRemoteResult(action="list", remotes=await run(git.remotes))
    if p.action == "fetch":
        fetched = await run(lambda: git.fetch(p.name, p.branch, prune=p.prune))
        return GitRemoteResult(action="fetch", remote=fetched.remote, effect=fetched.effect)
    if not p.name:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"action={p.action!r} needs name", details={"field": "name"})
    name = p.name
    if p.action == "add":
        if not p.url:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "action='add' needs url", details={"field": "url"})
        url = p.url
        result = await run(lambda: git.remote_add(name, url))
    else:
        result = await run(lambda: git.remote_remove(name))
    return GitRemoteResult(action=p.action, remote=result.remote, effect=result.effect)


def _remote_kind(p: GitRemoteParams) -> ToolKind:
    return "read" if p.action == "list" else "mutation"


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            render=render_git_write,
            name="git_push", category=CATEGORY, params=GitPushParams, result=GitPushResult, handler=_push,
            kind="mutation", read_only=False, destructive=True, idempotent=False,
            summary="Push a branch and/or tags (one atomic push), or delete them remotely; each ref's outcome is "
                    "returned. A non-fast-forward rejection is 8006 with "
                    "reason (pull first). force uses --force-with-lease. " + _CLI_NOTE + " " + RECOVERY_NOTE,
            when_to_use=("publishing commits",),
            when_not_to_use=("the remote branch has commits you do not have (git_pull first)",),
            examples=(ToolExample("push current branch", {}),
                      ToolExample("first push of a branch", {"set_upstream": True})),
        ),
        ToolSpec(
            render=render_git_write,
            name="git_pull", category=CATEGORY, params=GitPullParams, result=GitPullResult, handler=_pull,
            kind="mutation", read_only=False, idempotent=False,
            summary="Fetch the upstream branch and merge it (fast-forward when possible) or rebase local commits "
                    "onto it (a recovery point is saved first). Conflicts are data, as in git_merge/git_rebase. "
                    + _CLI_NOTE,
            when_to_use=("updating the current branch from its remote",),
            when_not_to_use=("only looking at what is new (git_remote fetch, then git_log)",),
            examples=(ToolExample("pull", {}), ToolExample("pull with rebase", {"rebase": True})),
        ),
        ToolSpec(
            render=render_git_write,
            name="git_remote", category=CATEGORY, params=GitRemoteParams, result=GitRemoteResult, handler=_remote,
            kind="mutation", kind_for=_remote_kind, read_only=False, destructive=True, idempotent=False,
            detail_for=lambda p: f"action={p.action}",
            summary="List remotes (passwords in URLs redacted), add or remove one, or fetch (updates "
                    "remote-tracking branches; the effect lists moved refs). " + _CLI_NOTE,
            when_to_use=("configuring where to push", "checking what the remote has (fetch)"),
            when_not_to_use=("integrating remote changes (git_pull)",),
            examples=(ToolExample("list", {}),
                      ToolExample("add", {"action": "add", "name": "origin", "url": "https://example.com/r.git"}),
                      ToolExample("fetch", {"action": "fetch"})),
        ),
    ]
