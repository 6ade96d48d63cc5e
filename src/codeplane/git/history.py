"""``git_history``: the commits that changed a file (following renames) or a range of its lines.

File mode walks all history (``git log --follow -- <path>``). Line mode (``git log -L a,b:<path>``)
follows the first parent and carries the line range back through each change: a commit is listed when
its diff touches the range, and the walk ends where the range's lines were first added. Both paginate
with a cursor that keeps the walk position, the current path name and the current range.
"""

from __future__ import annotations

import pygit2
from pygit2.enums import DiffFind, SortMode

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.cursors import decode_cursor, encode_cursor, query_key
from codeplane.git.line_ranges import check_line_range, line_count, refuse_root
from codeplane.git.models import GitModel, Page, Person
from codeplane.git.pathspecs import shown
from codeplane.git.revisions import person, resolve_commit

#: Commits examined per call at most; a page may come back short with a cursor to go on.
SCAN_LIMIT = 20_000


class HistoryEntry(GitModel):
    oid: str
    short_oid: str
    summary: str
    author: Person
    #: The file's name in this commit.
    path: str
    #: added | modified | renamed | deleted
    change: str
    old_path: str | None = None
    #: Line mode: the tracked range in this commit's version of the file.
    line_range: tuple[int, int] | None = None


class HistoryPage(GitModel):
    path: str
    entries: list[HistoryEntry]
    pagination: Page


def _entry_id(tree: pygit2.Tree, path: str) -> pygit2.Oid | None:
    try:
        return tree[path].id
    except KeyError:
        return None


def _renamed_from(repo: pygit2.Repository, parent: pygit2.Commit, commit: pygit2.Commit, path: str) -> str | None:
    diff = parent.tree.diff_to_tree(commit.tree)
    diff.find_similar(DiffFind.FIND_RENAMES)
    for delta in diff.deltas:
        if delta.status_char() == "R" and delta.new_file.path == path:
            return str(delta.old_file.path)
    return None


def _map_range(old: pygit2.Blob | None, new: pygit2.Blob, rng: tuple[int, int]) -> tuple[bool, tuple[int, int] | None]:
    """(does the change touch ``rng``, the range in the old version or ``None`` if all of it was added)."""
    patch = pygit2.Patch.create_from(old, new, context_lines=0)
    a, b = rng
    touched = False
    shift = 0
    new_a = new_b = None
    for hunk in patch.hunks:
        n_start, n_len, o_start, o_len = hunk.new_start, hunk.new_lines, hunk.old_start, hunk.old_lines
        n_end = n_start + n_len - 1
        if n_len == 0:  # pure deletion after line n_start
            if a <= n_start < b:
                touched = True
        elif n_start <= b and n_end >= a:
            touched = True
        if new_a is None and n_len and n_start <= a <= n_end:
            new_a = o_start if o_len else o_start + 1
        elif new_a is None and n_start > a:
            new_a = a + shift
        if new_b is None and n_len and n_start <= b <= n_end:
            new_b = o_start + o_len - 1 if o_len else o_start
        elif new_b is None and n_start > b:
            new_b = b + shift
        shift += o_len - n_len
    new_a = a + shift if new_a is None else new_a
    new_b = b + shift if new_b is None else new_b
    if old is None or new_a > new_b:
        return touched, None
    return touched, (new_a, new_b)


def _change(repo: pygit2.Repository, parent: pygit2.Commit | None, commit: pygit2.Commit,
            path: str) -> tuple[str, str | None]:
    """(added | modified | renamed, the previous name when renamed) for ``path`` in ``commit``."""
    if parent is None:
        return "added", None
    if _entry_id(parent.tree, path) is not None:
        return "modified", None
    old_path = _renamed_from(repo, parent, commit, path)
    return ("renamed", old_path) if old_path else ("added", None)


def _blob(repo: pygit2.Repository, commit: pygit2.Commit | None, path: str) -> pygit2.Blob | None:
    oid = _entry_id(commit.tree, path) if commit is not None else None
    blob = repo[oid] if oid is not None else None
    return blob if isinstance(blob, pygit2.Blob) else None


def history(repo: pygit2.Repository, path: str, *, ref: str | None = None, line_range: tuple[int, int] | None = None,
            limit: int = 20, cursor: str | None = None) -> HistoryPage:
    """One page of the commits that changed ``path``; 1003 for the repository root or a ``line_range`` that does not
    fit the file (see :mod:`codeplane.git.line_ranges`), 5004 for a path not in ``ref``."""
    refuse_root(path, "git_history follows one file or directory (git_log lists the commits of the whole tree)")
    key = query_key("history", path, ref, line_range)
    if cursor:
        state = decode_cursor(cursor, "git_history", key)
        if state.get("done"):
            return HistoryPage(path=shown(path), entries=[], pagination=Page())
        start, scanned = pygit2.Oid(hex=str(state["start"])), int(state["scanned"])
        current = str(state["path"])
        rng: tuple[int, int] | None = (int(state["range"][0]), int(state["range"][1])) if state.get("range") \
            else None
    else:
        head = resolve_commit(repo, ref or "HEAD")
        if _entry_id(head.tree, path) is None:
            raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{shown(path)} is not in {str(head.id)[:12]}",
                                 details={"path": shown(path)})
        rng = line_range
        if line_range is not None:
            blob = _blob(repo, head, path)
            if blob is None:
                raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{shown(path)} is a directory; line_range needs "
                                     "a file", details={"field": "line_range", "path": shown(path)})
            rng = check_line_range(line_range, line_count(blob), path, str(head.id))
        start, scanned, current = head.id, 0, path
    line_mode = rng is not None
    walker = repo.walk(start, SortMode.NONE)
    if line_mode:
        walker.simplify_first_parent()
    entries: list[HistoryEntry] = []
    done = True
    for index, commit in enumerate(walker):
        if index < scanned:
            continue
        if len(entries) == limit or index - scanned >= SCAN_LIMIT:
            done = False
            break
        scanned = index + 1
        mine = _entry_id(commit.tree, current)
        parents = commit.parents[:1] if line_mode else commit.parents
        if mine is None or (parents and any(_entry_id(p.tree, current) == mine for p in parents)):
            continue  # unchanged here (or deleted here: older commits still name it)
        parent = parents[0] if parents else None
        change, old_path = _change(repo, parent, commit, current)
        touched, shown_range = True, None
        if rng is not None:
            new_blob = _blob(repo, commit, current)
            assert new_blob is not None
            touched, older = _map_range(_blob(repo, parent, old_path or current), new_blob, rng)
            shown_range, rng = rng, older
        if touched:
            entries.append(HistoryEntry(
                oid=str(commit.id), short_oid=str(commit.id)[:7], summary=commit.message.split("\n", 1)[0],
                author=person(commit.author), path=shown(current), change=change,
                old_path=shown(old_path) if old_path else None, line_range=shown_range))
        if change == "added" or (line_mode and rng is None):
            break  # the file (or the tracked lines) begins here
        current = old_path or current
    state_out = {"start": str(start), "scanned": scanned, "path": current, "range": list(rng) if rng else None,
                 "done": done}
    next_cursor = encode_cursor("git_history", key, state_out) if not done else None
    return HistoryPage(path=shown(path), entries=entries, pagination=Page(next_cursor=next_cursor))
