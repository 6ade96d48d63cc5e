"""Tags: list (``git tag -l``), create (lightweight, or annotated with a message) and delete."""

from __future__ import annotations

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.log import MESSAGE_LIMIT
from codeplane.git.models import GitModel, Person
from codeplane.git.pathspecs import check_ref, raw_ref
from codeplane.git.revisions import person, resolve_commit, user_signature

TAG_PREFIX = "refs/tags/"


class TagInfo(GitModel):
    name: str
    #: The tag ref's own target: the tag object for annotated tags, else the commit.
    oid: str
    #: The commit (or other object) the tag finally points to.
    target: str
    annotated: bool
    message: str | None = None
    #: The message was cut at ``MESSAGE_LIMIT`` characters, as a log cuts a commit's: ``git_inspect show`` of the
    #: tag has it whole, in parts (a one-line message of megabytes made a listing's part as long).
    message_truncated: bool = False
    tagger: Person | None = None


def _info(repo: pygit2.Repository, name: str) -> TagInfo:
    ref = repo.references[TAG_PREFIX + name]
    obj = repo[ref.target]
    if isinstance(obj, pygit2.Tag):
        peeled = obj.peel(None)
        return TagInfo(name=name, oid=str(obj.id), target=str(peeled.id), annotated=True,
                       message=obj.message[:MESSAGE_LIMIT], message_truncated=len(obj.message) > MESSAGE_LIMIT,
                       tagger=person(obj.tagger) if obj.tagger else None)
    return TagInfo(name=name, oid=str(obj.id), target=str(obj.id), annotated=False)


def list_tags(repo: pygit2.Repository, limit: int | None = None) -> tuple[list[TagInfo], int]:
    """Tags sorted by name (as ``git tag -l``), at most ``limit`` (all by default); also the total count."""
    names = sorted(r.removeprefix(TAG_PREFIX) for r in repo.references if r.startswith(TAG_PREFIX))
    return [_info(repo, n) for n in names[:limit]], len(names)


def _check_name(name: str) -> None:
    check_ref(name, "name")
    if not pygit2.reference_is_valid_name(TAG_PREFIX + name):
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{name!r} is not a valid tag name",
                             details={"field": "name", "value": name})


def create(repo: pygit2.Repository, name: str, ref: str | None, message: str | None, force: bool) -> TagInfo:
    _check_name(name)
    exists = TAG_PREFIX + name in repo.references
    if exists and not force:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"tag {name!r} already exists (force to move it)",
                             details={"tag": name})
    commit = resolve_commit(repo, ref or "HEAD")
    if message:
        if exists:
            repo.references.delete(TAG_PREFIX + name)
        text = message if message.endswith("\n") else message + "\n"
        repo.create_tag(name, commit.id, pygit2.enums.ObjectType.COMMIT, user_signature(repo), text)
    else:
        repo.references.create(TAG_PREFIX + name, commit.id, force=force)
    return _info(repo, name)


def delete(repo: pygit2.Repository, name: str) -> TagInfo:
    """Delete tag ``name`` (one that is not UTF-8 named as listings show it, ``t\\xe9``); 8002 when there is none."""
    check_ref(name, "name")
    raw = raw_ref(name)
    if TAG_PREFIX + raw not in repo.references:
        raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"no tag {name!r}", details={"tag": name})
    info = _info(repo, raw)
    repo.references.delete(TAG_PREFIX + raw)
    return info
