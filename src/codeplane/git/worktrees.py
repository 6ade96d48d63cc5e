"""``git_worktree``: list and add through pygit2; remove, lock, unlock and prune through the git CLI
(§10 fallback). New worktrees go under ``.codeplane/worktrees/<name>`` unless a path inside the
repository is given (paths outside it are refused with 5001, like every path argument)."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import STATE_DIR_NAME
from codeplane.git.branches import check_branch_name
from codeplane.git.cli import failure, run_git
from codeplane.git.models import GitModel
from codeplane.git.pathspecs import raw_ref, repo_path, shown
from codeplane.git.revisions import resolve_commit

WORKTREES_DIR = f"{STATE_DIR_NAME}/worktrees"


class WorktreeInfo(GitModel):
    #: ``None`` for the main work tree.
    name: str | None
    path: str
    head: str | None
    branch: str | None
    is_main: bool = False
    locked: bool = False
    prunable: bool = False


def _head(path: str) -> tuple[str | None, str | None]:
    try:
        repo = pygit2.Repository(path)
    except (pygit2.GitError, KeyError, ValueError):
        return None, None
    if repo.head_is_unborn:
        return None, None
    branch = None if repo.head_is_detached else repo.head.shorthand
    return str(repo.head.target), branch


def common_dir(repo: pygit2.Repository) -> Path:
    """The repository's own git directory, shared by all its worktrees (a linked worktree's ``.git/worktrees/<n>``
    names it in ``commondir``)."""
    own = Path(repo.path).resolve()
    pointer = own / "commondir"
    return (own / pointer.read_text(encoding="utf-8").strip()).resolve() if pointer.is_file() else own


def main_worktree(repo: pygit2.Repository) -> Path | None:
    """The main work tree (the common directory's), ``None`` for a bare repository: not the served work tree when
    that is a linked worktree."""
    common = common_dir(repo)
    if common == Path(repo.path).resolve():
        return Path(repo.workdir).resolve() if repo.workdir else None
    try:
        bare = pygit2.Repository(str(common)).is_bare
    except (pygit2.GitError, KeyError, ValueError):
        bare = True
    return None if bare else common.parent


def list_worktrees(repo: pygit2.Repository, root: Path) -> list[WorktreeInfo]:
    """The main work tree (as ``git worktree list``, whichever worktree serves), then the linked ones by name."""
    out: list[WorktreeInfo] = []
    main = main_worktree(repo)
    if main is not None:
        # The path as the caller knows it when the main work tree is the served one (``root`` unresolved).
        listed = root if root.resolve() == main else main
        head, branch = _head(str(listed))
        out.append(WorktreeInfo(name=None, path=str(listed), head=head, branch=branch, is_main=True))
    for name in sorted(repo.list_worktrees()):
        path, prunable = _linked(repo, name)
        wt_head, wt_branch = _head(path)
        out.append(WorktreeInfo(name=name, path=path, head=wt_head, branch=wt_branch,
                                locked=(Path(repo.path) / "worktrees" / name / "locked").exists(),
                                prunable=prunable))
    return out


def _linked(repo: pygit2.Repository, name: str) -> tuple[str, bool]:
    """(work tree path, prunable) of linked worktree ``name``. pygit2's ``lookup_worktree`` takes only a UTF-8
    name (a directory ``$'w\\xfe'`` made every listing 8001), so such a one is read as git keeps it: its
    ``gitdir`` file names the work tree's ``.git``, and it is prunable once that is gone."""
    try:
        wt = repo.lookup_worktree(name)
    except UnicodeEncodeError:
        admin = common_dir(repo) / "worktrees" / name
        gitdir = Path(os.fsdecode((admin / "gitdir").read_bytes().strip()))
        return str(gitdir.parent), not gitdir.exists() and not (admin / "locked").exists()
    return wt.path, bool(wt.is_prunable)


def lookup(repo: pygit2.Repository, name: str) -> tuple[str, str]:
    """(name, work tree path) of linked worktree ``name``, both as git has them (a name that is not UTF-8 may be
    given as listings show it, ``w\\xfe``); 8002 when there is none."""
    raw = raw_ref(name)
    if raw not in repo.list_worktrees():
        raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"no worktree {name!r}",
                             details={"worktree": name, "worktrees": sorted(map(shown, repo.list_worktrees()))})
    return raw, _linked(repo, raw)[0]


def check_worktree_name(name: str) -> str:
    """A name git can give both a new branch and one directory (``.git/worktrees/<name>``, and the default
    ``.codeplane/worktrees/<name>``); 1003 otherwise, before anything is created (a slash made the branch, then
    failed; a name too long for a file name was a 9001 "File name too long")."""
    check_branch_name(name)
    if "/" in name:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"a worktree name is one directory name, without '/': "
                             f"{name!r}", details={"field": "name", "value": name})
    return name


def add(repo: pygit2.Repository, root: Path, name: str, path: str | None, ref: str | None) -> WorktreeInfo:
    """Create worktree ``name`` checking out branch ``ref`` (an existing local branch), or a new branch
    ``name`` at ``ref``/HEAD."""
    check_worktree_name(name)
    if name in repo.list_worktrees():
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"worktree {name!r} already exists",
                             details={"worktree": name})
    rel = repo_path(root, path, "path") if path else f"{WORKTREES_DIR}/{name}"
    target = root / rel
    if target.exists() and any(target.iterdir()):
        raise CodePlaneError(ErrorCode.FILE_EXISTS, f"{rel} exists and is not empty", details={"path": rel})
    target.parent.mkdir(parents=True, exist_ok=True)
    branch = repo.branches.local.get(ref) if ref else None
    if branch is None:
        start = resolve_commit(repo, ref or "HEAD")
        if name in repo.branches.local:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"branch {name!r} already exists; pass it as ref",
                                 details={"branch": name})
        branch = repo.branches.local.create(name, start)
    elif branch.is_checked_out():
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"branch {ref!r} is already checked out elsewhere",
                             details={"branch": ref})
    wt = repo.add_worktree(name, str(target), branch)
    head, head_branch = _head(wt.path)
    return WorktreeInfo(name=name, path=wt.path, head=head, branch=head_branch)


def _cli(root: Path, args: list[str], what: str, timeout_s: float) -> None:
    result = run_git(root, ["worktree", *args], timeout_s=timeout_s)
    if not result.ok:
        raise failure(result, ErrorCode.GIT_ERROR, f"worktree {what} failed")


def lookup_info(repo: pygit2.Repository, root: Path, name: str) -> tuple[WorktreeInfo, str]:
    """The listed worktree ``name`` (8002 when there is none, as ``lookup``) and its path as git has it (the
    info's is the display form)."""
    raw, path = lookup(repo, name)
    return next(w for w in list_worktrees(repo, root) if w.name == shown(raw)), path


def refuse_served(root: Path, info: WorktreeInfo, path: str) -> None:
    """8005 for removing the worktree this server serves (at ``path``): git would delete the directory under the
    running server (its index and ``.codeplane`` state with it), which then answered 8001 and kept serving a
    deleted tree."""
    if Path(path).resolve() == root.resolve():
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"worktree {info.name!r} is the one this server serves; "
                             "stop its server (cpl down) and remove it from another worktree's server or with git "
                             "worktree remove", details={"worktree": info.name, "path": info.path})


def remove(repo: pygit2.Repository, root: Path, name: str, *, force: bool, timeout_s: float) -> WorktreeInfo:
    info, path = lookup_info(repo, root, name)
    refuse_served(root, info, path)
    _cli(root, ["remove", *(["--force"] if force else []), "--", path], "remove", timeout_s)
    return info


def lock(repo: pygit2.Repository, root: Path, name: str, reason: str | None, *, timeout_s: float) -> None:
    _, path = lookup(repo, name)
    _cli(root, ["lock", *(["--reason", reason] if reason else []), "--", path], "lock", timeout_s)


def unlock(repo: pygit2.Repository, root: Path, name: str, *, timeout_s: float) -> None:
    _, path = lookup(repo, name)
    _cli(root, ["unlock", "--", path], "unlock", timeout_s)


def prune(root: Path, *, timeout_s: float) -> None:
    _cli(root, ["prune"], "prune", timeout_s)
