"""Repository layout tools: ``git_submodule`` and ``git_worktree``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from codeplane.core.calls import MutationReport
from codeplane.git.submodules import SubmoduleInfo
from codeplane.git.worktrees import WorktreeInfo
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolKind, ToolParams, ToolSpec
from codeplane.server.tools.git_common import CATEGORY, CONFIRM_FIELD, ActionResult, config_change, run
from codeplane.server.tools.git_write_render import render_git_write


class GitSubmoduleParams(ToolParams):
    every_action = frozenset({"paths", "confirm"})
    action: Literal["status", "init", "update", "sync", "add", "remove"] = "status"
    paths: list[str] | None = Field(default=None, description="Submodule paths (add/remove: exactly one).")
    url: str | None = Field(default=None, description="add: repository URL.")
    branch: str | None = Field(default=None, description="add: branch to track.")
    recursive: bool = Field(default=False, description="update/sync: nested submodules too.")
    confirm: bool = CONFIRM_FIELD


class GitSubmoduleResult(ActionResult):
    submodules: list[SubmoduleInfo] = []


class GitWorktreeParams(ToolParams):
    every_action = frozenset({"confirm"})
    action: Literal["list", "add", "remove", "lock", "unlock", "prune"] = "list"
    name: str | None = Field(default=None, description="add/remove/lock/unlock: worktree name (add: also the new "
                                                       "branch's name).")
    path: str | None = Field(default=None, description="add: location inside the repository (default "
                                                       ".codeplane/worktrees/<name>).")
    ref: str | None = Field(default=None, description="add: existing branch to check out, or start commit of "
                                                      "the new branch <name>.")
    force: bool = Field(default=False, description="remove: even with uncommitted changes (needs confirm).")
    reason: str | None = Field(default=None, description="lock: why.")
    confirm: bool = CONFIRM_FIELD


class GitWorktreeResult(ActionResult):
    worktrees: list[WorktreeInfo] = []
    worktree: WorktreeInfo | None = None

    def mutation_report(self) -> MutationReport | None:
        where = (self.worktree.name or self.worktree.path) if self.worktree is not None else ""
        return config_change(super().mutation_report(), f"worktree.{where}", self.action)


async def _submodule(ctx: ToolContext, p: GitSubmoduleParams) -> GitSubmoduleResult:
    git = ctx.services.git
    if p.action == "status":
        return GitSubmoduleResult(action="status", submodules=await run(lambda: git.submodules(p.paths or ())))
    result = await run(lambda: git.submodule_change(p.action, paths=p.paths or (), url=p.url, branch=p.branch,
                                                    recursive=p.recursive, confirm=p.confirm))
    return GitSubmoduleResult(action=p.action, submodules=result.submodules, effect=result.effect)


async def _worktree(ctx: ToolContext, p: GitWorktreeParams) -> GitWorktreeResult:
    git = ctx.services.git
    if p.action == "list":
        return GitWorktreeResult(action="list", worktrees=await run(git.worktrees))
    result = await run(lambda: git.worktree_change(p.action, name=p.name, path=p.path, ref=p.ref, force=p.force,
                                                   reason=p.reason, confirm=p.confirm))
    return GitWorktreeResult(action=p.action, worktree=result.worktree, effect=result.effect)


def _submodule_kind(p: GitSubmoduleParams) -> ToolKind:
    return "read" if p.action == "status" else "mutation"


def _worktree_kind(p: GitWorktreeParams) -> ToolKind:
    return "read" if p.action == "list" else "mutation"


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            render=render_git_write,
            name="git_submodule", category=CATEGORY, params=GitSubmoduleParams, result=GitSubmoduleResult,
            handler=_submodule, kind="mutation", kind_for=_submodule_kind, read_only=False, destructive=True,
            idempotent=False, detail_for=lambda p: f"action={p.action}",
            summary="Submodules: status (recorded vs checked-out commit, state clean|modified|dirty|"
                    "uninitialized|added|deleted), init, update (init + checkout the recorded commit), sync, add, "
                    "remove (deinit + remove; needs confirm). update/sync/add/remove run the git CLI.",
            when_to_use=("after cloning or pulling a repository with submodules", "adding a dependency repo"),
            when_not_to_use=("changing files inside a submodule (that is its own repository)",),
            examples=(ToolExample("status", {}), ToolExample("init and update", {"action": "update"}),
                      ToolExample("add", {"action": "add", "url": "https://example.com/lib.git",
                                          "paths": ["vendor/lib"]})),
        ),
        ToolSpec(
            render=render_git_write,
            name="git_worktree", category=CATEGORY, params=GitWorktreeParams, result=GitWorktreeResult,
            handler=_worktree, kind="mutation", kind_for=_worktree_kind, read_only=False, destructive=True,
            idempotent=False, detail_for=lambda p: f"action={p.action}",
            summary="Linked worktrees: list (main first), add (new branch <name> or an existing branch, under "
                    ".codeplane/worktrees/ by default), remove (force needs confirm), lock, unlock, prune.",
            when_to_use=("working on two branches at once without stashing",),
            when_not_to_use=("switching the main work tree (git_checkout)",),
            examples=(ToolExample("list", {}), ToolExample("add", {"action": "add", "name": "hotfix"})),
        ),
    ]
