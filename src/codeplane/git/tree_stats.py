"""The lines a diff between two commits inserts and deletes, from git's own ``git diff-tree --numstat``.

A commit's diff lists at most ``max_files`` files, but its stats cover every file. Counting the unlisted ones with
libgit2 costs a full patch each (every blob loaded, split into lines, wrapped for Python): 87% of ``git_inspect
show`` on Django's 6,890-file root commit, twice ``git show --stat``. git counts in C with no patch kept, so the
files past the page are counted by one ``git diff-tree`` (§10's CLI exception, read-only: it writes nothing, takes
no lock). Its numbers are git's by definition, with renames found at git's default 50% as :func:`diffs.compute`
finds them. ``None`` when git is missing or fails: the caller then counts with libgit2 as before.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

from codeplane.core.errors import CodePlaneError
from codeplane.git.cli import run_git
from codeplane.git.pathspecs import matches

#: A diff git cannot count in this long is counted with libgit2 instead (which is no faster, but is what ran before).
_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class TreeTotals:
    files: int
    insertions: int
    deletions: int


def totals(repo: pygit2.Repository, old: pygit2.Oid | None, new: pygit2.Oid,
           paths: Sequence[str] = ()) -> TreeTotals | None:
    """git's numstat totals of ``old``..``new`` (commits; ``old`` ``None``: the empty tree) restricted to ``paths``
    (canonical, git's globs included, as :func:`pathspecs.matches` reads them; empty = all). A binary file counts
    as a file without lines, as numstat's ``-``."""
    where = Path(repo.workdir) if repo.workdir else Path(repo.path)
    # No pathspec on the command line: the filter is ours (pathspecs.matches), the same one the listed files went
    # through, so a name git would read as magic (``:(top)``) or a glob is read once, one way.
    sides = [str(old), str(new)] if old is not None else ["--root", str(new)]
    try:
        result = run_git(where, ["diff-tree", "-r", "-z", "--no-commit-id", "--numstat", "-M", "--no-textconv",
                                 "--no-ext-diff", *sides], timeout_s=_TIMEOUT_S)
    except CodePlaneError:
        return None
    if not result.ok:
        return None
    return _parse(result.stdout, paths)


def _parse(out: bytes, paths: Sequence[str]) -> TreeTotals | None:
    """``-z --numstat``: ``I\\tD\\tpath\\0`` per file, ``I\\tD\\t\\0old\\0new\\0`` for a rename."""
    fields = out.split(b"\0")
    files = insertions = deletions = 0
    i = 0
    while i < len(fields):
        head = fields[i]
        i += 1
        if not head:
            continue
        try:
            added, deleted, name = head.split(b"\t", 2)
        except ValueError:
            return None  # not numstat: better the slow count than a wrong one
        names = [name]
        if not name:  # a rename: the two names follow
            names = fields[i:i + 2]
            i += 2
        if paths and not any(matches(os.fsdecode(n), paths) for n in names):
            continue
        files += 1
        if added != b"-":
            insertions += int(added)
            deletions += int(deleted)
    return TreeTotals(files=files, insertions=insertions, deletions=deletions)
