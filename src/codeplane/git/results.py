"""Results of the write operations that have no richer home module (each carries an ``effect``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import model_validator

from codeplane.core.calls import MutationReport
from codeplane.git.branches import BranchInfo
from codeplane.git.conflicts import RepoState
from codeplane.git.hooks import HookRun
from codeplane.git.merge import MergeResult
from codeplane.git.models import Conflict, WriteResult, cap_listed
from codeplane.git.rebase import RebaseResult
from codeplane.git.recovery import RecoveryPoint
from codeplane.git.remotes import PushedRef, RemoteInfo
from codeplane.git.staging import SkippedPath, StagedPath
from codeplane.git.stash import StashEntry
from codeplane.git.submodules import SubmoduleInfo
from codeplane.git.tags import TagInfo
from codeplane.git.worktrees import WorktreeInfo


class StageResult(WriteResult):
    action: str
    changed: list[StagedPath] = []
    skipped: list[SkippedPath] = []
    #: How many were staged (unstaged) or skipped in all, when more than the lists hold.
    changed_total: int = 0
    skipped_total: int = 0

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: Any) -> Any:
        return cap_listed(data, "changed", "skipped")

    def mutation_report(self) -> MutationReport:
        """The index changed, not the work tree or HEAD: the staged paths are what changed (else every
        ``git_stage`` would look like a call that did nothing, ``no_op``)."""
        report = self.effect.mutation_report()
        staged = {(c.path, "" if c.change == "deleted" else f"index:{c.change}") for c in self.changed}
        return replace(report, changed_paths=tuple(sorted(set(report.changed_paths) | staged)))


class CheckoutResult(WriteResult):
    branch: str | None
    #: HEAD afterwards (``None`` on a branch with no commit yet: ``create`` in an empty repository).
    head: str | None
    detached: bool
    created_branch: str | None = None
    restored_paths: list[str] = []
    #: How many paths were restored in all, when more than ``restored_paths`` holds.
    restored_paths_total: int = 0
    #: ``post-checkout``, when the repository has one (as ``git checkout`` runs it; it cannot fail the checkout).
    hooks: list[HookRun] = []
    #: What git warns about: commits left behind on the detached HEAD switched away from.
    warnings: list[str] = []

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: Any) -> Any:
        return cap_listed(data, "restored_paths")


class ResetResult(WriteResult):
    mode: str
    #: HEAD afterwards (``None`` when a restored point had no commit yet).
    head: str | None
    branch: str | None = None
    restored: RecoveryPoint | None = None
    recreated_refs: list[str] = []
    notes: list[str] = []
    #: What git warns about: submodule directories a hard reset left in place.
    warnings: list[str] = []


class BranchResult(WriteResult):
    action: str
    branch: BranchInfo | None = None
    #: True when a deleted branch had commits reachable from nowhere else (saved in the recovery point).
    unmerged: bool = False


class TagResult(WriteResult):
    action: str
    tag: TagInfo


class RemoteResult(WriteResult):
    action: str
    remote: RemoteInfo | None = None


class PushResult(WriteResult):
    remote: str
    refs: list[PushedRef]


class PullResult(WriteResult):
    remote: str
    upstream: str
    #: merge | rebase
    mode: str
    merge: MergeResult | None = None
    rebase: RebaseResult | None = None
    success: bool
    conflicts: list[Conflict] = []
    state: RepoState = "none"


class StashResult(WriteResult):
    action: str
    stash: StashEntry | None = None
    conflicts: list[Conflict] = []
    dropped: bool = False
    state: RepoState = "none"
    #: What git warns about: submodule directories a push left in place (their staged gitlink is stashed).
    warnings: list[str] = []


class SubmoduleResult(WriteResult):
    action: str
    submodules: list[SubmoduleInfo] = []


class WorktreeResult(WriteResult):
    action: str
    worktree: WorktreeInfo | None = None
