"""``git_log``: commit history in ``git log`` order (newest first, children before parents), paginated.

The first page resolves ``ref`` to a commit; its cursor keeps that oid, so commits made between pages
do not shift the pages. A path filter keeps commits whose tree differs at the path from every parent
(git's default history simplification, equal for linear history). A path with glob characters is a git pathspec
glob, as ``git log -- '*.py'`` reads it (``*`` crosses ``/``): the commit's changed paths are matched against it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import pygit2
from pygit2.enums import SortMode

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.cursors import decode_cursor, encode_cursor, query_key
from codeplane.git.models import GitModel, Page, Person
from codeplane.git.pathspecs import is_glob, matches
from codeplane.git.revisions import head_commit, person, resolve_commit

#: A commit message longer than this is cut in a log (``message_truncated`` set): ``git_inspect show`` of the commit
#: has it whole, in parts.
MESSAGE_LIMIT = 8000


class CommitInfo(GitModel):
    oid: str
    short_oid: str
    summary: str
    message: str
    #: The message was cut (at :data:`MESSAGE_LIMIT` in a log; a shown commit's at 1 MiB).
    message_truncated: bool = False
    author: Person
    committer: Person
    parents: list[str]


class LogPage(GitModel):
    commits: list[CommitInfo]
    pagination: Page


def commit_info(commit: pygit2.Commit, limit: int = MESSAGE_LIMIT) -> CommitInfo:
    """``commit`` with its message's first ``limit`` characters; its summary (the first line) within the first
    :data:`MESSAGE_LIMIT`, as a log line is a line, not the megabyte a one-line message may be."""
    message = commit.message
    return CommitInfo(
        oid=str(commit.id), short_oid=str(commit.id)[:7], summary=message[:MESSAGE_LIMIT].split("\n", 1)[0],
        message=message[:limit], message_truncated=len(message) > limit,
        author=person(commit.author), committer=person(commit.committer),
        parents=[str(p) for p in commit.parent_ids],
    )


def parse_date(value: str | None, field: str) -> int | None:
    """Epoch seconds of an ISO date/datetime (no zone means UTC); 1003 if it does not parse."""
    if value is None:
        return None
    try:
        stamp = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{field} {value!r} is not an ISO date",
                             details={"field": field}) from exc
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return int(stamp.timestamp())


def _entry(tree: pygit2.Tree, path: str) -> pygit2.Oid | None:
    try:
        return tree[path].id
    except KeyError:
        return None


def touches(commit: pygit2.Commit, paths: Sequence[str]) -> bool:
    """Whether ``commit`` changed any of ``paths`` relative to every parent."""
    globs = [p for p in paths if is_glob(p)]
    literal = [p for p in paths if not is_glob(p)]
    mine = [_entry(commit.tree, p) for p in literal]
    if not commit.parents:
        return any(m is not None for m in mine) or (bool(globs) and _changes_match(commit.tree, None, globs))
    return all(mine != [_entry(parent.tree, p) for p in literal]
               or (bool(globs) and _changes_match(commit.tree, parent.tree, globs)) for parent in commit.parents)


def _changes_match(tree: pygit2.Tree, parent: pygit2.Tree | None, globs: Sequence[str]) -> bool:
    """Whether a path that differs between ``parent`` (``None``: the empty tree) and ``tree`` matches ``globs``."""
    diff = parent.diff_to_tree(tree) if parent is not None else tree.diff_to_tree(swap=True)
    return any(matches(path, globs) for delta in diff.deltas
               for path in {delta.old_file.path, delta.new_file.path})


def walk(repo: pygit2.Repository, start: pygit2.Oid, skip: int) -> Iterator[pygit2.Commit]:
    walker = repo.walk(start, SortMode.NONE)
    for index, commit in enumerate(walker):
        if index >= skip:
            yield commit


def log(repo: pygit2.Repository, *, ref: str | None = None, limit: int = 50, since: str | None = None,
        until: str | None = None, paths: Sequence[str] = (), cursor: str | None = None) -> LogPage:
    since_s, until_s = parse_date(since, "since"), parse_date(until, "until")
    key = query_key("log", ref, since, until, list(paths))
    if cursor:
        state = decode_cursor(cursor, "git_log", key)
        start, scanned = pygit2.Oid(hex=str(state["start"])), int(state["scanned"])
    else:
        head = resolve_commit(repo, ref) if ref is not None else head_commit(repo)
        if head is None:  # empty repository: no history yet
            return LogPage(commits=[], pagination=Page())
        start, scanned = head.id, 0
    commits: list[CommitInfo] = []
    more = False
    for commit in walk(repo, start, scanned):
        if len(commits) == limit:
            more = True
            break
        scanned += 1
        when = commit.commit_time
        if (since_s is not None and when < since_s) or (until_s is not None and when > until_s):
            continue
        if paths and not touches(commit, paths):
            continue
        commits.append(commit_info(commit))
    next_cursor = encode_cursor("git_log", key, {"start": str(start), "scanned": scanned}) if more else None
    return LogPage(commits=commits, pagination=Page(next_cursor=next_cursor))
