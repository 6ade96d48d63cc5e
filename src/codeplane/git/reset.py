"""``git_reset``: move HEAD (and the current branch) to a commit, as soft, mixed or hard.

soft keeps index and working tree; mixed resets the index; hard also overwrites the working tree (untracked files
stay). ORIG_HEAD names the commit HEAD left, as git's. Mixed or hard ends a merge, cherry-pick or revert in
progress and nothing more, as git's reset (:func:`codeplane.git.branch_state.libgit2_reset`): a rebase, a bisect
and the rest of a ``git cherry-pick A B`` sequence the git CLI started go on. The service records a recovery point
before a hard reset. A hard reset that would write a file with a filter driver is refused
(:mod:`codeplane.git.filters`).
"""

from __future__ import annotations

from typing import Literal

import pygit2
from pygit2.enums import ResetMode

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git._workdir import settling, tree_delta_paths
from codeplane.git.branch_state import libgit2_reset
from codeplane.git.conflicts import repo_state
from codeplane.git.filters import refuse_filtered
from codeplane.git.gitlinks import kept_submodules
from codeplane.git.revisions import head_commit, resolve_commit, write_orig_head
from codeplane.git.sparse import refuse_sparse
from codeplane.git.status import dirty_paths

Mode = Literal["soft", "mixed", "hard"]
_MODES = {"soft": ResetMode.SOFT, "mixed": ResetMode.MIXED, "hard": ResetMode.HARD}


def target(repo: pygit2.Repository, ref: str | None, mode: Mode) -> pygit2.Commit:
    """The commit :func:`reset` would move to, or the refusal it would give (8005, 8002) before changing anything."""
    if head_commit(repo) is None:
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "HEAD has no commit yet; there is nothing to reset to")
    if mode == "soft" and repo_state(repo) == "merge":
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "cannot soft-reset in the middle of a merge; use mixed "
                             "or hard", details={"state": "merge"})
    commit = resolve_commit(repo, ref or "HEAD")
    if mode != "soft":  # libgit2 rewrites the index without the skip-worktree bits (and hard, the files)
        refuse_sparse(repo, f"a {mode} reset")
    if mode == "hard":
        refuse_filtered(repo, _rewritten(repo, commit), "hard reset")
    return commit


def _rewritten(repo: pygit2.Repository, target_: pygit2.Commit) -> set[str]:
    """What a hard reset writes in the work tree: the dirty paths and what differs between the two commits."""
    head = head_commit(repo)
    assert head is not None  # target() refused an unborn HEAD
    return set(dirty_paths(repo)) | tree_delta_paths(head.tree, target_.tree)


def reset(repo: pygit2.Repository, ref: str | None, mode: Mode) -> tuple[pygit2.Commit, list[str]]:
    """Reset to ``ref`` (default HEAD); returns the commit HEAD now names and the submodule directories a hard
    reset left in place (the target drops them; git leaves them too, :mod:`codeplane.git.gitlinks`)."""
    target_ = target(repo, ref, mode)
    head = head_commit(repo)
    assert head is not None  # target() refused an unborn HEAD
    rewritten = _rewritten(repo, target_) if mode == "hard" else set()  # only a hard reset writes the work tree
    write_orig_head(repo, head.id)
    kept: list[str] = []
    with settling(repo, rewritten):
        if mode == "hard":
            with kept_submodules(repo, target_.tree) as kept, libgit2_reset(repo):
                repo.reset(target_.id, _MODES[mode])
        elif mode == "mixed":
            with libgit2_reset(repo):
                repo.reset(target_.id, _MODES[mode])
        else:
            repo.reset(target_.id, _MODES[mode])
    return target_, kept
