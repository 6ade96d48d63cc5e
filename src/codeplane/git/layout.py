"""Write operations that run the git CLI on the repository's layout: submodule and worktree changes, and
re-storing a dropped stash when a recovery point is restored (libgit2 cannot append to the stash reflog)."""

from __future__ import annotations

from collections.abc import Sequence

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import recovery, submodules, worktrees
from codeplane.git import stash as stashing
from codeplane.git._session import Write, require_confirm
from codeplane.git.cli import failure, run_git
from codeplane.git.recovery import RecoveryPoint
from codeplane.git.results import SubmoduleResult, WorktreeResult


def _invalid(field: str, message: str) -> CodePlaneError:
    return CodePlaneError(ErrorCode.INVALID_ARGUMENTS, message, details={"field": field})


def submodule_change(w: Write, action: str, paths: Sequence[str], *, url: str | None, branch: str | None,
                     recursive: bool, confirm: bool, timeout_s: float) -> SubmoduleResult:
    # The git CLI writes submodule work trees the effect tracker does not walk (they are not the superproject's
    # files): each submodule whose checked-out commit or state moved is named as changed, or a clone and checkout
    # answered no_op with an empty effect.
    before = {s.path: (s.workdir_oid, s.state) for s in submodules.list_submodules(w.repo, paths)}
    if action == "init":
        submodules.init(w.repo, paths)
    elif action == "update":
        submodules.update(w.repo, w.root, paths, init_first=True, recursive=recursive, timeout_s=timeout_s)
    elif action == "sync":
        submodules.sync(w.repo, w.root, paths, recursive=recursive, timeout_s=timeout_s)
    elif action in ("add", "remove"):
        if len(paths) != 1:
            raise _invalid("paths", f"{action} takes exactly one path")
        if action == "add":
            if not url:
                raise _invalid("url", "add needs url")
            submodules.add(w.root, url, paths[0], branch, timeout_s=timeout_s)
        else:
            require_confirm(confirm, f"removing submodule {paths[0]}", "its work tree and local changes")
            submodules.remove(w.repo, w.root, paths[0], timeout_s=timeout_s)
    else:
        raise _invalid("action", f"unknown submodule action {action!r}")
    w.repo = type(w.repo)(str(w.root))  # the CLI changed .gitmodules/config behind this handle
    listed = submodules.list_submodules(w.repo, paths)
    moved = {s.path for s in listed if before.get(s.path) != (s.workdir_oid, s.state)}
    w.extra_paths = tuple(sorted(set(w.extra_paths) | moved))
    return SubmoduleResult(action=action, submodules=listed, effect=w.effect())


def worktree_change(w: Write, action: str, *, name: str | None, path: str | None, ref: str | None, force: bool,
                    reason: str | None, confirm: bool, timeout_s: float) -> WorktreeResult:
    if action == "prune":
        worktrees.prune(w.root, timeout_s=timeout_s)
        return WorktreeResult(action=action, effect=w.effect())
    if not name:
        raise _invalid("name", f"{action} needs name")
    info = None
    if action == "add":
        info = worktrees.add(w.repo, w.root, name, path, ref)
    elif action == "remove":
        if force:
            info, path = worktrees.lookup_info(w.repo, w.root, name)
            worktrees.refuse_served(w.root, info, path)  # a refusal asks no confirm first, and records no point
            require_confirm(confirm, f"force-removing worktree {name}", "its uncommitted changes")
            # The worktree's own state, recorded through its own repository (refs are shared): its files are the
            # point's tree, restorable into any checkout (``git checkout <point> -- .``).
            w.recovery_point = recovery.record(pygit2.Repository(path), f"worktree-remove-{info.name}")
        info = worktrees.remove(w.repo, w.root, name, force=force, timeout_s=timeout_s)
    elif action == "lock":
        worktrees.lock(w.repo, w.root, name, reason, timeout_s=timeout_s)
    elif action == "unlock":
        worktrees.unlock(w.repo, w.root, name, timeout_s=timeout_s)
    else:
        raise _invalid("action", f"unknown worktree action {action!r}")
    if info is None:
        info = worktrees.lookup_info(w.repo, w.root, name)[0]
    return WorktreeResult(action=action, worktree=info, effect=w.effect())


def restore_stash(w: Write, point: RecoveryPoint) -> bool:
    """Put a stash dropped before ``point`` back on the stash list; True if it was re-stored."""
    oid = point.extras.get("stash")
    if not oid or oid in {s.oid for s in stashing.list_stashes(w.repo)}:
        return False
    result = run_git(w.root, ["stash", "store", "-m", "restored by CodePlane", oid], timeout_s=60)
    if not result.ok:
        raise failure(result, ErrorCode.GIT_ERROR, "re-storing the dropped stash failed")
    return True
