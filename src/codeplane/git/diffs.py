"""``git_diff``: structured, bounded diffs between trees, the index and the working tree.

Which sides are compared follows ``git diff``: nothing → index vs working tree; ``staged`` → HEAD (or
``base``) vs index; ``base`` → that commit vs working tree (through the index, like ``git diff <rev>``);
``base`` + ``target`` → two commits. Renames are detected (git's default 50% similarity).
Bounds: at most ``max_files`` files with hunks, ``max_hunks_per_file`` hunks each and ``max_lines``
lines overall; anything cut is counted and ``truncation`` says how to see it. ``stats`` always cover
the whole (path-filtered) diff.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

import pygit2
from pygit2.enums import DiffFind, DiffOption, FileMode, SubmoduleStatus

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import converted, sparse, tree_stats, worktree_scan
from codeplane.git.models import GitModel
from codeplane.git.pathspecs import matches, shown
from codeplane.git.revisions import empty_tree, head_tree, resolve_commit
from codeplane.git.worktree_scan import WorktreeChange

FileStatusName = Literal["added", "modified", "deleted", "renamed", "copied", "typechange", "conflicted"]
#: git shows a file that became a symlink (or back) as one typechange, not a delete plus an add.
_FLAGS = DiffOption.INCLUDE_TYPECHANGE
_STATUS: dict[str, FileStatusName] = {
    "A": "added", "M": "modified", "D": "deleted", "R": "renamed", "C": "copied", "T": "typechange",
    "U": "conflicted",
}


Origin = Literal["+", "-", " "]
_ORIGINS: dict[str, Origin] = {"+": "+", "-": "-", " ": " "}


class DiffLine(GitModel):
    origin: Origin
    content: str
    old_lineno: int | None = None
    new_lineno: int | None = None
    #: The file ends with this line and no newline (git prints ``\ No newline at end of file`` after it): without
    #: it, adding a newline to a last line reads as ``-x = 2`` / ``+x = 2``, a change that changes nothing.
    no_newline: bool = False


class DiffHunk(GitModel):
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    header: str
    lines: list[DiffLine]
    #: Lines of this hunk left out because the diff reached ``max_lines``.
    lines_omitted: int = 0


class DiffFile(GitModel):
    path: str
    status: FileStatusName
    old_path: str | None = None
    binary: bool
    insertions: int
    deletions: int
    hunks: list[DiffHunk] = []
    hunks_omitted: int = 0
    #: Both sides' modes (octal, as git's ``old mode``/``new mode`` lines) when they differ: a ``chmod +x`` alone
    #: is otherwise a "modified +0 -0" that says nothing.
    old_mode: str | None = None
    new_mode: str | None = None


class DiffStats(GitModel):
    files_changed: int
    insertions: int
    deletions: int


class DiffReport(GitModel):
    #: What was compared, e.g. ``index..worktree`` or ``<oid>..<oid>``.
    compared: str
    files: list[DiffFile]
    stats: DiffStats
    files_omitted: int = 0
    truncated: bool = False
    #: Present when anything was cut: what was left out and how to get it.
    truncation: str | None = None


@dataclass(frozen=True)
class DiffLimits:
    max_files: int = 200
    max_hunks_per_file: int = 100
    max_lines: int = 2000
    include_hunks: bool = True
    context_lines: int = 3


def compute(repo: pygit2.Repository, base: str | None, target: str | None, staged: bool,
            context_lines: int = 3) -> tuple[pygit2.Diff, str]:
    """The raw pygit2 diff for the requested sides (renames found) and a label of what was compared."""
    if staged and target is not None:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "staged compares against the index; omit target",
                             details={"field": "target"})
    if target is not None:
        old = resolve_commit(repo, base, "base") if base is not None else resolve_commit(repo, "HEAD", "base")
        new = resolve_commit(repo, target, "target")
        diff = old.tree.diff_to_tree(new.tree, context_lines=context_lines, flags=_FLAGS)
        label = f"{old.id}..{new.id}"
    elif staged:
        tree = resolve_commit(repo, base, "base").tree if base is not None else head_tree(repo)
        diff = tree.diff_to_index(repo.index, context_lines=context_lines, flags=_FLAGS)
        label = f"{base or 'HEAD'}..index"
    elif base is not None:
        # git diff <rev>: the tree against the working tree as seen through the index.
        tree = resolve_commit(repo, base, "base").tree
        diff = tree.diff_to_index(repo.index, context_lines=context_lines, flags=_FLAGS)
        diff.merge(repo.index.diff_to_workdir(context_lines=context_lines, flags=_FLAGS))
        label = f"{base}..worktree"
    else:
        diff = repo.index.diff_to_workdir(context_lines=context_lines, flags=_FLAGS)
        label = "index..worktree"
    diff.find_similar(DiffFind.FIND_RENAMES)
    return diff, label


def _file(patch: pygit2.Patch, paths: tuple[str, str], limits: DiffLimits, budget: list[int], *,
          with_hunks: bool, status_override: FileStatusName | None = None,
          modes: tuple[int, int] | None = None) -> DiffFile:
    delta = patch.delta
    old_mode, new_mode = modes if modes is not None else (int(delta.old_file.mode), int(delta.new_file.mode))
    shown_modes = {"old_mode": f"{old_mode:o}", "new_mode": f"{new_mode:o}"} \
        if old_mode and new_mode and old_mode != new_mode else {}
    _, insertions, deletions = patch.line_stats
    status = status_override or _STATUS.get(delta.status_char(), "modified")
    renamed = status in ("renamed", "copied")
    hunks: list[DiffHunk] = []
    hunks_omitted = 0
    if with_hunks and not delta.is_binary:
        all_hunks = patch.hunks
        hunks_omitted = max(0, len(all_hunks) - limits.max_hunks_per_file)
        for hunk in all_hunks[:limits.max_hunks_per_file]:
            lines: list[DiffLine] = []
            omitted = 0
            for line in hunk.lines:
                origin = _ORIGINS.get(line.origin)
                if origin is None:
                    continue  # the "\ No newline at end of file" markers: ``no_newline`` of the line before
                if budget[0] <= 0:
                    omitted += 1
                    continue
                budget[0] -= 1
                lines.append(DiffLine.model_construct(
                    origin=origin, content=line.content.rstrip("\n"),
                    old_lineno=line.old_lineno if line.old_lineno >= 0 else None,
                    new_lineno=line.new_lineno if line.new_lineno >= 0 else None,
                    no_newline=not line.content.endswith("\n"),
                ))
            hunks.append(DiffHunk(old_start=hunk.old_start, old_lines=hunk.old_lines, new_start=hunk.new_start,
                                  new_lines=hunk.new_lines, header=hunk.header.rstrip("\n"), lines=lines,
                                  lines_omitted=omitted))
    old_path, new_path = paths
    return DiffFile(
        path=shown(new_path if status != "deleted" else old_path),
        status=status, old_path=shown(old_path) if renamed else None, binary=bool(delta.is_binary),
        insertions=insertions, deletions=deletions, hunks=hunks, hunks_omitted=hunks_omitted, **shown_modes,
    )


#: One file of a diff: (old path, new path, patch factory, status override, (old mode, new mode) or ``None``: the
#: patch's own), in path order.
PatchSource = tuple[str, str, Callable[[], pygit2.Patch | None], FileStatusName | None, tuple[int, int] | None]


def sources(diff: pygit2.Diff, repo: pygit2.Repository | None = None, context_lines: int = 3,
            workdir: Path | None = None) -> Iterator[PatchSource]:
    """A libgit2 diff as patch sources (patches are generated only for files that get rendered). With ``repo``, a
    file↔symlink change gets its content (:func:`_typechange_patch`); ``workdir`` when the new side is the work
    tree, whose files are not in the object store."""
    keep: list[object] = []  # a patch reads its bytes lazily: they live as long as the sources do
    for i, delta in enumerate(diff.deltas):
        whole = partial(diff.__getitem__, i)
        if repo is not None and delta.status_char() == "T":
            sides = (delta.old_file.id, delta.new_file.id)
            yield (delta.old_file.path, delta.new_file.path,
                   partial(_typechange_patch, repo, whole, sides, delta.new_file.path, context_lines, workdir=workdir,
                           keep=keep),
                   "typechange", (int(delta.old_file.mode), int(delta.new_file.mode)))
        else:
            yield delta.old_file.path, delta.new_file.path, whole, None, None


def _typechange_patch(repo: pygit2.Repository, whole: Callable[[], pygit2.Patch | None],
                      sides: tuple[pygit2.Oid, pygit2.Oid], path: str, context_lines: int, *, workdir: Path | None,
                      keep: list[object]) -> pygit2.Patch | None:
    """A file↔symlink change with its content, the old bytes against the new (the link target), as the work-tree
    diff shows it: libgit2 gives a typechange no hunks at all (git shows both sides). The new side is read from the
    work tree when it is not stored (libgit2's work-tree diff, taken whenever a ``.gitattributes`` exists)."""
    try:
        old = repo[sides[0]].peel(pygit2.Blob)
    except (KeyError, ValueError, pygit2.GitError):
        return whole()  # a submodule's commit
    new: pygit2.Blob | bytes | None
    try:
        new = repo[sides[1]].peel(pygit2.Blob)
    except (KeyError, ValueError, pygit2.GitError):
        new = _disk_side(workdir / path) if workdir is not None else None
        if new is None:
            return whole()
        keep.append(new)
    name = os.fsencode(path).decode("utf-8", errors="replace")  # libgit2 wants UTF-8 here, as below
    return pygit2.Patch.create_from(old, new, old_as_path=name, new_as_path=name, context_lines=context_lines)


def _disk_side(full: Path) -> bytes | None:
    """A work-tree side as git hashes it: a symlink's target, a file's bytes; ``None`` when neither is there."""
    try:
        if full.is_symlink():
            return os.fsencode(os.readlink(full))
        return full.read_bytes() if full.is_file() else None
    except OSError:
        return None


def _worktree_sources(repo: pygit2.Repository, changes: list[WorktreeChange],
                      context_lines: int) -> Iterator[PatchSource]:
    for change in changes:
        old = repo[change.old_oid]
        assert isinstance(old, pygit2.Blob)

        def make(old: pygit2.Blob = old, change: WorktreeChange = change) -> pygit2.Patch | None:
            # libgit2 wants UTF-8 here (it only picks diff attributes by name); the real name is kept outside.
            name = os.fsencode(change.path).decode("utf-8", errors="replace")
            return pygit2.Patch.create_from(old, change.data, old_as_path=name, new_as_path=name,
                                            context_lines=context_lines)

        kind: FileStatusName = "deleted" if change.data is None else \
            "typechange" if change.kind == "typechange" else "modified"
        yield change.path, change.path, make, kind, (change.old_mode, change.new_mode)


def _with_conflicts(repo: pygit2.Repository, items: Iterable[PatchSource], context_lines: int) -> list[PatchSource]:
    """``items`` with each conflicted path shown as our side (stage 2) against the file on disk, status
    ``conflicted`` (``git diff --ours``): libgit2 has no stage-0 entry to compare and reports an empty change."""
    conflicts = repo.index.conflicts
    if conflicts is None:
        return list(items)
    workdir = Path(repo.workdir or ".")
    keep: list[object] = []  # a patch reads its blob and bytes lazily: they must outlive it
    extra: dict[str, PatchSource] = {}
    for ancestor, ours, theirs in conflicts:
        path = (ours or theirs or ancestor).path

        def make(path: str = path, ours: pygit2.IndexEntry | None = ours) -> pygit2.Patch | None:
            old = repo[ours.id].peel(pygit2.Blob) if ours is not None else None
            try:
                data: bytes | None = (workdir / path).read_bytes()
            except (FileNotFoundError, IsADirectoryError):
                data = None
            keep.extend((old, data))
            name = os.fsencode(path).decode("utf-8", errors="replace")
            return pygit2.Patch.create_from(old, data, old_as_path=name, new_as_path=name,
                                            context_lines=context_lines)

        extra[path] = (path, path, make, "conflicted", None)
    kept = [item for item in items if item[1] not in extra and item[0] not in extra]
    return sorted(kept + list(extra.values()), key=lambda item: item[1])


#: What counts the whole of a diff whose files run past the page, given the paths filter, or ``None`` to count with
#: the patches as before (:func:`codeplane.git.tree_stats.totals` for two commits).
Totals = Callable[[Sequence[str]], tree_stats.TreeTotals | None]


def render(items: Iterable[PatchSource], label: str, paths: Sequence[str], limits: DiffLimits,
           totals: Totals | None = None) -> DiffReport:
    """Bounded structured form of the patches restricted to ``paths`` (canonical, git's globs included; empty =
    all). Patches are made for the listed files only when ``totals`` counts the whole diff: one past the page
    stops the walk (a patch per file cost twice ``git show --stat`` on a 6,890-file commit)."""
    files: list[DiffFile] = []
    budget = [limits.max_lines]
    insertions = deletions = matched = 0
    whole: tree_stats.TreeTotals | None = None
    for old_path, new_path, make, status, modes in items:
        if paths and not (matches(new_path, paths) or matches(old_path, paths)):
            continue
        if matched == limits.max_files and totals is not None and (whole := totals(paths)) is not None:
            break
        patch = make()
        if patch is None:
            continue
        matched += 1
        with_hunks = limits.include_hunks and matched <= limits.max_files
        entry = _file(patch, (old_path, new_path), limits, budget, with_hunks=with_hunks, status_override=status,
                      modes=modes)
        insertions += entry.insertions
        deletions += entry.deletions
        if matched <= limits.max_files:
            files.append(entry)
    if whole is not None:
        # git's count of every file, the listed ones too (renames found at the same 50% as the listing's).
        matched, insertions, deletions = max(whole.files, len(files)), whole.insertions, whole.deletions
    omitted_files = matched - len(files)
    omitted_lines = sum(h.lines_omitted for f in files for h in f.hunks)
    omitted_hunks = sum(f.hunks_omitted for f in files)
    notes = []
    if omitted_files:
        notes.append(f"{omitted_files} more files (raise max_files or narrow paths)")
    if omitted_hunks:
        notes.append(f"{omitted_hunks} more hunks (raise max_hunks_per_file)")
    if omitted_lines:
        notes.append(f"{omitted_lines} more lines (raise max_lines or narrow paths)")
    return DiffReport(
        compared=label, files=files,
        stats=DiffStats(files_changed=matched, insertions=insertions, deletions=deletions),
        files_omitted=omitted_files, truncated=bool(notes),
        truncation=("diff truncated: " + "; ".join(notes)) if notes else None,
    )


def diff(repo: pygit2.Repository, *, base: str | None = None, target: str | None = None, staged: bool = False,
         paths: Sequence[str] = (), limits: DiffLimits = DiffLimits()) -> DiffReport:
    if base is None and target is None and not staged and repo.workdir:
        # The common case (unstaged changes) without libgit2's directory walk; see worktree_scan.
        changes = worktree_scan.scan(repo, Path(repo.workdir))
        if changes is not None:
            return render(_worktree_sources(repo, changes, limits.context_lines), "index..worktree", paths, limits)
    raw, label = compute(repo, base, target, staged, limits.context_lines)
    if base is None and target is None and not staged:  # index..worktree: a conflicted file has no stage 0
        # Outside a sparse checkout's cone the work tree is not looked at (libgit2 calls such files deleted).
        outside = sparse.skip_worktree_paths(repo)
        items = [item for item in sources(raw, repo, limits.context_lines, _workdir(repo)) if item[1] not in outside]
        items = _as_git_converts(repo, raw, items, base=None, paths=paths, context_lines=limits.context_lines)
        items = _without_untracked_dirt(repo, raw, items, limits.context_lines)
        return render(_with_conflicts(repo, items, limits.context_lines), label, paths, limits)
    if target is None and not staged:  # ``git diff <rev>``: the work tree too
        items = list(sources(raw, repo, limits.context_lines, _workdir(repo)))
        assert base is not None
        items = _as_git_converts(repo, raw, items, base=resolve_commit(repo, base, "base").id, paths=paths,
                                 context_lines=limits.context_lines)
        return render(_without_untracked_dirt(repo, raw, items, limits.context_lines), label, paths, limits)
    counted: Totals | None = None
    if target is not None:  # two commits: git counts what runs past the page
        old = resolve_commit(repo, base if base is not None else "HEAD", "base").id
        counted = partial(tree_stats.totals, repo, old, resolve_commit(repo, target, "target").id)
    return render(sources(raw, repo, limits.context_lines), label, paths, limits, counted)


def _as_git_converts(repo: pygit2.Repository, raw: pygit2.Diff, items: list[PatchSource], *,
                     base: pygit2.Oid | None, paths: Sequence[str], context_lines: int) -> list[PatchSource]:
    """``items`` (of ``raw``, whose new side is the work tree) with each file git converts and libgit2 does not
    (:mod:`codeplane.git.converted`) as git diffs it: libgit2 compared its smudged bytes with the cleaned blob, so a
    file only touched was "modified". Renames pairing such a file go to git whole, both sides."""
    conflicts = repo.index.conflicts
    conflicted = {(ours or theirs or ancestor).path for ancestor, ours, theirs in conflicts} \
        if conflicts is not None else set()
    on_disk = {d.new_file.path for d in raw.deltas
               if d.status_char() not in ("D", "U") and d.new_file.path not in conflicted
               and (matches(d.new_file.path, paths) or matches(d.old_file.path, paths))}
    hit = set(converted.converted(repo, on_disk))
    if not hit:
        return items
    asked = hit | {d.old_file.path for d in raw.deltas if d.new_file.path in hit}
    parsed = converted.worktree_diff(repo, sorted(asked), base=base, context_lines=context_lines)
    if parsed is None:
        return items
    kept = [item for item in items if item[0] not in asked and item[1] not in asked]
    return sorted(kept + list(sources(parsed)), key=lambda item: item[1])


def _without_untracked_dirt(repo: pygit2.Repository, raw: pygit2.Diff, items: list[PatchSource],
                            context_lines: int) -> list[PatchSource]:
    """``items`` with each submodule that holds only untracked files shown as ``git diff`` shows it: no
    ``-dirty`` (git's diff ignores a submodule's untracked files), so nothing at all when its checked-out commit
    is the compared one. libgit2 marks it dirty."""
    links = {d.new_file.path: (d.old_file.id, d.new_file.id) for d in raw.deltas
             if d.new_file.mode == FileMode.COMMIT and d.old_file.mode == FileMode.COMMIT}
    if not links:
        return items
    out: list[PatchSource] = []
    for item in items:
        sides = links.get(item[1])
        if sides is None or not _untracked_only(repo, item[1]):
            out.append(item)
        elif sides[0] != sides[1]:
            old, new = (f"Subproject commit {oid}\n".encode() for oid in sides)
            name = os.fsencode(item[1]).decode("utf-8", errors="replace")
            out.append((item[0], item[1], partial(pygit2.Patch.create_from, old, new, old_as_path=name,
                                                  new_as_path=name, context_lines=context_lines), None, None))
    return out


def _untracked_only(repo: pygit2.Repository, path: str) -> bool:
    try:
        flags = repo.submodules.status(path)
    except (KeyError, ValueError, pygit2.GitError):
        return False
    dirt = SubmoduleStatus.WD_INDEX_MODIFIED | SubmoduleStatus.WD_WD_MODIFIED  # git's -dirty: tracked files changed
    return bool(flags & SubmoduleStatus.WD_UNTRACKED) and not flags & dirt


def _workdir(repo: pygit2.Repository) -> Path | None:
    return Path(repo.workdir) if repo.workdir else None


def commit_diff(repo: pygit2.Repository, commit: pygit2.Commit, limits: DiffLimits,
                paths: Sequence[str] = ()) -> DiffReport:
    """A commit against its first parent (root commits against the empty tree), as ``git show`` does."""
    parent = commit.parents[0].tree if commit.parents else empty_tree(repo)
    raw = parent.diff_to_tree(commit.tree, context_lines=limits.context_lines, flags=_FLAGS)
    raw.find_similar(DiffFind.FIND_RENAMES)
    label = f"{commit.parents[0].id if commit.parents else 'empty'}..{commit.id}"
    counted = partial(tree_stats.totals, repo, commit.parents[0].id if commit.parents else None, commit.id)
    return render(sources(raw, repo, limits.context_lines), label, paths, limits, counted)
