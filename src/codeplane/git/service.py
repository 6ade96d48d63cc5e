"""GitService: the one entry point the server uses for git (spec §10, §23.4 git family).

Reads open a fresh repository handle and never lock. Writes are serialised, measured (an ``effect``
with HEAD, ref and path changes for the call observer), refuse to discard work without ``confirm``,
save a recovery point before they do, and call ``after_tree_change`` (the index's reconcile) before
returning, so the next search sees the new tree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from pygit2.enums import DeltaStatus, FileStatus

from codeplane.core.config import GitConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.git import blame as blaming
from codeplane.git import (
    branch_state,
    branches,
    checkout,
    commits,
    diffs,
    gitlinks,
    history,
    layout,
    log,
    merge_abort,
    rebase,
    recovery,
    remotes,
    show,
    sparse,
    staging,
    status,
    submodules,
    sync,
    tags,
    worktrees,
)
from codeplane.git import merge as merging
from codeplane.git import reset as resetting
from codeplane.git import stash as stashing
from codeplane.git._session import RepoSession, require_confirm
from codeplane.git.conflicts import repo_state
from codeplane.git.hooks import run_hook
from codeplane.git.pathspecs import repo_path, repo_paths, shown, under
from codeplane.git.rebase_state import RebasePlan
from codeplane.git.results import (
    BranchResult,
    CheckoutResult,
    PullResult,
    PushResult,
    RemoteResult,
    ResetResult,
    StageResult,
    StashResult,
    SubmoduleResult,
    TagResult,
    WorktreeResult,
)
from codeplane.git.revisions import head_branch, head_commit, require_head

_TRACKED_CHANGE = ~int(FileStatus.WT_NEW) & ~int(FileStatus.IGNORED)
_UNSTAGED = FileStatus.WT_MODIFIED | FileStatus.WT_DELETED | FileStatus.WT_TYPECHANGE
_NULL_OID = "0" * 40

_log = get_logger(__name__)


def _noop() -> None:
    return None


class GitService:
    """Typed git operations over one work tree. Paths are caller paths (validated here, 5001)."""

    def __init__(self, root: Path, config: GitConfig | None = None,
                 after_tree_change: Callable[[], object] = _noop,
                 while_writing: Callable[[], AbstractContextManager[object]] = nullcontext) -> None:
        self.root = root
        self.config = config or GitConfig()
        self._s = RepoSession(root, after_tree_change, while_writing)

    # -- reads ---------------------------------------------------------------------------------------
    def status(self, paths: Sequence[str] = (), limit: int = 1000,
               untracked: status.UntrackedMode = "all") -> status.StatusReport:
        scope = repo_paths(self.root, paths)
        with self._s.reading() as repo:
            return status.status(repo, scope, limit, untracked)

    def warm_caches(self) -> None:
        """Run one status so the first agent call does not pay for parsing the index and reading every
        directory listing (about 0.4 s on Django's 3,000 directories; later calls re-read only what moved)."""
        try:
            self.status(limit=1)
        except Exception:  # noqa: BLE001 - best effort: the real call reports any error itself
            _log.debug("git status warm-up failed", exc_info=True)

    def diff(self, *, base: str | None = None, target: str | None = None, staged: bool = False,
             paths: Sequence[str] = (), limits: diffs.DiffLimits | None = None) -> diffs.DiffReport:
        scope = repo_paths(self.root, paths)
        with self._s.reading() as repo:
            return diffs.diff(repo, base=base, target=target, staged=staged, paths=scope,
                              limits=limits or diffs.DiffLimits(max_lines=self.config.diff_max_lines))

    def log(self, *, ref: str | None = None, limit: int = 50, since: str | None = None, until: str | None = None,
            paths: Sequence[str] = (), cursor: str | None = None) -> log.LogPage:
        scope = repo_paths(self.root, paths)
        with self._s.reading() as repo:
            return log.log(repo, ref=ref, limit=limit, since=since, until=until, paths=scope, cursor=cursor)

    def show(self, ref: str = "HEAD", path: str | None = None, limits: diffs.DiffLimits | None = None,
             paths: Sequence[str] = ()) -> show.ShowResult:
        """``paths``: a commit's diff restricted to these files or directories."""
        rel = repo_path(self.root, path, "path") if path else None
        scope = repo_paths(self.root, paths)
        with self._s.reading() as repo:
            return show.show(repo, ref, rel, limits or diffs.DiffLimits(max_lines=self.config.diff_max_lines),
                             paths=scope)

    def blame(self, path: str, *, ref: str | None = None, line_range: tuple[int, int] | None = None,
              limit: int = 200, cursor: str | None = None) -> blaming.BlamePage:
        rel = repo_path(self.root, path, "path")
        with self._s.reading() as repo:
            return blaming.blame(repo, rel, ref=ref, line_range=line_range, limit=limit, cursor=cursor)

    def history(self, path: str, *, ref: str | None = None, line_range: tuple[int, int] | None = None,
                limit: int = 20, cursor: str | None = None) -> history.HistoryPage:
        rel = repo_path(self.root, path, "path")
        with self._s.reading() as repo:
            return history.history(repo, rel, ref=ref, line_range=line_range, limit=limit, cursor=cursor)

    def tags(self, limit: int | None = None) -> tuple[list[tags.TagInfo], int]:
        with self._s.reading() as repo:
            return tags.list_tags(repo, limit)

    def branches(self, *, remotes_too: bool = False) -> list[branches.BranchInfo]:
        with self._s.reading() as repo:
            return branches.list_branches(repo, remotes=remotes_too)

    def remotes(self) -> list[remotes.RemoteInfo]:
        with self._s.reading() as repo:
            return remotes.list_remotes(repo)

    def stashes(self) -> list[stashing.StashEntry]:
        with self._s.reading() as repo:
            return stashing.list_stashes(repo)

    def recovery_points(self, limit: int = 50) -> list[recovery.RecoveryPoint]:
        with self._s.reading() as repo:
            return recovery.list_points(repo, limit)

    def rebase_plan(self, upstream: str, onto: str | None = None) -> RebasePlan:
        with self._s.reading() as repo:
            return rebase.plan(repo, upstream, onto)

    # -- index and commits ---------------------------------------------------------------------------
    def stage(self, paths: Sequence[str] = ()) -> StageResult:
        scope = repo_paths(self.root, paths)
        with self._s.writing(files=False, reconcile=False) as w:
            changed, skipped = staging.stage(w.repo, self.root, scope)
            return StageResult(action="stage", changed=changed, skipped=skipped, effect=w.effect())

    def unstage(self, paths: Sequence[str] = ()) -> StageResult:
        scope = repo_paths(self.root, paths)
        with self._s.writing(files=False, reconcile=False) as w:
            return StageResult(action="unstage", changed=staging.unstage(w.repo, scope), effect=w.effect())

    def commit(self, message: str, *, only: Sequence[str] = (), stage: Sequence[str] = (), stage_all: bool = False,
               author: commits.Author | None = None, allow_empty: bool = False, amend: bool = False,
               run_hooks: bool = True, stat_files: int = 10) -> commits.CommitResult:
        """Commit the index; ``only`` commits just those paths, ``stage``/``stage_all`` stage first. The result's
        ``stat`` is git's own (renames paired, its first ``stat_files`` files) when the commit may hold a rename."""
        req = commits.CommitRequest(message=message, only=tuple(repo_paths(self.root, only, "paths")),
                                    stage=tuple(repo_paths(self.root, stage, "paths")), stage_all=stage_all,
                                    author=author, allow_empty=allow_empty, amend=amend, run_hooks=run_hooks,
                                    hook_timeout_s=self.config.hook_timeout_sec)
        with self._s.writing(files=False) as w:
            result = commits.commit(w.repo, self.root, req)
            new = require_head(w.repo)
            parent = new.parents[0].tree if new.parents else None
            changes = parent.diff_to_tree(new.tree) if parent is not None else new.tree.diff_to_tree(swap=True)
            w.extra_paths = tuple(sorted({d.new_file.path for d in changes.deltas}))
            w.added = tuple(d.new_file.path for d in changes.deltas if d.status == DeltaStatus.ADDED)
            w.stats = (changes.stats.insertions, changes.stats.deletions)
            stat = commits.git_stat(w.repo, new, changes, stat_files)
            return result.model_copy(update={"effect": w.effect(), "stat": stat})

    # -- HEAD and working tree -----------------------------------------------------------------------
    def checkout(self, ref: str | None = None, *, create: bool = False, start_point: str | None = None,
                 paths: Sequence[str] = (), force: bool = False, confirm: bool = False) -> CheckoutResult:
        scope = repo_paths(self.root, paths)
        # As ``git checkout -- .``: paths that name the repository root restore everything (an empty scope).
        restoring = bool(paths)
        with self._s.writing(files=True) as w:
            repo = w.repo
            dirty = status.dirty_paths(repo)
            created = None
            before = head_commit(repo)
            warnings: list[str] = []
            if restoring:
                source = checkout.restore_source(repo, scope, ref)
                sparse.refuse_sparse(repo, "restoring these paths", source[1])
                mask = _UNSTAGED if ref is None else _TRACKED_CHANGE | FileStatus.WT_NEW
                # A symlink where the source has a directory is replaced by one (never written through): if it is
                # untracked or changed, that is local work lost too.
                links = checkout.links_in_the_way(repo, source)
                lost = sorted(p for p, f in dirty.items() if (under(p, scope) and f & mask) or
                              (p in links and f & (_TRACKED_CHANGE | FileStatus.WT_NEW)))
                if lost:
                    # The files losing changes, unless they are the very paths the caller named (sent back).
                    named = {"paths": lost[:100]} if lost != scope else {}
                    require_confirm(confirm, "restoring these paths", f"local changes in {len(lost)} file(s)",
                                    **named)
                    w.record("checkout-paths")
                restored = checkout.restore_paths(repo, source, w.recovery_point)
                warnings += [f"{shown(link)}: the symlink was replaced by a directory, as git does (the files restored "
                             "are under it)" for link in links]
            elif create and ref is not None and start_point is None and repo.head_is_unborn:
                # ``git checkout -b`` before the first commit only renames the unborn branch: nothing to check out.
                checkout.switch_unborn(repo, ref)
                created, restored = ref, []
            else:
                if ref is None:
                    raise _invalid("ref", "give ref to switch to, or paths to restore")
                target = checkout.resolve_target(repo, ref, create, start_point)
                sparse.refuse_sparse(repo, "switching to another commit")
                checkout.refuse_filtered_switch(repo, target)
                state = repo_state(repo)
                if state not in ("none", "bisect"):  # git switches during a bisect (``git bisect`` itself does)
                    # Switching away from a rebase, merge or pick in progress kept its state: a rebase's continue
                    # then rewrote the branch switched to (force included).
                    conflicted = " with unresolved conflicts" if repo.index.conflicts is not None else ""
                    raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"a {state} is in progress{conflicted}; "
                                         f"{branch_state.way_out(repo, state)}, before switching",
                                         details={"state": state})
                if not force and repo.index.conflicts is not None:  # libgit2 refuses with an untyped error
                    # A stash pop that stopped on conflicts leaves them with no operation in progress.
                    raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "unresolved conflicts in the index: resolve "
                                         "them (git_stage_and_commit) or drop them (git_checkout paths, or git_reset "
                                         "hard), before switching", details={"state": state})
                elsewhere = checkout.checked_out_elsewhere(repo, target.branch) if target.branch and \
                    target.create is None else None
                if elsewhere is not None:
                    raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"{ref!r} is already checked out at "
                                         f"{elsewhere}; switch that worktree away first, or check out a commit "
                                         "(detached)", details={"branch": ref, "worktree": elsewhere})
                # Untracked files the target tracks are overwritten by a forced checkout: local changes too.
                overwritten = {p for p, f in dirty.items() if f & FileStatus.WT_NEW and checkout.tracks(target, p)}
                # A submodule the target drops stays as it is (gitlinks), so its own changes are not lost.
                kept = gitlinks.dropped_submodules(repo, target.commit.tree)
                changed = {p for p, f in dirty.items() if f & _TRACKED_CHANGE and p not in kept}
                if force and (overwritten or changed):
                    lost = sorted(changed | overwritten)
                    require_confirm(confirm, "a forced checkout", f"local changes in {len(lost)} file(s)",
                                    paths=lost[:100])
                    w.record("checkout-force")
                left = before.id if before is not None and repo.head_is_detached else None
                warnings += [gitlinks.warning(p) for p in checkout.switch(repo, target, force=force)]
                created = target.create[0] if target.create else None
                restored = []
                if left is not None and (warning := checkout.left_behind_warning(repo, left)) is not None:
                    warnings.append(warning)
            head = head_commit(repo)
            branch = head_branch(repo)
            # As git checkout: previous HEAD, new HEAD, 1 for a branch checkout (0: paths).
            hook = run_hook(repo, "post-checkout", (str(before.id) if before else _NULL_OID,
                                                    str(head.id) if head else _NULL_OID, "0" if restoring else "1"),
                            timeout_s=self.config.hook_timeout_sec)
            # A path restore sets ``restored_paths`` even to none (its text: "nothing to restore"); a switch not.
            listed = {"restored_paths": restored} if restoring else {}
            return CheckoutResult(branch=None if repo.head_is_detached or branch is None else
                                  branch.removeprefix("refs/heads/"), head=str(head.id) if head else None,
                                  detached=repo.head_is_detached, created_branch=created, **listed,
                                  hooks=[hook] if hook.ran else [], warnings=warnings, effect=w.effect())

    def merge(self, ref: str, *, message: str | None = None, no_ff: bool = False, ff_only: bool = False,
              favor: merging.Favor = "normal", allow_unrelated: bool = False) -> merging.MergeResult:
        with self._s.writing(files=True) as w:
            result = merging.merge(w.repo, ref, message=message, no_ff=no_ff, ff_only=ff_only, favor=favor,
                                   hook_timeout_s=self.config.hook_timeout_sec, allow_unrelated=allow_unrelated)
            return result.model_copy(update={"effect": w.effect()})

    def merge_abort(self) -> merging.MergeResult:
        """End a merge, cherry-pick or revert in progress (a git CLI's sequence of them whole) as ``git merge
        --abort`` / ``git cherry-pick --abort`` do (a recovery point first, once the refusals are checked)."""
        with self._s.writing(files=True) as w:
            plan = merge_abort.plan_abort(w.repo)
            operation = {"cherrypick": "cherry_pick"}.get(plan.state, plan.state)
            w.record("merge-abort")
            merge_abort.abort(w.repo, plan)
            head = require_head(w.repo)
            return merging.MergeResult(operation=operation, success=True, commit=str(head.id), aborted=True,
                                       warnings=list(plan.warnings), effect=w.effect())

    def cherry_pick(self, ref: str) -> merging.MergeResult:
        with self._s.writing(files=True) as w:
            result = merging.cherry_pick(w.repo, ref, hook_timeout_s=self.config.hook_timeout_sec)
            return result.model_copy(update={"effect": w.effect()})

    def revert(self, ref: str) -> merging.MergeResult:
        with self._s.writing(files=True) as w:
            result = merging.revert(w.repo, ref, hook_timeout_s=self.config.hook_timeout_sec)
            return result.model_copy(update={"effect": w.effect()})

    def reset(self, ref: str | None = None, mode: resetting.Mode = "mixed", *, confirm: bool = False) -> ResetResult:
        with self._s.writing(files=True) as w:
            if mode == "hard":
                goal = resetting.target(w.repo, ref, mode)
                # Said as it is: a reset to HEAD moves nothing, and a clean tree loses nothing (QA57).
                moves = w.repo.head_is_unborn or w.repo.head.target != goal.id
                require_confirm(confirm, "a hard reset", "any uncommitted changes" + (
                    f" and move the branch to {str(goal.id)[:12]}" if moves else ""))
                w.record("reset-hard")
            target, kept = resetting.reset(w.repo, ref, mode)
            branch = head_branch(w.repo)
            left = branch_state.sequence_left(w.repo) if mode != "soft" else None
            return ResetResult(mode=mode, head=str(target.id), effect=w.effect(),
                               warnings=[gitlinks.warning(p) for p in kept] + ([left] if left else []),
                               branch=None if w.repo.head_is_detached or branch is None else
                               branch.removeprefix("refs/heads/"))

    def restore(self, recovery_point: str, *, confirm: bool = False) -> ResetResult:
        """Put HEAD, index and working tree back to a recovery point (recording the current state first)."""
        with self._s.writing(files=True) as w:
            point = recovery.load(w.repo, recovery_point)
            require_confirm(confirm, "restoring a recovery point", "the current working tree, index and HEAD",
                            recovery_point=point.name)
            recovery.check_restore(w.repo)
            w.record("restore")
            recreated, kept = recovery.restore(w.repo, point)
            if layout.restore_stash(w, point):
                recreated.append("refs/stash")
            notes = [f"the remote tip before the force push was {oid}; push it with force to undo"
                     for key, oid in point.extras.items() if key.startswith("remote:")]
            head = head_commit(w.repo)
            return ResetResult(mode="recovery", head=str(head.id) if head else None, restored=point,
                               recreated_refs=recreated, notes=notes, effect=w.effect(),
                               warnings=[gitlinks.warning(p) for p in kept],
                               branch=point.branch.removeprefix("refs/heads/") if point.branch else None)

    # -- refs ----------------------------------------------------------------------------------------
    def branch_create(self, name: str, ref: str | None = None, *, force: bool = False) -> BranchResult:
        with self._s.writing(files=False, reconcile=False, index=False) as w:
            info = branches.create(w.repo, name, ref, force)
            return BranchResult(action="create", branch=info, effect=w.effect())

    def branch_rename(self, name: str, new_name: str, *, force: bool = False) -> BranchResult:
        with self._s.writing(files=False, reconcile=False, index=False) as w:
            info = branches.rename(w.repo, name, new_name, force)
            return BranchResult(action="rename", branch=info, effect=w.effect())

    def branch_delete(self, name: str, *, confirm: bool = False) -> BranchResult:
        with self._s.writing(files=False, reconcile=False, index=False) as w:
            branch = branches.local_branch(w.repo, name)
            unmerged = not branches.is_merged(w.repo, branch)
            if unmerged:
                require_confirm(confirm, f"deleting unmerged branch {name!r}",
                                "commits reachable from no other branch", branch=name)
                w.record("branch-delete", {f"branch:{branch.name}": str(branch.target)})
            info = branches.delete(w.repo, name)
            return BranchResult(action="delete", branch=info, unmerged=unmerged, effect=w.effect())

    def tag_create(self, name: str, ref: str | None = None, *, message: str | None = None,
                   force: bool = False) -> TagResult:
        with self._s.writing(files=False, reconcile=False, index=False) as w:
            info = tags.create(w.repo, name, ref, message, force)
            return TagResult(action="create", tag=info, effect=w.effect())

    def tag_delete(self, name: str) -> TagResult:
        with self._s.writing(files=False, reconcile=False, index=False) as w:
            info = tags.delete(w.repo, name)
            return TagResult(action="delete", tag=info, effect=w.effect())

    # -- remotes -------------------------------------------------------------------------------------
    def remote_add(self, name: str, url: str) -> RemoteResult:
        with self._s.writing(files=False, reconcile=False, index=False) as w:
            return RemoteResult(action="add", remote=remotes.add(w.repo, name, url), effect=w.effect())

    def remote_remove(self, name: str) -> RemoteResult:
        with self._s.writing(files=False, reconcile=False, index=False) as w:
            return RemoteResult(action="remove", remote=remotes.remove(w.repo, name), effect=w.effect())

    def fetch(self, remote: str | None = None, branch: str | None = None, *, prune: bool = False) -> RemoteResult:
        with self._s.writing(files=False, reconcile=False, index=False) as w:
            return sync.fetch(w, remote, branch, prune=prune, timeout_s=self.config.remote_timeout_sec)

    def push(self, remote: str | None = None, branch: str | None = None, *, remote_branch: str | None = None,
             force: bool = False, set_upstream: bool = False, confirm: bool = False, tags: Sequence[str] = (),
             delete: bool = False) -> PushResult:
        with self._s.writing(files=False, reconcile=False, index=False) as w:
            return sync.push(w, remote, branch, remote_branch=remote_branch, force=force, set_upstream=set_upstream,
                             confirm=confirm, timeout_s=self.config.remote_timeout_sec, tags=tags, delete=delete)

    def pull(self, remote: str | None = None, branch: str | None = None, *, rebase: bool = False) -> PullResult:
        with self._s.writing(files=True) as w:
            return sync.pull(w, remote, branch, use_rebase=rebase, timeout_s=self.config.remote_timeout_sec,
                             hook_timeout_s=self.config.hook_timeout_sec)

    # -- stash ---------------------------------------------------------------------------------------
    def stash_push(self, *, message: str | None = None, include_untracked: bool = False, keep_index: bool = False,
                   paths: Sequence[str] = ()) -> StashResult:
        scope = repo_paths(self.root, paths)
        with self._s.writing(files=True) as w:
            entry, kept = stashing.push(w.repo, message=message, include_untracked=include_untracked,
                                        keep_index=keep_index, paths=scope)
            return StashResult(action="push", stash=entry, effect=w.effect(),
                               warnings=[gitlinks.warning(p) for p in kept])

    def stash_apply(self, index: int = 0, *, pop: bool = False, reinstate_index: bool = False) -> StashResult:
        with self._s.writing(files=True) as w:
            entry = stashing.entry(w.repo, index)
            conflicts, dropped = stashing.apply(w.repo, index, pop=pop, reinstate_index=reinstate_index)
            # A conflicting apply leaves unmerged paths but no operation in progress (no MERGE_HEAD): git says
            # nothing of a merge, and a commit once they are staged is an ordinary one.
            return StashResult(action="pop" if pop else "apply", stash=entry, conflicts=conflicts, dropped=dropped,
                               state=repo_state(w.repo), effect=w.effect())

    def stash_drop(self, index: int = 0, *, confirm: bool = False) -> StashResult:
        with self._s.writing(files=False, reconcile=False) as w:
            entry = stashing.entry(w.repo, index)
            require_confirm(confirm, f"dropping {entry.name}", "the stashed changes", stash=entry.name)
            w.record("stash-drop", {"stash": entry.oid})
            stashing.drop(w.repo, index)
            return StashResult(action="drop", stash=entry, dropped=True, effect=w.effect())

    # -- rebase --------------------------------------------------------------------------------------
    def rebase_execute(self, plan: RebasePlan, *, confirm: bool = False) -> rebase.RebaseResult:
        with self._s.writing(files=True) as w:
            rebase.check_start(w.repo, plan)
            require_confirm(confirm, "a rebase", "nothing permanently, but it rewrites the branch's commits")
            point = w.record("rebase")
            return rebase.execute(w.repo, plan, point).model_copy(update={"effect": w.effect()})

    def rebase_start(self, upstream: str, onto: str | None = None, *, confirm: bool = False) -> rebase.RebaseResult:
        return self.rebase_execute(self.rebase_plan(upstream, onto), confirm=confirm)

    def rebase_continue(self) -> rebase.RebaseResult:
        with self._s.writing(files=True) as w:
            return rebase.resume(w.repo).model_copy(update={"effect": w.effect()})

    def rebase_skip(self, *, confirm: bool = False) -> rebase.RebaseResult:
        with self._s.writing(files=True) as w:
            if rebase.in_progress(w.repo).paused == "conflict":
                rebase.check_forced(w.repo, "skipping the step", "git rebase --skip")
            require_confirm(confirm, "skipping the current rebase step", "that step's changes and resolutions")
            w.record("rebase-skip")
            return rebase.skip(w.repo).model_copy(update={"effect": w.effect()})

    def rebase_abort(self, *, confirm: bool = False) -> rebase.RebaseResult:
        with self._s.writing(files=True) as w:
            rebase.in_progress(w.repo)
            rebase.check_forced(w.repo, "the rebase abort", "git rebase --abort")
            require_confirm(confirm, "aborting the rebase", "the steps done so far and any conflict resolutions")
            w.record("rebase-abort")
            return rebase.abort(w.repo).model_copy(update={"effect": w.effect()})


    # -- submodules and worktrees --------------------------------------------------------------------
    def submodules(self, paths: Sequence[str] = ()) -> list[submodules.SubmoduleInfo]:
        scope = repo_paths(self.root, paths)
        with self._s.reading() as repo:
            return submodules.list_submodules(repo, scope)

    def submodule_change(self, action: str, *, paths: Sequence[str] = (), url: str | None = None,
                         branch: str | None = None, recursive: bool = False, confirm: bool = False,
                         ) -> SubmoduleResult:
        """init | update | sync | add (``url`` + one path) | remove (one path; needs confirm)."""
        scope = repo_paths(self.root, paths, link_itself=False)  # add creates there
        with self._s.writing(files=True) as w:
            return layout.submodule_change(w, action, scope, url=url, branch=branch, recursive=recursive,
                                           confirm=confirm, timeout_s=self.config.remote_timeout_sec)

    def worktrees(self) -> list[worktrees.WorktreeInfo]:
        with self._s.reading() as repo:
            return worktrees.list_worktrees(repo, self.root)

    def worktree_change(self, action: str, *, name: str | None = None, path: str | None = None,
                        ref: str | None = None, force: bool = False, reason: str | None = None,
                        confirm: bool = False) -> WorktreeResult:
        """add | remove (force needs confirm) | lock | unlock | prune."""
        with self._s.writing(files=False, reconcile=False) as w:
            return layout.worktree_change(w, action, name=name, path=path, ref=ref, force=force, reason=reason,
                                          confirm=confirm, timeout_s=self.config.remote_timeout_sec)


def _invalid(field: str, message: str) -> CodePlaneError:
    return CodePlaneError(ErrorCode.INVALID_ARGUMENTS, message, details={"field": field})

