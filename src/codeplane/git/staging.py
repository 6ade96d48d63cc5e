"""``git_stage``: putting working-tree changes into the index, and taking staged changes back out.

Staging a path records whatever is on disk (new, modified, deleted: ``git add -A -- <path>``);
unstaging puts the HEAD version back in the index and leaves the file alone (``git restore --staged``).
Directories stage everything below them. Ignored files are skipped unless already tracked. A changed file git would
pass through a ``.gitattributes`` filter driver is refused (:mod:`codeplane.git.filters`); one git finds unchanged
once converted (only touched) is no change (:mod:`codeplane.git.converted`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import pygit2
from pygit2.enums import FileStatus
from pygit2.errors import check_error
from pygit2.ffi import C, ffi

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import converted, sparse
from codeplane.git.filters import refuse_filtered
from codeplane.git.models import GitModel
from codeplane.git.pathspecs import shown, under
from codeplane.git.revisions import head_tree

_IN_INDEX = FileStatus.INDEX_NEW | FileStatus.INDEX_MODIFIED | FileStatus.INDEX_DELETED | FileStatus.INDEX_RENAMED
_ADDABLE = FileStatus.WT_NEW | FileStatus.WT_MODIFIED | FileStatus.WT_TYPECHANGE | FileStatus.WT_RENAMED


class StagedPath(GitModel):
    path: str
    #: staged: added | modified | deleted | resolved; unstaged: unstaged
    change: str


class SkippedPath(GitModel):
    path: str
    reason: str


def _targets(repo: pygit2.Repository, root: Path, paths: Sequence[str]) -> tuple[dict[str, int], list[SkippedPath]]:
    """Status flags of every path the request covers (all dirty paths when ``paths`` is empty)."""
    skipped: list[SkippedPath] = []
    full: dict[str, int] | None = None
    out: dict[str, int] = {}

    def everything() -> dict[str, int]:
        nonlocal full
        if full is None:
            full = {p: int(f) for p, f in converted.settle(repo, sparse.honour(repo, {
                p: FileStatus(f) for p, f in repo.status(untracked_files="all").items()})).items()}
        return full

    if not paths:
        return {p: f for p, f in everything().items() if not f & FileStatus.IGNORED}, skipped
    for path in paths:
        disk = root / path
        if disk.is_dir() and not disk.is_symlink() and not (disk / ".git").exists():
            found = {p: f for p, f in everything().items() if under(p, [path]) and not f & FileStatus.IGNORED}
            out.update(found)
            continue
        if path in sparse.skip_worktree_paths(repo):  # as git add: the work tree outside the cone is not looked at
            skipped.append(SkippedPath(path=shown(path), reason="outside the sparse-checkout cone (skip-worktree)"))
            continue
        try:
            flag = int(repo.status_file(path))
        except (KeyError, pygit2.GitError):
            if not disk.exists():
                skipped.append(SkippedPath(path=shown(path), reason="no such file in the working tree or index"))
            continue
        if flag & FileStatus.WT_MODIFIED:  # a file git converts, only touched, is no change (git add: nothing)
            flag = int(converted.settle(repo, {path: FileStatus(flag)}).get(path, 0))
        if flag & FileStatus.IGNORED:
            skipped.append(SkippedPath(path=shown(path), reason="ignored by .gitignore"))
        elif flag:
            out[path] = flag
    return out, skipped


def stage(repo: pygit2.Repository, root: Path, paths: Sequence[str], *, tracked_only: bool = False,
          into: pygit2.Index | None = None) -> tuple[list[StagedPath], list[SkippedPath]]:
    """Stage ``paths`` (canonical; empty = every change). 5004 when nothing named exists at all.

    ``tracked_only`` (``git commit -- paths``) leaves untracked files alone, and skips a named path that covers no
    file the index or HEAD has, as git refuses a pathspec matching no file known to it. ``into``: a copy of the
    repository's index to stage into and write instead of it (a commit's, ``commit_index.py``); the repository's
    own index is then left as it is on disk.
    """
    targets, skipped = _targets(repo, root, paths)
    if tracked_only:
        targets, skipped = _tracked(repo, paths, targets, skipped)
    if paths and not targets and len(skipped) == len(paths) and \
            all(s.reason.startswith("no such") for s in skipped):
        # No details: they were the caller's own paths, every one of them, sent back.
        raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, "none of the paths exist in the working tree or index")
    _refuse_markers(root, [p for p, flag in targets.items() if flag & FileStatus.CONFLICTED])
    refuse_filtered(repo, (p for p, flag in targets.items() if flag & (FileStatus.CONFLICTED | _ADDABLE) and
                           ((root / p).exists() or (root / p).is_symlink())), "staging")
    index = into if into is not None else repo.index
    staged: list[StagedPath] = []
    for path in sorted(targets):
        flag = targets[path]
        disk = root / path
        exists = disk.exists() or disk.is_symlink()
        if flag & FileStatus.CONFLICTED:
            if exists:
                _add(repo, index, path, copy=into is not None)
            else:  # resolved by deleting it (``git rm``): every conflict stage goes, and a stage-0 entry if any
                _drop_conflict(index, path)
            staged.append(StagedPath(path=shown(path), change="resolved"))
        elif flag & FileStatus.WT_DELETED or (flag & _ADDABLE and not exists):
            index.remove(path)
            staged.append(StagedPath(path=shown(path), change="deleted"))
        elif flag & _ADDABLE:
            _add(repo, index, path, copy=into is not None)
            staged.append(StagedPath(path=shown(path), change="added" if flag & FileStatus.WT_NEW else "modified"))
    if staged:
        index.write()
    return staged, skipped


def _add(repo: pygit2.Repository, index: pygit2.Index, path: str, *, copy: bool) -> None:
    """``git add`` of one file. libgit2 reads the work tree only into a repository's own index, so for a copy the
    entry is made there, in memory (never written), and copied whole: with its stat data, or the next ``git
    status`` would read every file the commit staged again. Adding resolves a conflict, in the copy too."""
    if not copy:
        index.add(path)
        return
    scratch = repo.index
    scratch.add(path)
    entry = C.git_index_get_bypath(scratch._index, os.fsencode(path), 0)
    if entry == ffi.NULL:
        raise CodePlaneError(ErrorCode.GIT_ERROR, f"git operation failed: {shown(path)} was not added",
                             details={"path": shown(path)})
    if index.conflicts is not None and path in index.conflicts:
        del index.conflicts[path]
    check_error(C.git_index_add(index._index, entry))


def _drop_conflict(index: pygit2.Index, path: str) -> None:
    if index.conflicts is not None and path in index.conflicts:
        del index.conflicts[path]
    if path in index:
        index.remove(path)


def _tracked(repo: pygit2.Repository, paths: Sequence[str], targets: dict[str, int],
             skipped: list[SkippedPath]) -> tuple[dict[str, int], list[SkippedPath]]:
    untracked = {p for p, flag in targets.items() if flag & FileStatus.WT_NEW and not flag & _IN_INDEX}
    known = [entry.path for entry in repo.index] + _tree_paths(head_tree(repo), paths)
    named = {s.path for s in skipped}
    for path in paths:
        if shown(path) not in named and not any(under(k, [path]) for k in known):
            skipped.append(SkippedPath(path=shown(path), reason="not known to git (a commit of paths takes tracked "
                                       "files only, as git commit -- paths; git_stage_and_commit adds new ones)"))
    return {p: f for p, f in targets.items() if p not in untracked}, skipped


def _tree_paths(tree: pygit2.Tree, paths: Sequence[str]) -> list[str]:
    """The file paths of ``tree`` at or under each of ``paths`` (a missing one gives none)."""
    found: list[str] = []
    for path in paths:
        try:
            obj = tree[path] if path else tree
        except KeyError:
            continue
        if isinstance(obj, pygit2.Tree):
            found += [f"{path}/{p}" if path else p for p in _walk(obj)]
        else:
            found.append(path)
    return found


def _walk(tree: pygit2.Tree, prefix: str = "") -> list[str]:
    out: list[str] = []
    for entry in tree:
        name = f"{prefix}{entry.name}"
        out += _walk(entry, name + "/") if isinstance(entry, pygit2.Tree) else [name]
    return out


_MARKER = re.compile(rb"^(<{7}(?: |$)|={7}$|>{7}(?: |$))", re.MULTILINE)


def _refuse_markers(root: Path, conflicted: Sequence[str]) -> None:
    """8003 when a conflicted file still holds git's conflict markers: staging it would call it resolved and commit
    a file that no longer parses (git allows it; an agent never means it). Nothing is staged."""
    found: dict[str, list[int]] = {}
    for path in sorted(conflicted):
        try:
            data = (root / path).read_bytes()
        except OSError:
            continue
        kinds = {m.group(1)[:1]: m.start() for m in _MARKER.finditer(data)}
        if b"<" in kinds and b">" in kinds:
            found[path] = sorted(data.count(b"\n", 0, m.start()) + 1 for m in _MARKER.finditer(data))[:12]
    if found:
        said = "; ".join(f"{p} (lines {', '.join(map(str, lines))})" for p, lines in found.items())
        raise CodePlaneError(ErrorCode.GIT_CONFLICT, f"conflict markers are still in {said}: edit the conflicts "
                             "out, then stage", details={"markers": found})


def unstage(repo: pygit2.Repository, paths: Sequence[str]) -> list[StagedPath]:
    """Reset the index entries of ``paths`` (empty = all) to HEAD; the working tree is not touched."""
    index = repo.index
    changed: list[StagedPath] = []
    for delta in head_tree(repo).diff_to_index(index).deltas:
        old, new = delta.old_file, delta.new_file
        if not (under(new.path, paths) or under(old.path, paths)):
            continue
        if delta.status_char() == "A":
            index.remove(new.path)
        else:
            index.add(pygit2.IndexEntry(old.path, old.id, old.mode))
        changed.append(StagedPath(path=shown(new.path if delta.status_char() == "A" else old.path),
                                  change="unstaged"))
    if changed:
        index.write()
    return sorted(changed, key=lambda s: s.path)
