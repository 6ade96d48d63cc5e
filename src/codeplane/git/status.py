"""``git_status``: branch, HEAD, staged/modified/untracked/conflicted paths and the in-progress state.

Mirrors ``git status --porcelain=v2``: staged entries come from HEAD→index (with rename pairing), modified
entries from index→working tree, conflicts from the index's conflict stages. Untracked files are folded as git's
default ``--untracked-files=normal`` does (:func:`fold_untracked`: a directory holding no tracked file is one
``dir/`` entry; 300 generated files cost 10 KB and several calls listed one by one); ``untracked="all"`` lists
every file, as ``-uall``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import pygit2
from pygit2.enums import DiffFind, FileMode, FileStatus, SubmoduleStatus

from codeplane.git.branch_state import between_picks
from codeplane.git.conflicts import RepoState, read_conflicts, repo_state
from codeplane.git.models import Conflict, GitModel
from codeplane.git.pathspecs import git_name, matches, shown
from codeplane.git.revisions import head_branch, head_commit, head_tree
from codeplane.git.status_flags import status_flags
from codeplane.git.worktree_scan import prepared_index

#: How untracked files are listed: ``normal`` folds a directory without tracked files to ``dir/`` (git's default),
#: ``all`` lists every file (``git status -uall``).
UntrackedMode = Literal["normal", "all"]

_STAGED = (
    (FileStatus.INDEX_NEW, "added"),
    (FileStatus.INDEX_MODIFIED, "modified"),
    (FileStatus.INDEX_DELETED, "deleted"),
    (FileStatus.INDEX_RENAMED, "renamed"),
    (FileStatus.INDEX_TYPECHANGE, "typechange"),
)
_WORKTREE = (
    (FileStatus.WT_MODIFIED, "modified"),
    (FileStatus.WT_DELETED, "deleted"),
    (FileStatus.WT_TYPECHANGE, "typechange"),
    (FileStatus.WT_RENAMED, "renamed"),
)


class StatusEntry(GitModel):
    path: str
    #: added | modified | deleted | renamed | typechange; for a submodule whose checked-out commit is the recorded
    #: one, ``modified content`` (git's `` m``) or ``untracked content`` (`` ?``): nothing to stage in this repository
    status: str
    old_path: str | None = None


class StatusReport(GitModel):
    branch: str | None
    head_commit: str | None
    detached: bool
    is_clean: bool
    staged: list[StatusEntry]
    modified: list[StatusEntry]
    untracked: list[str]
    conflicts: list[Conflict]
    state: RepoState
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None
    #: The branch tracks ``upstream`` but its remote-tracking ref is gone (deleted on the remote, then pruned): git's
    #: ``[gone]``; ``ahead``/``behind`` are then unknown.
    upstream_gone: bool = False
    #: True when a list was cut at ``limit``; the ``*_total`` counts are always complete.
    truncated: bool = False
    staged_total: int = 0
    modified_total: int = 0
    untracked_total: int = 0
    #: Of an answer in parts, on its last part: how many of each list all its parts hold (what ``limit`` cut is
    #: the total less that; each part counted only its own items, and said "… 1,004 more" where 200 were cut).
    staged_listed: int | None = None
    modified_listed: int | None = None
    untracked_listed: int | None = None
    #: Between two picks of a ``git cherry-pick A B`` / ``git revert A B`` the git CLI started (``sequencer/``, no
    #: pick in progress): ``state`` names the sequence as ``git status`` does, and this says how it goes on or ends.
    sequence: str | None = None


def dirty_paths(repo: pygit2.Repository, *, refresh: bool = False) -> dict[str, FileStatus]:
    """Every path whose status is not current (ignored files excluded), keyed by pygit2 path. ``refresh``: a write
    is about to start, which may refresh git's index (:func:`codeplane.git.converted.settle`)."""
    return status_flags(repo, refresh=refresh)


def _is_gitlink(repo: pygit2.Repository, path: str) -> bool:
    try:
        return bool(repo.index[path].mode == FileMode.COMMIT)
    except (KeyError, ValueError):
        return False


def _submodule_change(repo: pygit2.Repository, path: str) -> str:
    """What git's short status says of a changed submodule: ``M`` another commit checked out, else ``m`` its files
    changed, else ``?`` only untracked files in it (libgit2 calls all three modified)."""
    try:
        flags = repo.submodules.status(path)
    except (KeyError, ValueError, pygit2.GitError):
        return "modified"
    if flags & SubmoduleStatus.WD_MODIFIED:
        return "modified"
    if flags & (SubmoduleStatus.WD_INDEX_MODIFIED | SubmoduleStatus.WD_WD_MODIFIED):
        return "modified content"
    if flags & SubmoduleStatus.WD_UNTRACKED:
        return "untracked content"
    return "modified"


def _renames(repo: pygit2.Repository) -> dict[str, str]:
    """new path → old path for renames staged in the index (HEAD→index, git's 50% similarity)."""
    diff = repo.index.diff_to_tree(head_tree(repo))
    diff.find_similar(DiffFind.FIND_RENAMES)
    return {d.new_file.path: d.old_file.path for d in diff.deltas if d.status_char() == "R"}


def _upstream(repo: pygit2.Repository, branch: str | None) -> tuple[str | None, int | None, int | None]:
    if branch is None or repo.head_is_unborn:
        return None, None, None
    local = repo.branches.local.get(git_name(branch.removeprefix("refs/heads/")))  # type: ignore[arg-type]
    if local is None:
        return None, None, None
    try:
        upstream = local.upstream
    except (KeyError, ValueError, pygit2.GitError):
        return _gone(repo, local.branch_name), None, None
    if upstream is None:
        return _gone(repo, local.branch_name), None, None
    ahead, behind = repo.ahead_behind(local.target, upstream.target)
    return upstream.shorthand, ahead, behind


def _gone(repo: pygit2.Repository, name: str) -> str | None:
    """The upstream ``branch.<name>.remote``/``.merge`` still name when its remote-tracking ref is missing (git's
    ``[gone]``), as ``<remote>/<branch>``; ``None`` when the branch tracks nothing."""
    config = repo.config
    remote_key, merge_key = f"branch.{name}.remote", f"branch.{name}.merge"
    if remote_key not in config or merge_key not in config:
        return None
    remote, merge = str(config[remote_key]), str(config[merge_key])
    if remote == ".":  # tracks a local branch: that branch was deleted
        return merge.removeprefix("refs/heads/")
    return f"{remote}/{merge.removeprefix('refs/heads/')}"


def _parents(paths: Iterable[bytes]) -> set[bytes]:
    dirs: set[bytes] = set()
    for path in paths:
        cut = path.rfind(b"/")
        while cut > 0 and path[:cut] not in dirs:
            dirs.add(path[:cut])
            cut = path.rfind(b"/", 0, cut)
    return dirs


def _tracked_dirs(repo: pygit2.Repository) -> frozenset[bytes] | set[bytes]:
    """Every directory holding an index entry (any stage), as repository-relative bytes."""
    if repo.workdir is not None and (prepared := prepared_index(repo, Path(repo.workdir))) is not None:
        return prepared.tracked_dirs  # parsed once per index version
    index = repo.index
    paths = [os.fsencode(e.path) for e in index]
    paths += [os.fsencode(e.path) for c in (index.conflicts or ()) for e in c if e is not None]
    return _parents(paths)


def fold_untracked(files: Sequence[str], tracked_dirs: frozenset[bytes] | set[bytes],
                   specs: Sequence[str] = ()) -> list[str]:
    """``files`` (untracked, pygit2 paths) as ``git status -unormal`` lists them, sorted: each file under a
    directory that holds no tracked file becomes that topmost directory as ``dir/``. With pathspecs git folds
    only a directory the pathspec takes whole (``src``, ``src/*``) and descends into one it only reaches into
    (``src/gen/a.py``, ``*.py``), so the entry is then the deeper directory or the file itself. A directory
    holding only ignored files or nothing never appears: no untracked file names it."""
    out: set[str] = set()
    for path in files:
        parts = path.rstrip("/").split("/")
        entry = path
        for depth in range(1, len(parts)):
            directory = "/".join(parts[:depth])
            if os.fsencode(directory) not in tracked_dirs and matches(directory + "/", specs):
                entry = directory + "/"
                break
        out.add(entry)
    return sorted(out)


def status(repo: pygit2.Repository, paths: Sequence[str] = (), limit: int = 1000,
           untracked_mode: UntrackedMode = "all") -> StatusReport:
    """The repository status, optionally restricted to ``paths`` (canonical, from ``repo_paths``; git's pathspec
    globs included, :func:`~codeplane.git.pathspecs.matches`); untracked files folded per ``untracked_mode``."""
    flags = {p: f for p, f in status_flags(repo).items() if matches(p, paths)}
    renamed: dict[str, str] = {}
    if any(f & FileStatus.INDEX_NEW for f in flags.values()) and \
            any(f & FileStatus.INDEX_DELETED for f in flags.values()):
        renamed = {new: old for new, old in _renames(repo).items()
                   if new in flags and flags[new] & FileStatus.INDEX_NEW}
    gone = set(renamed.values())
    staged: list[StatusEntry] = []
    modified: list[StatusEntry] = []
    untracked: list[str] = []
    conflicted = False
    for path in sorted(flags):
        flag = flags[path]
        if flag & FileStatus.CONFLICTED:
            conflicted = True
            continue
        if path in renamed:
            staged.append(StatusEntry(path=shown(path), status="renamed", old_path=shown(renamed[path])))
        elif not (path in gone and flag == FileStatus.INDEX_DELETED):
            kind = next((name for bit, name in _STAGED if flag & bit), None)
            if kind is not None and not (path in gone and kind == "deleted"):
                staged.append(StatusEntry(path=shown(path), status=kind))
        wt_kind = next((name for bit, name in _WORKTREE if flag & bit), None)
        if wt_kind == "modified" and _is_gitlink(repo, path):
            wt_kind = _submodule_change(repo, path)
        if wt_kind is not None:
            modified.append(StatusEntry(path=shown(path), status=wt_kind))
        elif flag & FileStatus.WT_NEW:
            untracked.append(path)
    if untracked and untracked_mode == "normal":
        untracked = fold_untracked(untracked, _tracked_dirs(repo), paths)
    untracked = [shown(path) for path in untracked]
    conflicts = [c for c in read_conflicts(repo.index) if matches(c.path, paths)] if conflicted else []
    head = head_commit(repo)
    branch = head_branch(repo)
    upstream, ahead, behind = _upstream(repo, branch)
    truncated = max(len(staged), len(modified), len(untracked), len(conflicts)) > limit
    state, between_picks = _state(repo)
    return StatusReport(
        branch=branch.removeprefix("refs/heads/") if branch else None,
        head_commit=str(head.id) if head is not None else None,
        detached=repo.head_is_detached,
        is_clean=not (staged or modified or untracked or conflicts),
        staged=staged[:limit], modified=modified[:limit], untracked=untracked[:limit],
        conflicts=conflicts[:limit], state=state, sequence=between_picks,
        upstream=upstream, ahead=ahead, behind=behind, upstream_gone=upstream is not None and ahead is None,
        truncated=truncated,
        staged_total=len(staged), modified_total=len(modified), untracked_total=len(untracked),
    )


def _state(repo: pygit2.Repository) -> tuple[RepoState, str | None]:
    """The operation in progress and, between two picks of a git CLI sequence, what to say of it. libgit2 reads
    no state there (no ``CHERRY_PICK_HEAD``) where ``git status`` says "Cherry-pick currently in progress"."""
    state = repo_state(repo)
    if state != "none":
        return state, None
    return between_picks(repo) or (state, None)
