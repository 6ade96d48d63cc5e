"""``git_branch``: list, create, rename and delete branches.

Deleting a branch whose commits are not reachable from HEAD or from its upstream would lose them: the
caller must confirm, and the tip is saved in a recovery point first (the service does both).
"""

from __future__ import annotations

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import NAME_MAX
from codeplane.git.models import GitModel
from codeplane.git.pathspecs import check_ref, git_name, raw_ref
from codeplane.git.revisions import head_commit, resolve_commit


class BranchInfo(GitModel):
    name: str
    #: Full ref name (``refs/heads/x`` or ``refs/remotes/origin/x``).
    ref: str
    oid: str
    remote: bool
    is_head: bool = False
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None


#: A ref is a file, written through ``<name>.lock``: no part of a branch name can be longer than this.
MAX_NAME_PART_BYTES = NAME_MAX - len(".lock")


def check_branch_name(name: str, field: str = "name") -> str:
    """A new local branch name git would accept; 1003 otherwise."""
    check_ref(name, field)
    longest = max(len(part.encode("utf-8", errors="surrogateescape")) for part in name.split("/"))
    if longest > MAX_NAME_PART_BYTES:  # (it was 9001: OSError "File name too long")
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{field}: a branch name's parts are at most "
                             f"{MAX_NAME_PART_BYTES} bytes (each is a file name); this one has {longest}",
                             details={"field": field, "limit": MAX_NAME_PART_BYTES, "length": longest})
    if name.startswith("refs/") or not pygit2.reference_is_valid_name(f"refs/heads/{name}") or name == "HEAD":
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{field} {name!r} is not a valid branch name",
                             details={"field": field, "value": name})
    return name


def local_branch(repo: pygit2.Repository, name: str) -> pygit2.Branch:
    """Local branch ``name`` (also as ``refs/heads/<name>``, and in the ``\\xNN`` form of a name that is not
    UTF-8); 8002 when there is none."""
    check_ref(name, "name")
    branch = repo.branches.local.get(git_name(raw_ref(name).removeprefix("refs/heads/")))  # type: ignore[arg-type]
    if branch is None:
        raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"no local branch {name!r}",
                             details={"branch": name, "branches": sorted(repo.branches.local)[:50]})
    return branch


def _info(repo: pygit2.Repository, branch: pygit2.Branch, remote: bool) -> BranchInfo:
    upstream_name = ahead = behind = None
    if not remote:
        try:
            upstream = branch.upstream
        except (KeyError, ValueError, pygit2.GitError):
            upstream = None
        if upstream is not None:
            upstream_name = upstream.shorthand
            ahead, behind = repo.ahead_behind(branch.target, upstream.target)
    target = branch.resolve().target
    return BranchInfo(name=branch.shorthand, ref=branch.name, oid=str(target), remote=remote,
                      is_head=(not remote and branch.is_head()), upstream=upstream_name, ahead=ahead, behind=behind)


def list_branches(repo: pygit2.Repository, *, remotes: bool = False) -> list[BranchInfo]:
    """Local branches (and remote-tracking ones if asked), sorted by full ref name like ``git branch -a``."""
    out = [_info(repo, repo.branches.local[git_name(n)], False)  # type: ignore[index]
           for n in repo.branches.local]
    if remotes:
        for name in repo.branches.remote:
            branch = repo.branches.remote[git_name(name)]  # type: ignore[index]
            if isinstance(branch.target, str):
                continue  # refs/remotes/origin/HEAD is a symbolic alias, as git branch -a shows it
            out.append(_info(repo, branch, True))
    return sorted(out, key=lambda b: b.ref)


def create(repo: pygit2.Repository, name: str, ref: str | None, force: bool) -> BranchInfo:
    check_branch_name(name)
    if not force and name in repo.branches.local:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"branch {name!r} already exists (force to reset it)",
                             details={"branch": name})
    if force and repo.branches.local.get(name) is not None and repo.branches.local[name].is_head():
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"cannot force-reset the checked-out branch {name!r}")
    commit = resolve_commit(repo, ref) if ref is not None else head_commit(repo)
    if commit is None:
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "HEAD has no commit yet; commit first")
    branch = repo.branches.local.create(name, commit, force=force)
    return _info(repo, branch, False)


def rename(repo: pygit2.Repository, name: str, new_name: str, force: bool) -> BranchInfo:
    branch = local_branch(repo, name)
    check_branch_name(new_name, "new_name")
    if not force and new_name in repo.branches.local:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"branch {new_name!r} already exists",
                             details={"branch": new_name})
    renamed = branch.rename(new_name, force)
    return _info(repo, renamed, False)


def is_merged(repo: pygit2.Repository, branch: pygit2.Branch) -> bool:
    """Whether the branch tip is reachable from HEAD or from the branch's upstream (git's rule for -d)."""
    tip = branch.peel(pygit2.Commit).id
    bases = []
    head = head_commit(repo)
    if head is not None:
        bases.append(head.id)
    try:
        upstream = branch.upstream
    except (KeyError, ValueError, pygit2.GitError):
        upstream = None
    if upstream is not None:
        bases.append(upstream.peel(pygit2.Commit).id)
    return any(base == tip or repo.descendant_of(base, tip) for base in bases)


def delete(repo: pygit2.Repository, name: str) -> BranchInfo:
    """Delete a local branch (the caller has already decided it may); 8005 for the current branch."""
    branch = local_branch(repo, name)
    if branch.is_head():
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"cannot delete the checked-out branch {name!r}",
                             details={"branch": name})
    info = _info(repo, branch, False)
    branch.delete()
    return info

