"""``git_stash``: push, list, apply, pop and drop stash entries.

apply/pop stop with 8004 (nothing changed) when the stash would overwrite local changes; otherwise
conflicts are written to the index and files like ``git stash apply`` does and returned as data. A pop
with conflicts keeps the entry (as git does). The service records a recovery point before a drop. In a sparse
checkout a push is built as git builds it (libgit2's records the files outside the cone as deleted and writes them
back), and an apply keeps the cone (``git/sparse.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import pygit2
from pygit2.enums import FileStatus

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import sparse
from codeplane.git._workdir import settling, tree_delta_paths
from codeplane.git.conflicts import read_conflicts
from codeplane.git.filters import refuse_filtered
from codeplane.git.gitlinks import is_submodule, kept_submodules
from codeplane.git.models import Conflict, GitModel
from codeplane.git.pathspecs import shown, under
from codeplane.git.revisions import empty_tree, require_head, user_signature
from codeplane.git.stash_paths import push_paths, staged_gitlinks
from codeplane.git.status import dirty_paths


class StashEntry(GitModel):
    index: int
    name: str
    oid: str
    message: str


def list_stashes(repo: pygit2.Repository) -> list[StashEntry]:
    return [StashEntry(index=i, name=f"stash@{{{i}}}", oid=str(s.commit_id), message=s.message)
            for i, s in enumerate(repo.listall_stashes())]


def entry(repo: pygit2.Repository, index: int) -> StashEntry:
    stashes = list_stashes(repo)
    if not 0 <= index < len(stashes):
        raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"no stash@{{{index}}} ({len(stashes)} stash entries)",
                             details={"index": index, "count": len(stashes)})
    return stashes[index]


def push(repo: pygit2.Repository, *, message: str | None, include_untracked: bool, keep_index: bool,
         paths: Sequence[str]) -> tuple[StashEntry, list[str]]:
    """Stash the local changes; the entry and the submodule directories left in place (a staged submodule HEAD
    does not have: its gitlink is stashed, its directory stays, as git leaves it)."""
    head = require_head(repo)
    conflicts = read_conflicts(repo.index)
    if conflicts:  # git: "needs merge"; libgit2 would fail later with a generic error
        raise CodePlaneError(ErrorCode.GIT_CONFLICT, "resolve and stage the conflicted files before stashing",
                             details={"conflicts": [c.model_dump() for c in conflicts]})
    refuse_filtered(repo, (p for p, flag in dirty_paths(repo).items() if under(p, paths) and
                           (include_untracked or not flag & FileStatus.WT_NEW)), "stash")
    if paths or include_untracked or sparse.active(repo) or staged_gitlinks(repo, head):
        # libgit2's path-limited stash resets every file, and its untracked stash deletes each untracked directory
        # whole, ignored files in it included (``git stash -u`` keeps them); in a sparse checkout it stashes the
        # files outside the cone as deleted and writes them all back; a staged submodule it cannot stash at all:
        # each is built as git builds it.
        sparse.refuse_outside(repo, "the stash", "git stash")
        with settling(repo, dirty_paths(repo)):
            _, kept = push_paths(repo, paths, message=message, include_untracked=include_untracked,
                                 keep_index=keep_index)
        return entry(repo, 0), kept
    try:
        with settling(repo, dirty_paths(repo)):
            repo.stash(user_signature(repo), message, keep_index=keep_index, include_untracked=include_untracked)
    except (KeyError, pygit2.GitError) as exc:
        if "nothing to stash" in str(exc).lower() or isinstance(exc, KeyError):
            raise CodePlaneError(ErrorCode.GIT_NOTHING_TO_COMMIT, "no local changes to stash",
                                 details={"include_untracked": include_untracked}) from exc
        raise
    return entry(repo, 0), []


def _stash_paths(repo: pygit2.Repository, oid: str) -> set[str]:
    commit = repo[pygit2.Oid(hex=oid)].peel(pygit2.Commit)
    paths = tree_delta_paths(commit.parents[0].tree, commit.tree)
    if len(commit.parents) > 2:  # the untracked-files commit
        paths.update(d.new_file.path for d in empty_tree(repo).diff_to_tree(commit.parents[2].tree).deltas)
    return paths


def apply(repo: pygit2.Repository, index: int, *, pop: bool, reinstate_index: bool) -> tuple[list[Conflict], bool]:
    """Apply (and for ``pop`` drop when clean) stash ``index``; returns (conflicts, dropped)."""
    stash = entry(repo, index)
    conflicts = read_conflicts(repo.index)
    if conflicts:  # git: "needs merge"; libgit2 failed with a generic error
        raise CodePlaneError(ErrorCode.GIT_CONFLICT, "resolve and stage the conflicted files before applying a stash",
                             details={"conflicts": [c.model_dump() for c in conflicts]})
    dirty = dirty_paths(repo)
    stashed = _stash_paths(repo, stash.oid)
    # A submodule's own changes are never written over (git leaves its work tree alone).
    blocked = sorted(shown(p) for p in stashed if p in dirty and not is_submodule(repo, p))
    if blocked:
        raise CodePlaneError(ErrorCode.GIT_DIRTY_WORKTREE, "local changes would be overwritten by the stash; "
                             "commit or stash them first", details={"paths": blocked[:200], "count": len(blocked)})
    refuse_filtered(repo, stashed, "stash apply")
    sparse.refuse_outside(repo, "the stash apply", "git stash apply", stashed)
    # A stashed gitlink coming back over the directory the push left: libgit2 refused it (untracked files), git
    # takes the directory as the submodule's work tree again.
    with settling(repo, stashed), sparse.keeping_cone(repo, stashed), kept_submodules(repo, _result(repo, stash)):
        repo.stash_apply(index, reinstate_index=reinstate_index)
    conflicts = read_conflicts(repo.index)
    dropped = False
    if pop and not conflicts:
        repo.stash_drop(index)
        dropped = True
    return conflicts, dropped


def _result(repo: pygit2.Repository, stash: StashEntry) -> pygit2.Index:
    """The stash's changes merged into the index, in memory (what the apply writes)."""
    commit = repo[pygit2.Oid(hex=stash.oid)].peel(pygit2.Commit)
    ours = repo[repo.index.write_tree()].peel(pygit2.Tree)
    return repo.merge_trees(commit.parents[0].tree, ours, commit.tree)


def drop(repo: pygit2.Repository, index: int) -> StashEntry:
    stash = entry(repo, index)
    repo.stash_drop(index)
    return stash
