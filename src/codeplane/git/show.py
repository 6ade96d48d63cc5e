"""``git_inspect action=show``: one object (commit with its bounded diff, annotated tag, blob, tree)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import pygit2

from codeplane.git.diffs import DiffLimits, DiffReport, commit_diff
from codeplane.git.log import CommitInfo, commit_info
from codeplane.git.models import GitModel, Person
from codeplane.git.pathspecs import shown
from codeplane.git.revisions import person, resolve_object

#: Blob text beyond this many bytes is cut (``truncated`` set), as ``read_file_full`` cuts a file: the tool shows
#: it in parts of a page each (``server/tools/git_pages.py``).
BLOB_LIMIT = 1024 * 1024
#: Characters of a shown commit's or tag's message (a log cuts a commit's at ``MESSAGE_LIMIT``): the tool shows a
#: long one in parts, as it shows a blob.
SHOWN_MESSAGE_LIMIT = BLOB_LIMIT
TREE_LIMIT = 1000


class TagObject(GitModel):
    name: str
    target: str
    message: str
    message_truncated: bool = False
    tagger: Person | None = None


class BlobInfo(GitModel):
    size: int
    binary: bool
    text: str | None = None
    truncated: bool = False


class TreeEntry(GitModel):
    name: str
    oid: str
    #: blob | tree | commit (submodule)
    kind: str
    mode: int


class ShowResult(GitModel):
    kind: Literal["commit", "tag", "blob", "tree"]
    oid: str
    commit: CommitInfo | None = None
    diff: DiffReport | None = None
    tag: TagObject | None = None
    blob: BlobInfo | None = None
    entries: list[TreeEntry] = []
    entries_total: int | None = None


def show(repo: pygit2.Repository, ref: str, path: str | None, limits: DiffLimits,
         paths: Sequence[str] = ()) -> ShowResult:
    """``ref`` (default HEAD by the caller); with ``path`` the object at ``ref:path``; a commit's diff restricted to
    ``paths`` (canonical; empty = all)."""
    obj = resolve_object(repo, f"{ref}:{path}" if path else ref)
    if isinstance(obj, pygit2.Tag):
        target = obj.peel(None)
        message = obj.message
        return ShowResult(kind="tag", oid=str(obj.id),
                          tag=TagObject(name=obj.name, target=str(target.id), message=message[:SHOWN_MESSAGE_LIMIT],
                                        message_truncated=len(message) > SHOWN_MESSAGE_LIMIT,
                                        tagger=person(obj.tagger) if obj.tagger else None),
                          commit=commit_info(target) if isinstance(target, pygit2.Commit) else None)
    if isinstance(obj, pygit2.Commit):
        return ShowResult(kind="commit", oid=str(obj.id), commit=commit_info(obj, SHOWN_MESSAGE_LIMIT),
                          diff=commit_diff(repo, obj, limits, paths))
    if isinstance(obj, pygit2.Blob):
        data = obj.data
        text = None if obj.is_binary else data[:BLOB_LIMIT].decode("utf-8", errors="replace")
        return ShowResult(kind="blob", oid=str(obj.id),
                          blob=BlobInfo(size=obj.size, binary=obj.is_binary, text=text,
                                        truncated=not obj.is_binary and len(data) > BLOB_LIMIT))
    assert isinstance(obj, pygit2.Tree)
    entries = [TreeEntry(name=shown(e.name or ""), oid=str(e.id), kind=e.type_str, mode=int(e.filemode))
               for e in list(obj)[:TREE_LIMIT]]
    return ShowResult(kind="tree", oid=str(obj.id), entries=entries, entries_total=len(obj))
