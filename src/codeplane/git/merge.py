"""``git_merge``: merge (fast-forward or merge commit), cherry-pick and revert, with conflicts as data.

Before touching anything the result is computed in memory; if it would overwrite local changes (or an
untracked file) the call stops with 8004 naming the paths, and nothing changes. Staged changes must be
committed or stashed first, as with git. On conflicts the repository is left in the merge/cherry-pick/
revert state with conflict markers in the files and the three index stages; the answer lists each
conflicted path with its ancestor/ours/theirs blob oids. Resolve, ``git_stage`` the files, then
``git_commit`` (which concludes the operation), or ``abort`` it (``git merge --abort``, ``git/merge_abort.py``:
unrelated local changes stay). Unrelated histories are refused unless asked for, as git refuses them.

The repository's hooks run as git runs them: a merge commit runs ``pre-merge-commit``, then
``prepare-commit-msg`` and ``commit-msg`` on ``MERGE_MSG`` (``git/messages.py``), and every merge that moves
HEAD runs ``post-merge 0``; a cherry-pick or revert runs ``prepare-commit-msg`` and ``post-commit``. A hook that
fails before the commit leaves the operation in progress with its changes staged (``success`` false, no
conflicts, the hook's output in ``hooks``), as git does: fix and ``git_commit``, or ``git_reset`` hard.
A merge that moves HEAD sets ORIG_HEAD to where HEAD was, as git's does; ``commit.gpgsign`` refuses the operations
that would create a commit (``git/signing.py``), and a file with a filter driver refuses them all
(``git/filters.py``). In a sparse checkout the cone is kept as git keeps it (``git/sparse.py``), and a submodule
the result drops keeps its directory, untracked, with a warning (``git/gitlinks.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pygit2
from pygit2.enums import CheckoutStrategy, FileStatus, MergeAnalysis, MergeFavor

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git._workdir import checkout_tree, settling, tree_delta_paths
from codeplane.git.branch_state import end_branch_state, way_out
from codeplane.git.conflicts import RepoState, conflicts_comment, git_style_labels, read_conflicts, repo_state
from codeplane.git.filters import refuse_filtered
from codeplane.git.gitlinks import is_submodule, kept_submodules, warning
from codeplane.git.hooks import HookRun, run_hook
from codeplane.git.messages import edit_message
from codeplane.git.models import Conflict, WriteResult
from codeplane.git.pathspecs import shown
from codeplane.git.revisions import (
    advance_head,
    author_signature,
    empty_tree,
    head_branch,
    head_commit,
    require_head,
    resolve_commit,
    user_signature,
    write_orig_head,
)
from codeplane.git.signing import refuse_signing
from codeplane.git.sparse import keeping_cone, refuse_outside
from codeplane.git.status import dirty_paths

Favor = Literal["normal", "ours", "theirs", "union"]
_FAVOR = {"normal": MergeFavor.NORMAL, "ours": MergeFavor.OURS, "theirs": MergeFavor.THEIRS,
          "union": MergeFavor.UNION}
_STAGED_BITS = (FileStatus.INDEX_NEW | FileStatus.INDEX_MODIFIED | FileStatus.INDEX_DELETED
                | FileStatus.INDEX_RENAMED | FileStatus.INDEX_TYPECHANGE)


class MergeResult(WriteResult):
    #: merge | cherry_pick | revert
    operation: str
    success: bool
    fastforward: bool = False
    up_to_date: bool = False
    commit: str | None = None
    conflicts: list[Conflict] = []
    state: RepoState = "none"
    message: str | None = None
    hooks: list[HookRun] = []
    #: action=abort: the operation in progress was abandoned.
    aborted: bool = False
    #: What git warns about: submodule directories the result drops, left in place.
    warnings: list[str] = []


def require_clean_index(repo: pygit2.Repository, what: str, *, in_rebase: bool = False) -> dict[str, int]:
    """8005 if an operation is in progress (other than our rebase when ``in_rebase``; a bisect never counts), 8004
    if changes are staged; returns the dirty paths."""
    state = repo_state(repo)
    # A bisect is no operation to finish first: git merges, picks, reverts and rebases during one.
    if state not in ("none", "bisect") and not (in_rebase and state == "rebase"):
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"a {state} is in progress; {way_out(repo, state)}",
                             details={"state": state})
    dirty = {p: int(f) for p, f in dirty_paths(repo).items()}
    staged = sorted(shown(p) for p, f in dirty.items() if f & _STAGED_BITS)
    if staged:
        raise CodePlaneError(ErrorCode.GIT_DIRTY_WORKTREE, f"commit or stash staged changes before the {what}",
                             details={"paths": staged[:200], "count": len(staged)})
    return dirty


def touched_paths(head: pygit2.Commit, merged: pygit2.Index) -> set[str]:
    """The paths an in-memory result changes from HEAD, its conflicts included."""
    touched: set[str] = set()
    for delta in head.tree.diff_to_index(merged).deltas:
        touched.update((delta.old_file.path, delta.new_file.path))
    if merged.conflicts is not None:
        for ancestor, ours, theirs in merged.conflicts:
            entry = ours or theirs or ancestor
            if entry is not None:
                touched.add(entry.path)
    return touched


def refuse_collisions(repo: pygit2.Repository, head: pygit2.Commit, merged: pygit2.Index,
                      dirty: dict[str, int], what: str) -> set[str]:
    """8004 if the in-memory result touches a path with local changes or an untracked file; the paths it touches."""
    touched = touched_paths(head, merged)
    blocked = sorted(shown(p) for p in touched if p in dirty and not is_submodule(repo, p))
    if blocked:
        raise CodePlaneError(ErrorCode.GIT_DIRTY_WORKTREE,
                             f"local changes would be overwritten by the {what}; commit or stash them first",
                             details={"paths": blocked[:200], "count": len(blocked)})
    return touched


def _default_message(repo: pygit2.Repository, ref: str) -> str:
    kind = "branch"
    if ref in repo.branches.remote and ref not in repo.branches.local:
        kind = "remote-tracking branch"
    elif f"refs/tags/{ref}" in repo.references:
        kind = "tag"
    elif ref not in repo.branches.local:
        kind = "commit"
    branch = (head_branch(repo) or "").removeprefix("refs/heads/")
    into = f" into {branch}" if branch and branch not in ("main", "master") else ""
    return f"Merge {kind} '{ref}'{into}\n"


def _commit_index(repo: pygit2.Repository, message: str, parents: list[pygit2.Oid], reflog: str,
                  author: pygit2.Signature | None = None) -> pygit2.Oid:
    """Commit the index onto HEAD; ``reflog`` is git's entry for it (``merge <ref>: Merge made by ...``)."""
    index = repo.index
    tree = index.write_tree()
    committer = user_signature(repo)
    oid = repo.create_commit(None, author or author_signature(repo), committer, message, tree, parents)
    advance_head(repo, oid, reflog)
    end_branch_state(repo)
    return oid


def _ran(hook: HookRun) -> list[HookRun]:
    return [hook] if hook.ran else []


def merge(repo: pygit2.Repository, ref: str, *, message: str | None = None, no_ff: bool = False,
          ff_only: bool = False, favor: Favor = "normal", hook_timeout_s: float = 300.0,
          allow_unrelated: bool = False, label_by_id: bool = False) -> MergeResult:
    """Merge ``ref`` into HEAD. ``label_by_id``: conflict markers name the commit's full id, as ``git pull`` writes
    them (``git merge`` writes the name given)."""
    dirty = require_clean_index(repo, "merge")
    theirs = resolve_commit(repo, ref)
    head = head_commit(repo)
    analysis = MergeAnalysis.FASTFORWARD if head is None else repo.merge_analysis(theirs.id)[0]
    if analysis & MergeAnalysis.UP_TO_DATE:
        return MergeResult(operation="merge", success=True, up_to_date=True, commit=str(head.id) if head else None)
    refuse_filtered(repo, tree_delta_paths(head.tree if head is not None else empty_tree(repo), theirs.tree), "merge")
    if analysis & MergeAnalysis.FASTFORWARD and not no_ff:
        touched: set[str] = set()
        if head is not None:
            merged = pygit2.Index()
            merged.read_tree(theirs.tree)
            touched = refuse_collisions(repo, head, merged, dirty, "merge")
            refuse_outside(repo, "the merge", "git merge", touched)
            write_orig_head(repo, head.id)
        # A submodule the target drops stays, as git leaves it.
        with keeping_cone(repo, touched), kept_submodules(repo, theirs.tree) as kept:
            checkout_tree(repo, theirs.tree, CheckoutStrategy.SAFE)
        branch = head_branch(repo)
        if branch is None:
            repo.references["HEAD"].set_target(theirs.id, f"merge {ref}: Fast-forward")
        else:
            repo.create_reference(branch, theirs.id, force=True, message=f"merge {ref}: Fast-forward")
        return MergeResult(operation="merge", success=True, fastforward=True, commit=str(theirs.id),
                           hooks=_ran(run_hook(repo, "post-merge", ("0",), timeout_s=hook_timeout_s)),
                           warnings=[warning(p) for p in kept])
    if ff_only:
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"cannot fast-forward to {ref!r}: histories diverged",
                             details={"ref": ref})
    assert head is not None
    base = repo.merge_base(head.id, theirs.id)
    if base is None and not allow_unrelated:
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"refusing to merge unrelated histories ({ref!r} shares no "
                             "commit with HEAD); pass allow_unrelated to merge them anyway", details={"ref": ref})
    ancestor = repo[base].peel(pygit2.Tree) if base is not None else repo[repo.TreeBuilder().write()]
    refuse_signing(repo, "merge (it would create a merge commit)")
    preview = repo.merge_trees(ancestor, head.tree, theirs.tree, favor=_FAVOR[favor])
    touched = refuse_collisions(repo, head, preview, dirty, "merge")
    refuse_outside(repo, "the merge", "git merge", touched)
    write_orig_head(repo, head.id)
    # libgit2 keeps the gitlink of a submodule the result drops when its directory is not empty: moved aside, the
    # gitlink goes as in git's merge, and the directory comes back untracked.
    with settling(repo, tree_delta_paths(head.tree, theirs.tree)), keeping_cone(repo, touched), \
            kept_submodules(repo, preview) as kept:
        repo.merge(theirs.id if label_by_id else _labelled(repo, ref, theirs), favor=_FAVOR[favor])
    warnings = [warning(p) for p in kept]
    text = message if message else _default_message(repo, ref)
    conflicts = read_conflicts(repo.index)
    # As git's MERGE_MSG: the message, a blank line, the conflicts comment (a pull's message has no final newline).
    body = text if text.endswith("\n") or not conflicts else text + "\n"
    (Path(repo.path) / "MERGE_MSG").write_text(body + conflicts_comment(conflicts), encoding="utf-8")
    if conflicts:
        return MergeResult(operation="merge", success=False, conflicts=conflicts, state=repo_state(repo),
                           message=text, warnings=warnings)
    hooks = _ran(run_hook(repo, "pre-merge-commit", timeout_s=hook_timeout_s))
    if hooks and not hooks[0].passed:
        return MergeResult(operation="merge", success=False, state=repo_state(repo), message=text, hooks=hooks,
                           warnings=warnings)
    # The hooks see what git writes: a given message as it is, its own without the final newline.
    edited = edit_message(repo, message or text.rstrip("\n"), file_name="MERGE_MSG", source=("merge",), verify=True,
                          timeout_s=hook_timeout_s)
    hooks += edited.hooks
    if edited.failed or not edited.text:
        return MergeResult(operation="merge", success=False, state=repo_state(repo), message=text, hooks=hooks,
                           warnings=warnings)
    oid = _commit_index(repo, edited.text, [head.id, theirs.id], f"merge {ref}: Merge made by the 'ort' strategy.")
    hooks += _ran(run_hook(repo, "post-merge", ("0",), timeout_s=hook_timeout_s))
    return MergeResult(operation="merge", success=True, commit=str(oid), message=edited.text, hooks=hooks,
                       warnings=warnings)


def _labelled(repo: pygit2.Repository, ref: str, theirs: pygit2.Commit) -> pygit2.Reference | pygit2.Oid:
    """What to merge: the reference ``ref`` names when it does, so that conflict markers say ``>>>>>>> feature`` as
    git's do (libgit2 labels a bare commit with its id), else the commit."""
    try:
        named = repo.lookup_reference_dwim(ref)
        return named if named.peel(pygit2.Commit).id == theirs.id else theirs.id
    except (KeyError, ValueError, pygit2.GitError):
        return theirs.id


def _apply_commit(repo: pygit2.Repository, ref: str, operation: Literal["cherry_pick", "revert"],
                  hook_timeout_s: float) -> MergeResult:
    dirty = require_clean_index(repo, operation.replace("_", "-"))
    head = require_head(repo)
    picked = resolve_commit(repo, ref)
    if len(picked.parents) != 1:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS,
                             f"{ref!r} is a {'merge' if picked.parents else 'root'} commit; pick a single-parent one",
                             details={"ref": ref})
    parent = picked.parents[0]
    if operation == "cherry_pick":
        preview = repo.merge_trees(parent.tree, head.tree, picked.tree)
        message = picked.message
    else:
        preview = repo.merge_trees(picked.tree, head.tree, parent.tree)
        message = f'Revert "{picked.message.split(chr(10), 1)[0]}"\n\nThis reverts commit {picked.id}.\n'
    refuse_signing(repo, operation.replace("_", "-"))
    refuse_filtered(repo, tree_delta_paths(parent.tree, picked.tree), operation.replace("_", "-"))
    touched = refuse_collisions(repo, head, preview, dirty, operation.replace("_", "-"))
    refuse_outside(repo, f"the {operation.replace('_', '-')}", f"git {operation.replace('_', '-')}", touched)
    with settling(repo, tree_delta_paths(parent.tree, picked.tree)), keeping_cone(repo, touched), \
            kept_submodules(repo, preview) as kept:  # as in merge(): the gitlink goes, the directory stays
        if operation == "cherry_pick":
            repo.cherrypick(picked.id)
        else:
            repo.revert(picked)
        git_style_labels(repo, picked)
    warnings = [warning(p) for p in kept]
    conflicts = read_conflicts(repo.index)
    if conflicts:
        return MergeResult(operation=operation, success=False, conflicts=conflicts, state=repo_state(repo),
                           message=message, warnings=warnings)
    if repo.index.write_tree() == head.tree.id:
        end_branch_state(repo)
        raise CodePlaneError(ErrorCode.GIT_NOTHING_TO_COMMIT,
                             f"{operation.replace('_', '-')} of {ref!r} changes nothing on this branch",
                             details={"ref": ref})
    edited = edit_message(repo, message, file_name="COMMIT_EDITMSG", source=("message",), verify=False,
                          timeout_s=hook_timeout_s, cleanup=False)
    hooks = list(edited.hooks)
    if edited.failed or not edited.text:
        return MergeResult(operation=operation, success=False, state=repo_state(repo), message=message, hooks=hooks,
                           warnings=warnings)
    author = picked.author if operation == "cherry_pick" else None
    summary = edited.text.split("\n", 1)[0]
    oid = _commit_index(repo, edited.text, [head.id], f"{operation.replace('_', '-')}: {summary}", author)
    hooks += _ran(run_hook(repo, "post-commit", timeout_s=hook_timeout_s))
    return MergeResult(operation=operation, success=True, commit=str(oid), message=edited.text, hooks=hooks,
                       warnings=warnings)


def cherry_pick(repo: pygit2.Repository, ref: str, *, hook_timeout_s: float = 300.0) -> MergeResult:
    return _apply_commit(repo, ref, "cherry_pick", hook_timeout_s)


def revert(repo: pygit2.Repository, ref: str, *, hook_timeout_s: float = 300.0) -> MergeResult:
    return _apply_commit(repo, ref, "revert", hook_timeout_s)
