"""Resolving revisions, HEAD and signatures, with catalog errors instead of pygit2 exceptions."""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.cli import failure, run_git
from codeplane.git.models import Person
from codeplane.git.pathspecs import check_ref, git_name, raw_ref, shown

#: Used for CodePlane's own bookkeeping commits when the repository has no user configured.
FALLBACK_NAME = "CodePlane"
FALLBACK_EMAIL = "codeplane@localhost"


def resolve_object(repo: pygit2.Repository, ref: str, field: str = "ref") -> pygit2.Object:
    """The object ``ref`` names; a name that is not UTF-8 may be given as the answers show it (``br\\xff``)."""
    check_ref(ref, field)
    try:
        return repo.revparse_single(git_name(raw_ref(ref)))  # type: ignore[arg-type]  # (bytes is taken too)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"{field} {ref!r} does not name a commit or object",
                             details={"field": field, "ref": ref}) from exc


def resolve_commit(repo: pygit2.Repository, ref: str, field: str = "ref") -> pygit2.Commit:
    """The commit ``ref`` names (branches, tags, oids, ``HEAD~2``...); 8002 if there is none."""
    obj = resolve_object(repo, ref, field)
    try:
        commit = obj.peel(pygit2.Commit)
    except (ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"{field} {ref!r} is not a commit",
                             details={"field": field, "ref": ref}) from exc
    assert isinstance(commit, pygit2.Commit)
    return commit


def head_commit(repo: pygit2.Repository) -> pygit2.Commit | None:
    """HEAD's commit, or ``None`` on an unborn branch (empty repository)."""
    if repo.head_is_unborn:
        return None
    commit = repo.head.peel(pygit2.Commit)
    assert isinstance(commit, pygit2.Commit)
    return commit


def require_head(repo: pygit2.Repository) -> pygit2.Commit:
    commit = head_commit(repo)
    if commit is None:
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "HEAD has no commit yet (empty repository)")
    return commit


def head_branch(repo: pygit2.Repository) -> str | None:
    """Full name of the branch HEAD points to (also when unborn); ``None`` when detached."""
    head = repo.references.get("HEAD")
    if head is None:
        return None
    target = head.target
    return target if isinstance(target, str) else None


def empty_tree(repo: pygit2.Repository) -> pygit2.Tree:
    tree = repo[repo.TreeBuilder().write()]
    assert isinstance(tree, pygit2.Tree)
    return tree


def head_tree(repo: pygit2.Repository) -> pygit2.Tree:
    commit = head_commit(repo)
    return commit.tree if commit is not None else empty_tree(repo)


def iso_time(seconds: int, offset_minutes: int) -> str:
    """``git log --format=%aI`` rendering of a signature time (strict ISO 8601 with the recorded offset)."""
    return datetime.fromtimestamp(seconds, tz=timezone(timedelta(minutes=offset_minutes))).isoformat()


def person(sig: pygit2.Signature) -> Person:
    return Person(name=sig.name, email=sig.email, time=iso_time(sig.time, sig.offset))


def user_signature(repo: pygit2.Repository, role: str = "committer") -> pygit2.Signature:
    """Who commits (``role`` committer) or authors: ``GIT_COMMITTER_NAME``/``_EMAIL`` (``GIT_AUTHOR_*``) from the
    environment, as git reads them, else the configured user (``user.name``/``user.email``); 8001 explaining how to
    set it if neither says."""
    prefix = f"GIT_{role.upper()}_"
    name, email = os.environ.get(prefix + "NAME"), os.environ.get(prefix + "EMAIL")
    try:
        default = repo.default_signature
    except (KeyError, pygit2.GitError) as exc:
        if name and email:
            now = time.time()
            return pygit2.Signature(name, email, int(now), (time.localtime(now).tm_gmtoff or 0) // 60)
        raise CodePlaneError(
            ErrorCode.GIT_ERROR,
            "no git identity configured: set user.name and user.email (git config) or pass author",
            details={"missing": ["user.name", "user.email"]},
        ) from exc
    if name or email:
        return pygit2.Signature(name or default.name, email or default.email, default.time, default.offset)
    return default


def author_signature(repo: pygit2.Repository) -> pygit2.Signature:
    """The author of a new commit: ``GIT_AUTHOR_*`` from the environment, else the committer's identity."""
    if os.environ.get("GIT_AUTHOR_NAME") or os.environ.get("GIT_AUTHOR_EMAIL"):
        return user_signature(repo, "author")
    return user_signature(repo)


def bookkeeping_signature(repo: pygit2.Repository) -> pygit2.Signature:
    """The user if configured, else a fixed CodePlane identity (recovery points must never fail on this)."""
    try:
        return repo.default_signature
    except (KeyError, pygit2.GitError):
        return pygit2.Signature(FALLBACK_NAME, FALLBACK_EMAIL)


def advance_head(repo: pygit2.Repository, oid: pygit2.Oid, reflog: str) -> None:
    """Point HEAD's branch (a detached HEAD itself, an unborn branch created) at a new commit, logged as ``reflog``
    the way git words it (``commit: <summary>``, ``cherry-pick: <summary>``); ``set_head`` would log a checkout."""
    branch = head_branch(repo)
    if branch is None:
        repo.references["HEAD"].set_target(oid, reflog)
    elif branch in repo.references:
        repo.references[branch].set_target(oid, reflog)
    else:
        repo.create_reference(branch, oid, message=reflog)


def has_ref(repo: pygit2.Repository, name: str) -> bool:
    """Whether ref ``name`` exists. pygit2 fails to word its "not found" for a name that is not UTF-8
    (UnicodeDecodeError), so such a name is looked for among the refs instead."""
    if isinstance(git_name(name), str):
        return name in repo.references
    return name in set(repo.references)


def put_ref(repo: pygit2.Repository, name: str, oid: pygit2.Oid) -> None:
    """Create or move ref ``name`` to ``oid``. pygit2 creates refs from UTF-8 names only (it takes no bytes there),
    so one that is not UTF-8 (``git branch $'br\\xff'``, restored from a recovery point) is written by
    ``git update-ref``."""
    if isinstance(git_name(name), str):
        repo.references.create(name, oid, force=True)
        return
    result = run_git(Path(repo.path), ["update-ref", name, str(oid)], timeout_s=30)
    if not result.ok:
        raise failure(result, ErrorCode.GIT_ERROR, "update-ref failed", ref=shown(name))


def write_orig_head(repo: pygit2.Repository, oid: pygit2.Oid) -> None:
    """``ORIG_HEAD``, as git sets it before a reset, merge or rebase moves HEAD: ``git reset --hard ORIG_HEAD``
    undoes the operation, and a stale one left by an earlier git command would point elsewhere."""
    repo.references.create("ORIG_HEAD", oid, force=True)


def oid_str(oid: pygit2.Oid | None) -> str | None:
    return None if oid is None else str(oid)
