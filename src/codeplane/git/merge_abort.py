"""``git_merge action=abort``: ``git merge --abort``, ``git cherry-pick --abort`` and ``git revert --abort``.

Each is git's ``reset --merge`` to a target: HEAD, or, for a ``git cherry-pick A B`` (or ``revert``) sequence the
git CLI started (``.git/sequencer/``, :mod:`codeplane.git.branch_state`), the commit the branch named before it,
where the branch goes back too, as ``git cherry-pick --abort`` rewinds it. Only the paths where the index differs
from the target (the operation's, its conflicts included) are written; local changes elsewhere stay. An unstaged
change to one of those paths (or an untracked file where the target puts one) is refused with 8004 naming it, as
git refuses (``Entry 'x' not uptodate. Cannot merge.``): the abort never drops it silently; between two picks of a
sequence (no pick in progress) a staged change is the user's too and is refused as well. When HEAD moved since
the sequence last stopped (a commit made in between), git does not rewind and neither does this: the pick in
progress ends, the sequence is forgotten, and a warning says so. :func:`plan_abort` gives every refusal before
anything changes, so the caller records its recovery point only for an abort that goes ahead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import FileStatus

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import branch_state
from codeplane.git._workdir import path_as_in, settling
from codeplane.git.conflicts import read_conflicts, repo_state
from codeplane.git.filters import refuse_filtered
from codeplane.git.gitlinks import is_submodule
from codeplane.git.pathspecs import shown
from codeplane.git.revisions import advance_head, require_head, write_orig_head
from codeplane.git.sparse import keeping_cone, refuse_outside
from codeplane.git.status import dirty_paths

#: A work-tree change an abort would overwrite (a file deleted from disk loses nothing, as git's check agrees).
_UNSTAGED = FileStatus.WT_MODIFIED | FileStatus.WT_TYPECHANGE | FileStatus.WT_NEW | FileStatus.WT_RENAMED
_STAGED = (FileStatus.INDEX_NEW | FileStatus.INDEX_MODIFIED | FileStatus.INDEX_DELETED | FileStatus.INDEX_RENAMED
           | FileStatus.INDEX_TYPECHANGE)
_CLI_ABORT = {"merge": "git merge --abort", "cherrypick": "git cherry-pick --abort", "revert": "git revert --abort"}


@dataclass(frozen=True)
class AbortPlan:
    #: merge | cherrypick | revert
    state: str
    #: What the index and the touched paths become; the branch moves there when ``rewind``.
    target: pygit2.Commit
    touched: frozenset[str]
    #: A sequence's abort: the branch goes back to where it was before the sequence.
    rewind: bool
    #: The git CLI's sequence is forgotten (``sequencer/`` removed).
    ends_sequence: bool
    warnings: tuple[str, ...] = ()


def abortable_state(repo: pygit2.Repository) -> str:
    """The operation an abort would end (merge, cherrypick, revert: one in progress, or a sequence the git CLI left
    between two picks); 8005 when there is none, saying what ends the state there is instead."""
    state = repo_state(repo)
    if state in ("merge", "cherrypick", "revert"):
        return state
    pending = branch_state.sequence(repo) if state in ("none", "bisect") else None
    if pending is not None:
        return pending.action
    hint = f"; {branch_state.way_out(repo, state)}" if state != "none" else ""
    raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"no merge, cherry-pick or revert in progress to abort "
                         f"(state: {state}){hint}", details={"state": state})


def plan_abort(repo: pygit2.Repository) -> AbortPlan:
    """What :func:`abort` would do, or its refusal (8005, 8004) before anything is written."""
    state = abortable_state(repo)
    head = require_head(repo)
    index = repo.index
    index.read()
    pending = branch_state.sequence(repo) if state in ("cherrypick", "revert") else None
    in_progress = repo_state(repo) == state  # else only a sequence is left, between two picks
    target, rewind = head, False
    warnings: tuple[str, ...] = ()
    if pending is not None and pending.safe:
        if pending.head is None:
            raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "cannot abort the git CLI's sequence: it started on a "
                                 "branch yet to be born (git refuses it too)", details={"state": state})
        target, rewind = repo[pending.head].peel(pygit2.Commit), pending.head != head.id
    elif pending is not None:
        warnings = (f"HEAD moved since the git CLI's {_name(state)} sequence stopped (a commit made since): not "
                    f"rewound to {str(pending.head)[:12]}, as `{_CLI_ABORT[state]}` does not rewind then; the sequence "
                    "is forgotten",)
    touched: set[str] = set()
    if in_progress or rewind:
        touched = {c.path for c in read_conflicts(index)}
        for delta in target.tree.diff_to_index(index).deltas:
            touched.update((delta.old_file.path, delta.new_file.path))
    _refuse_local_changes(repo, state, touched, between_picks=not in_progress)
    if rewind:
        refuse_filtered(repo, touched, f"the {_name(state)} abort")
        refuse_outside(repo, f"the {_name(state)} abort", _CLI_ABORT[state], touched)
    return AbortPlan(state=state, target=target, touched=frozenset(touched), rewind=rewind,
                     ends_sequence=pending is not None, warnings=warnings)


def _name(state: str) -> str:
    return {"cherrypick": "cherry-pick"}.get(state, state)


def _refuse_local_changes(repo: pygit2.Repository, state: str, touched: set[str], *, between_picks: bool) -> None:
    """8004 when writing ``touched`` would lose a change the operation did not make: an unstaged one (git: "not
    uptodate"), or, between two picks of a sequence, a staged one (no pick is in progress to have staged it; git's
    abort would drop it)."""
    if not touched:
        return
    dirty = dirty_paths(repo)
    # A conflicted path's file holds the operation's markers (and any resolution begun): git's abort overwrites it.
    conflicted = {next(e for e in entries if e is not None).path for entries in repo.index.conflicts or ()}
    kept = [p for p in touched if p not in conflicted and not is_submodule(repo, p)]
    unstaged = sorted(shown(p) for p in kept if dirty.get(p, FileStatus(0)) & _UNSTAGED)
    if unstaged:
        raise CodePlaneError(ErrorCode.GIT_DIRTY_WORKTREE, f"the {_name(state)} abort would discard local changes to "
                             f"{_listed(unstaged)}, which `{_CLI_ABORT[state]}` refuses too (\"not uptodate\"); "
                             "nothing changed. Keep them elsewhere, or discard them with git_checkout paths (confirm: "
                             "true, a recovery point keeps them), then abort again",
                             details={"paths": unstaged[:200], "count": len(unstaged)})
    staged = sorted(shown(p) for p in kept if dirty.get(p, FileStatus(0)) & _STAGED) if between_picks else []
    if staged:
        raise CodePlaneError(ErrorCode.GIT_DIRTY_WORKTREE, f"the {_name(state)} sequence's abort would discard changes "
                             f"staged to {_listed(staged)} since it stopped (no pick is in progress to have staged "
                             "them); nothing changed. Commit or stash them, then abort again",
                             details={"paths": staged[:200], "count": len(staged)})


def _listed(paths: list[str]) -> str:
    return ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")


def abort(repo: pygit2.Repository, plan: AbortPlan) -> list[str]:
    """Carry out :func:`plan_abort`'s plan: the touched paths as the target has them in the index and the work tree,
    the branch moved back for a sequence (``ORIG_HEAD`` where it was), the operation's state files gone. The paths
    put back."""
    repo.index.read()
    index = repo.index
    root = Path(repo.workdir)
    target = plan.target.tree
    # A clean change outside a sparse checkout's cone is in the index only: put back there only, as git's abort.
    with settling(repo, plan.touched), keeping_cone(repo):
        # Removals first, deepest first: a directory the operation brought in over a HEAD symlink (or file) must be
        # gone before the link is written back where it was.
        removed = sorted((p for p in plan.touched if not _in_tree(target, p)), reverse=True)
        for path in [*removed, *sorted(plan.touched.difference(removed))]:
            if index.conflicts is not None and path in index.conflicts:
                del index.conflicts[path]
            path_as_in(repo, root, target, path)
        index.write()
        if plan.rewind:
            write_orig_head(repo, require_head(repo).id)
            advance_head(repo, plan.target.id, f"reset: moving to {plan.target.id}")
        if plan.ends_sequence:
            branch_state.remove_sequence(repo)
        branch_state.end_branch_state(repo)
    return sorted(shown(p) for p in plan.touched)


def _in_tree(tree: pygit2.Tree, path: str) -> bool:
    try:
        tree[path]
    except KeyError:
        return False
    return True
