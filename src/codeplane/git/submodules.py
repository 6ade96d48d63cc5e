"""``git_submodule``: status/list and init through pygit2; update, add, sync and remove through the
git CLI (§10 fallback: these may fetch with credentials, and pygit2's bindings are incomplete)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pygit2
from pygit2.enums import SubmoduleStatus

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.cli import failure, run_git
from codeplane.git.models import GitModel
from codeplane.git.pathspecs import refuse_option_like, shown, under
from codeplane.git.remotes import redact


class SubmoduleInfo(GitModel):
    name: str
    path: str
    url: str | None
    branch: str | None = None
    #: Commit recorded in the superproject's HEAD.
    head_oid: str | None = None
    #: Commit checked out in the submodule's own work tree (``None`` when not initialised).
    workdir_oid: str | None = None
    #: uninitialized | added | deleted | modified (other commit checked out) | dirty | clean
    state: str
    flags: list[str]


def _state(flags: SubmoduleStatus) -> str:
    if flags & SubmoduleStatus.INDEX_DELETED or flags & SubmoduleStatus.WD_DELETED:
        return "deleted"
    if flags & SubmoduleStatus.WD_UNINITIALIZED:
        return "uninitialized"
    if flags & SubmoduleStatus.INDEX_ADDED:
        return "added"
    if flags & (SubmoduleStatus.WD_MODIFIED | SubmoduleStatus.INDEX_MODIFIED):
        return "modified"
    if flags & (SubmoduleStatus.WD_INDEX_MODIFIED | SubmoduleStatus.WD_WD_MODIFIED | SubmoduleStatus.WD_UNTRACKED):
        return "dirty"
    return "clean"


def list_submodules(repo: pygit2.Repository, paths: Sequence[str] = ()) -> list[SubmoduleInfo]:
    out: list[SubmoduleInfo] = []
    for path in sorted(repo.listall_submodules()):
        if not under(path, paths):
            continue
        sub = repo.submodules[path]
        flags = repo.submodules.status(sub.name)
        workdir_oid = None
        if not flags & SubmoduleStatus.WD_UNINITIALIZED and flags & SubmoduleStatus.IN_WD:
            try:
                inner = sub.open()
                workdir_oid = None if inner.head_is_unborn else str(inner.head.target)
            except (pygit2.GitError, KeyError, ValueError):
                workdir_oid = None
        out.append(SubmoduleInfo(
            name=sub.name, path=shown(sub.path), url=redact(sub.url), branch=sub.branch or None,
            head_oid=str(sub.head_id) if sub.head_id is not None else None, workdir_oid=workdir_oid,
            state=_state(flags), flags=sorted(f.name or "" for f in SubmoduleStatus if f in flags),
        ))
    return out


def _known(repo: pygit2.Repository, paths: Sequence[str]) -> list[str]:
    known = set(repo.listall_submodules())
    unknown = [p for p in paths if p not in known]
    if unknown:
        raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"not submodules: {unknown}",
                             details={"paths": unknown, "submodules": sorted(known)})
    return list(paths)


def init(repo: pygit2.Repository, paths: Sequence[str]) -> None:
    """Copy URLs from ``.gitmodules`` into ``.git/config`` (``git submodule init``)."""
    repo.submodules.init(_known(repo, paths) or None)


def _run(root: Path, args: list[str], what: str, timeout_s: float) -> None:
    result = run_git(root, args, timeout_s=timeout_s)
    if not result.ok:
        raise failure(result, ErrorCode.GIT_ERROR, f"submodule {what} failed")


def update(repo: pygit2.Repository, root: Path, paths: Sequence[str], *, init_first: bool, recursive: bool,
           timeout_s: float) -> None:
    args = ["submodule", "update", *(["--init"] if init_first else []), *(["--recursive"] if recursive else []),
            "--", *_known(repo, paths)]
    _run(root, args, "update", timeout_s)


def sync(repo: pygit2.Repository, root: Path, paths: Sequence[str], *, recursive: bool, timeout_s: float) -> None:
    _run(root, ["submodule", "sync", *(["--recursive"] if recursive else []), "--", *_known(repo, paths)],
         "sync", timeout_s)


def add(root: Path, url: str, path: str, branch: str | None, *, timeout_s: float) -> None:
    refuse_option_like(url, "url")
    # git's submodule helper runs ``git add <path>`` without ``--``: ``-sm`` reached it as options (QA47 #6).
    refuse_option_like(path, "path")
    if branch is not None:
        refuse_option_like(branch, "branch")
    _run(root, ["submodule", "add", *(["-b", branch] if branch else []), "--", url, path], "add", timeout_s)


def remove(repo: pygit2.Repository, root: Path, path: str, *, timeout_s: float) -> None:
    """``git submodule deinit -f`` then ``git rm -f``: the submodule's work tree and gitlink go away."""
    _known(repo, [path])
    _run(root, ["submodule", "deinit", "-f", "--", path], "deinit", timeout_s)
    _run(root, ["rm", "-f", "-q", "--", path], "remove", timeout_s)
