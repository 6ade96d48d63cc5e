"""``git_rebase``: plan, execute (pick/reword/edit/squash/fixup/drop), continue, skip, abort.

``plan`` lists the commits of HEAD not in ``upstream`` (oldest first, merges left out, as git does); the caller may
reorder them and change actions, then ``execute`` replays them onto ``onto``. HEAD is detached while the rebase
runs and the branch moves only when every step is done, so ``abort`` puts it back exactly. A step that conflicts
pauses with the conflicts as data; ``edit`` pauses after its commit. Steps whose changes are already upstream
become empty and are dropped (listed in ``skipped_empty``); a commit that was empty to begin with is kept, as git
keeps it. A squash combines the messages (or takes the step's ``message``) even when the squashed commit is empty.
ORIG_HEAD names the commit the rebase started from, and HEAD's reflog says each step as git's does
(``rebase (pick): <summary>``). The service records a recovery point before execute, skip and abort, once their
checks (:func:`check_start`, :func:`in_progress`, :func:`check_forced`) pass: a refused call leaves none behind. A
rebase that would write a file with a filter driver is refused (:mod:`codeplane.git.filters`). In a sparse checkout
the cone is kept as git keeps it (:mod:`codeplane.git.sparse`); a submodule a step or the abort drops keeps its
directory, untracked, with a warning, and one coming back gets its directory again (:mod:`codeplane.git.gitlinks`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Literal

import pygit2
from pygit2.enums import CheckoutStrategy, ResetMode, SortMode

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import rebase_state
from codeplane.git._workdir import checkout_tree, tree_delta_paths
from codeplane.git.branch_state import end_branch_state, libgit2_reset, way_out
from codeplane.git.conflicts import git_style_labels, read_conflicts, repo_state
from codeplane.git.filters import refuse_filtered
from codeplane.git.gitlinks import is_submodule, kept_submodules, warning
from codeplane.git.merge import require_clean_index
from codeplane.git.models import Conflict, WriteResult
from codeplane.git.pathspecs import raw_ref
from codeplane.git.rebase_state import RebasePlan, RebaseState, RebaseStep
from codeplane.git.revisions import head_branch, require_head, resolve_commit, user_signature, write_orig_head
from codeplane.git.signing import refuse_signing
from codeplane.git.sparse import keeping_cone, refuse_outside

Outcome = Literal["done", "conflict", "edit_pause", "aborted"]


class RebaseResult(WriteResult):
    success: bool
    completed_steps: int
    total_steps: int
    state: Outcome
    conflict_paths: list[str] = []
    conflicts: list[Conflict] = []
    current_commit: str | None = None
    new_head: str | None = None
    skipped_empty: list[str] = []
    #: What git warns about: submodule directories a step or the abort drops, left in place.
    warnings: list[str] = []


def plan(repo: pygit2.Repository, upstream: str, onto: str | None = None) -> RebasePlan:
    head = require_head(repo)
    up = resolve_commit(repo, upstream, "upstream")
    base = resolve_commit(repo, onto, "onto") if onto else up
    walker = repo.walk(head.id, SortMode.TOPOLOGICAL | SortMode.REVERSE)
    walker.hide(up.id)
    steps = [RebaseStep(action="pick", commit_sha=str(c.id), message=c.message.split("\n", 1)[0])
             for c in walker if len(c.parents) <= 1]
    return RebasePlan(upstream=str(up.id), onto=str(base.id), steps=steps)


def _validate(repo: pygit2.Repository, plan_: RebasePlan) -> None:
    seen_target = False
    for i, step in enumerate(plan_.steps):
        commit = resolve_commit(repo, step.commit_sha, f"steps[{i}].commit_sha")
        if len(commit.parents) != 1:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"step {i}: {step.commit_sha} is a merge or root "
                                 "commit and cannot be replayed", details={"step": i})
        if step.action in ("squash", "fixup") and not seen_target:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"step {i}: {step.action} needs an earlier kept "
                                 "commit to fold into", details={"step": i})
        seen_target = seen_target or step.action != "drop"
    resolve_commit(repo, plan_.onto, "onto")


def check_start(repo: pygit2.Repository, plan_: RebasePlan) -> None:
    """Every refusal :func:`execute` can give before it changes anything (a rebase in progress, local changes, a
    step that cannot be replayed), so a caller checks before recording a recovery point for a call refused."""
    if rebase_state.load(repo) is not None:
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "a rebase is already in progress (continue, skip or "
                             "abort it)", details={"state": "rebase"})
    dirty = require_clean_index(repo, "rebase")
    # As git's rebase (``require_clean_work_tree`` ignoring submodules): a submodule's own changes do not count.
    modified = sorted(p for p, f in dirty.items() if f & ~int(pygit2.enums.FileStatus.WT_NEW) and
                      not is_submodule(repo, p))
    if modified:
        raise CodePlaneError(ErrorCode.GIT_DIRTY_WORKTREE, "commit or stash local changes before rebasing",
                             details={"paths": modified[:200], "count": len(modified)})
    _validate(repo, plan_)
    head = require_head(repo)
    refuse_signing(repo, "rebase")
    refuse_filtered(repo, _written(repo, head, plan_), "rebase")
    refuse_outside(repo, "the rebase", "git rebase", _written(repo, head, plan_))


def check_forced(repo: pygit2.Repository, what: str, cli: str) -> None:
    """The refusal :func:`skip` or :func:`abort` (``what``) gives before writing: they rewrite the whole work tree,
    which in a sparse checkout must hold no file outside the cone (:func:`codeplane.git.sparse.refuse_outside`)."""
    refuse_outside(repo, what, cli, forced=True)


def _written(repo: pygit2.Repository, head: pygit2.Commit, plan_: RebasePlan) -> Iterator[str]:
    """The paths the rebase may write: to ``onto``, then each replayed step's (lazily: only asked for when a filter
    driver is configured, or files are outside a sparse checkout's cone)."""
    yield from tree_delta_paths(head.tree, resolve_commit(repo, plan_.onto, "onto").tree)
    yield from _steps_written(repo, plan_.steps)


def _steps_written(repo: pygit2.Repository, steps: Iterable[RebaseStep]) -> Iterator[str]:
    for step in steps:
        if step.action != "drop":
            commit = resolve_commit(repo, step.commit_sha)
            yield from tree_delta_paths(commit.parents[0].tree, commit.tree)


def execute(repo: pygit2.Repository, plan_: RebasePlan, recovery_point: str | None) -> RebaseResult:
    """Start replaying ``plan_``; the caller has run :func:`check_start` and then recorded ``recovery_point``."""
    check_start(repo, plan_)
    head = require_head(repo)
    onto = resolve_commit(repo, plan_.onto, "onto")
    state = RebaseState(plan=plan_, orig_head=str(head.id), branch=None if repo.head_is_detached else
                        head_branch(repo), recovery_point=recovery_point)
    write_orig_head(repo, head.id)
    warned: list[str] = []
    with keeping_cone(repo, _written(repo, head, plan_)):
        with kept_submodules(repo, onto.tree) as kept:  # a submodule ``onto`` drops stays, as git leaves it
            checkout_tree(repo, onto.tree, CheckoutStrategy.SAFE)
        warned += [warning(p) for p in kept]
        _detach(repo, onto.id, f"rebase (start): checkout {onto.id}")
        rebase_state.save(repo, state)
        return _run(repo, state, warned)


def _replay(repo: pygit2.Repository, step: RebaseStep, warned: list[str]) -> list[Conflict]:
    """Apply one step's changes to the index and working tree (fast-forwarding when possible); a submodule the step
    drops keeps its directory (its warning joins ``warned``)."""
    commit = resolve_commit(repo, step.commit_sha)
    head = require_head(repo)
    if commit.parents[0].id == head.id and step.action in ("pick", "edit"):
        with kept_submodules(repo, commit.tree) as kept:
            checkout_tree(repo, commit.tree, CheckoutStrategy.SAFE)
        warned += [warning(p) for p in kept]
        _detach(repo, commit.id, _reflog(step, commit.message))
        return []
    # libgit2 keeps the gitlink of a dropped submodule whose directory is not empty: the step's result decides.
    with kept_submodules(repo, repo.merge_trees(commit.parents[0].tree, head.tree, commit.tree)) as kept:
        repo.cherrypick(commit.id)
    warned += [warning(p) for p in kept]
    git_style_labels(repo, commit)
    return read_conflicts(repo.index)


def _commit_step(repo: pygit2.Repository, step: RebaseStep, state: RebaseState) -> RebaseState:
    """Commit what the step left in the index; an empty result is dropped."""
    commit = resolve_commit(repo, step.commit_sha)
    head = require_head(repo)
    if head.id == commit.id:  # fast-forwarded
        return state
    tree = repo.index.write_tree()
    committer = user_signature(repo)
    given = _given_message(step, commit)
    if step.action in ("squash", "fixup"):
        message = given or (head.message.rstrip("\n") + "\n\n" + commit.message
                            if step.action == "squash" else head.message)
        # A squash of an empty commit still changes the message, as ``git rebase -i`` combines them.
        if tree != head.tree.id or message != head.message:
            oid = repo.create_commit(None, head.author, committer, message, tree, list(head.parent_ids))
            _detach(repo, oid, _reflog(step, message))
    elif tree == head.tree.id and commit.tree_id != commit.parents[0].tree_id:
        # Only a commit that *became* empty is dropped; one made empty on purpose (``--allow-empty``) is kept,
        # as git's rebase keeps commits that start empty by default.
        state = state.model_copy(update={"skipped_empty": [*state.skipped_empty, step.commit_sha]})
    else:
        message = given if step.action == "reword" and given else commit.message
        oid = repo.create_commit(None, commit.author, committer, message, tree, [head.id])
        _detach(repo, oid, _reflog(step, message))
    end_branch_state(repo, rebase_step=True)
    return state


def _given_message(step: RebaseStep, commit: pygit2.Commit) -> str | None:
    """The caller's new message for the step, or ``None``. A plan carries each commit's summary line; handed back
    unchanged it means "no new message" (as git ignores a todo line's text), not "cut the message to its summary"."""
    if not step.message or step.message == commit.message.split("\n", 1)[0]:
        return None
    return step.message


def _detach(repo: pygit2.Repository, oid: pygit2.Oid, message: str) -> None:
    """Move the detached HEAD with the reflog entry git's rebase writes (``set_head`` logs a checkout)."""
    repo.create_reference("HEAD", oid, force=True, message=message)


def _reflog(step: RebaseStep, message: str) -> str:
    return f"rebase ({step.action}): {message.split(chr(10), 1)[0]}"


def _run(repo: pygit2.Repository, state: RebaseState, warned: list[str]) -> RebaseResult:
    steps = state.plan.steps
    while state.next < len(steps):
        step = steps[state.next]
        if step.action == "drop":
            state = state.model_copy(update={"next": state.next + 1})
            continue
        conflicts = _replay(repo, step, warned)
        if conflicts:
            state = state.model_copy(update={"paused": "conflict"})
            rebase_state.save(repo, state)
            return _result(repo, state, "conflict", conflicts, warned)
        state = _commit_step(repo, step, state).model_copy(update={"next": state.next + 1})
        if step.action == "edit":
            state = state.model_copy(update={"paused": "edit"})
            rebase_state.save(repo, state)
            return _result(repo, state, "edit_pause", warned=warned)
        rebase_state.save(repo, state)
    return _finish(repo, state, warned)


def _run_rest(repo: pygit2.Repository, state: RebaseState) -> RebaseResult:
    """:func:`_run` from ``state.next``, keeping a sparse checkout's cone around the steps left."""
    with keeping_cone(repo, _steps_written(repo, state.plan.steps[state.next:])):
        return _run(repo, state, [])


def _finish(repo: pygit2.Repository, state: RebaseState, warned: list[str]) -> RebaseResult:
    new_head = require_head(repo)
    if state.branch is not None:
        branch = raw_ref(state.branch)  # the state keeps a name that is not UTF-8 as shown (``models.GitModel``)
        repo.create_reference(branch, new_head.id, force=True,
                              message=f"rebase (finish): {state.branch} onto {state.plan.onto}")
        repo.create_reference_symbolic("HEAD", branch, True,
                                       message=f"rebase (finish): returning to {state.branch}")
    rebase_state.clear(repo)
    return _result(repo, state, "done", warned=warned)


def _result(repo: pygit2.Repository, state: RebaseState, outcome: Outcome,
            conflicts: list[Conflict] | None = None, warned: list[str] | None = None) -> RebaseResult:
    head = require_head(repo)
    total = len(state.plan.steps)
    current = state.plan.steps[state.next].commit_sha if outcome == "conflict" else \
        state.plan.steps[state.next - 1].commit_sha if outcome == "edit_pause" else None
    return RebaseResult(
        success=outcome == "done", completed_steps=state.next if outcome != "done" else total, total_steps=total,
        state=outcome, conflicts=conflicts or [], conflict_paths=[c.path for c in conflicts or []],
        current_commit=current, new_head=str(head.id), skipped_empty=state.skipped_empty, warnings=warned or [],
    )


def in_progress(repo: pygit2.Repository) -> RebaseState:
    """The CodePlane rebase in progress; 8005 when there is none."""
    state = rebase_state.load(repo)
    if state is None:
        now = repo_state(repo)
        # A rebase the git CLI started (``.git/rebase-merge``) is not CodePlane's to continue: say what ends it.
        said = f" (state: {now}): {way_out(repo, now)}" if now != "none" else ""
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"no CodePlane rebase is in progress{said}",
                             details={"state": now})
    return state


def resume(repo: pygit2.Repository) -> RebaseResult:
    """``continue``: commit the resolved step (conflict pause) or go on after an edit pause."""
    state = in_progress(repo)
    refuse_signing(repo, "rebase continue")
    if state.paused == "conflict":
        conflicts = read_conflicts(repo.index)
        if conflicts:
            raise CodePlaneError(ErrorCode.GIT_CONFLICT, "resolve and stage every conflicted path first",
                                 details={"conflicts": [c.model_dump() for c in conflicts]})
        step = state.plan.steps[state.next]
        state = _commit_step(repo, step, state).model_copy(update={"next": state.next + 1, "paused": None})
        if step.action == "edit":
            state = state.model_copy(update={"paused": "edit"})
            rebase_state.save(repo, state)
            return _result(repo, state, "edit_pause")
    else:
        require_clean_index(repo, "rebase continue", in_rebase=True)
        state = state.model_copy(update={"paused": None})
    rebase_state.save(repo, state)
    return _run_rest(repo, state)


def skip(repo: pygit2.Repository) -> RebaseResult:
    """Drop the paused step's changes and go on (after an edit pause: just go on)."""
    state = in_progress(repo)
    warned: list[str] = []
    if state.paused == "conflict":
        check_forced(repo, "skipping the step", "git rebase --skip")
        head = require_head(repo)
        with keeping_cone(repo), kept_submodules(repo, head.tree) as kept, libgit2_reset(repo, rebase_step=True):
            repo.reset(head.id, ResetMode.HARD)
        warned = [warning(p) for p in kept]
        state = state.model_copy(update={"next": state.next + 1})
    state = state.model_copy(update={"paused": None})
    rebase_state.save(repo, state)
    result = _run_rest(repo, state)
    return result.model_copy(update={"warnings": warned + result.warnings}) if warned else result


def abort(repo: pygit2.Repository) -> RebaseResult:
    """Put HEAD, the branch, index and working tree back to where the rebase started."""
    state = in_progress(repo)
    check_forced(repo, "the rebase abort", "git rebase --abort")
    orig = pygit2.Oid(hex=state.orig_head)
    if state.branch is not None:
        repo.create_reference_symbolic("HEAD", raw_ref(state.branch), True,
                                       message=f"rebase (abort): returning to {state.branch}")
    else:
        _detach(repo, orig, f"rebase (abort): returning to {orig}")
    # A forced write: a submodule directory the rebase left untracked would be replaced by an empty one.
    with keeping_cone(repo), kept_submodules(repo, repo[orig].peel(pygit2.Commit).tree) as kept, \
            libgit2_reset(repo, rebase_step=True):
        repo.reset(orig, ResetMode.HARD)
    rebase_state.clear(repo)
    total = len(state.plan.steps)
    return RebaseResult(success=True, completed_steps=state.next, total_steps=total, state="aborted",
                        new_head=state.orig_head, warnings=[warning(p) for p in kept])
