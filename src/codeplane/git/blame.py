"""Blame (``git_inspect action=blame``): who last changed each line of a committed file, paginated.

Pages are line windows: each page blames only its lines (libgit2 ``min_line``/``max_line``), so a page
of a long file stays cheap. The cursor pins the commit resolved on the first page. Uncommitted changes
are not blamed: the file is read as it is in ``ref`` (default HEAD).
"""

from __future__ import annotations

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.cursors import decode_cursor, encode_cursor, query_key
from codeplane.git.line_ranges import check_line_range, line_count, refuse_root
from codeplane.git.models import GitModel, Page, Person
from codeplane.git.pathspecs import shown
from codeplane.git.revisions import person, resolve_commit


class BlameHunk(GitModel):
    start_line: int
    lines: int
    commit: str
    author: Person
    summary: str
    orig_path: str
    orig_start_line: int
    #: True when the line goes back to the oldest commit blame looked at.
    boundary: bool = False


class BlamePage(GitModel):
    path: str
    commit: str
    total_lines: int
    hunks: list[BlameHunk]
    pagination: Page


def blame(repo: pygit2.Repository, path: str, *, ref: str | None = None, line_range: tuple[int, int] | None = None,
          limit: int = 200, cursor: str | None = None) -> BlamePage:
    """One page of blame; 1003 for the repository root, a directory or a ``line_range`` that does not fit the
    file (see :mod:`codeplane.git.line_ranges`), 5004 for a file not in ``ref``."""
    refuse_root(path, "blame needs a file")
    key = query_key("blame", path, ref, line_range)
    resume: int | None = None
    if cursor:
        state = decode_cursor(cursor, "git_blame", key)
        commit = resolve_commit(repo, str(state["commit"]))
        resume = int(state["line"])
    else:
        commit = resolve_commit(repo, ref or "HEAD")
    try:
        blob = repo[commit.tree[path].id]
    except KeyError as exc:
        raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{shown(path)} is not in {str(commit.id)[:12]}",
                             details={"path": shown(path), "commit": str(commit.id)}) from exc
    if not isinstance(blob, pygit2.Blob):
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{shown(path)} is a directory; blame needs a file",
                             details={"field": "path", "path": shown(path)})
    total = line_count(blob)
    first, end = check_line_range(line_range, total, path, str(commit.id)) if line_range else (1, total)
    start = first if resume is None else resume
    if total == 0 or start > end:
        return BlamePage(path=shown(path), commit=str(commit.id), total_lines=total, hunks=[], pagination=Page())
    stop = min(end, start + limit - 1)
    result = repo.blame(path, newest_commit=commit.id, min_line=start, max_line=stop)
    commits: dict[pygit2.Oid, pygit2.Commit] = {}
    hunks: list[BlameHunk] = []
    for hunk in result:
        oid = hunk.final_commit_id
        source = commits.get(oid)
        if source is None:
            found = repo[oid]
            assert isinstance(found, pygit2.Commit)
            source = commits[oid] = found
        hunks.append(BlameHunk(
            start_line=hunk.final_start_line_number, lines=hunk.lines_in_hunk, commit=str(oid),
            author=person(source.author), summary=source.message.split("\n", 1)[0],
            orig_path=shown(hunk.orig_path or path), orig_start_line=hunk.orig_start_line_number,
            boundary=bool(hunk.boundary),
        ))
    next_cursor = encode_cursor("git_blame", key, {"commit": str(commit.id), "line": stop + 1}) if stop < end else None
    return BlamePage(path=shown(path), commit=str(commit.id), total_lines=total, hunks=hunks,
                     pagination=Page(next_cursor=next_cursor, total_estimate=end - first + 1))
