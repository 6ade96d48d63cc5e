"""``git_diff``: structured, bounded diffs between trees, the index and the working tree.

Which sides are compared follows ``git diff``: nothing → index vs working tree; ``staged`` → HEAD (or
``base``) vs index; ``base`` → that commit vs working tree (through the index, like ``git diff <rev>``);
``base`` + ``target`` → two commits. Renames are detected (git's default 50% similarity).
Bounds: at most ``max_files`` files with hunks, ``max_hunks_per_file`` hunks each and ``max_lines``
lines overall; anything cut is counted and ``truncation`` says how to see it. ``stats`` always cover
the whole (path-filtered) diff.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import pygit2
from pygit2.enums import DiffFind

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.models import GitModel
from codeplane.git.pathspecs import shown, under
from codeplane.git.revisions import empty_tree, head_tree, resolve_commit

FileStatusName = Literal["added", "modified", "deleted", "renamed", "copied", "typechange", "conflicted"]
_STATUS: dict[str, FileStatusName] = {
    "A": "added", "M": "modified", "D": "deleted", "R": "renamed", "C": "copied", "T": "typechange",
    "U": "conflicted",
}


class DiffLine(GitModel):
    origin: Literal["+", "-", " "]
    content: str
    old_lineno: int | None = None
    new_lineno: int | None = None


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
        diff = old.tree.diff_to_tree(new.tree, context_lines=context_lines)
        label = f"{old.id}..{new.id}"
    elif staged:
        tree = resolve_commit(repo, base, "base").tree if base is not None else head_tree(repo)
        diff = tree.diff_to_index(repo.index, context_lines=context_lines)
        label = f"{base or 'HEAD'}..index"
    elif base is not None:
        # git diff <rev>: the tree against the working tree as seen through the index.
        diff = resolve_commit(repo, base, "base").tree.diff_to_index(repo.index, context_lines=context_lines)
        diff.merge(repo.index.diff_to_workdir(context_lines=context_lines))
        label = f"{base}..worktree"
    else:
        diff = repo.index.diff_to_workdir(context_lines=context_lines)
        label = "index..worktree"
    diff.find_similar(DiffFind.FIND_RENAMES)
    return diff, label


def _file(patch: pygit2.Patch, limits: DiffLimits, budget: list[int], with_hunks: bool) -> DiffFile:
    delta = patch.delta
    _, insertions, deletions = patch.line_stats
    status = _STATUS.get(delta.status_char(), "modified")
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
                origin = line.origin
                if origin not in ("+", "-", " "):
                    continue  # "\ No newline at end of file" markers
                if budget[0] <= 0:
                    omitted += 1
                    continue
                budget[0] -= 1
                lines.append(DiffLine(
                    origin=origin, content=line.content.rstrip("\n"),
                    old_lineno=line.old_lineno if line.old_lineno >= 0 else None,
                    new_lineno=line.new_lineno if line.new_lineno >= 0 else None,
                ))
            hunks.append(DiffHunk(old_start=hunk.old_start, old_lines=hunk.old_lines, new_start=hunk.new_start,
                                  new_lines=hunk.new_lines, header=hunk.header.rstrip("\n"), lines=lines,
                                  lines_omitted=omitted))
    return DiffFile(
        path=shown(delta.new_file.path if status != "deleted" else delta.old_file.path),
        status=status, old_path=shown(delta.old_file.path) if renamed else None, binary=bool(delta.is_binary),
        insertions=insertions, deletions=deletions, hunks=hunks, hunks_omitted=hunks_omitted,
    )


def render(diff: pygit2.Diff, label: str, paths: Sequence[str], limits: DiffLimits) -> DiffReport:
    """Bounded structured form of ``diff`` restricted to ``paths`` (canonical; empty = all)."""
    files: list[DiffFile] = []
    budget = [limits.max_lines]
    insertions = deletions = matched = 0
    for i, delta in enumerate(diff.deltas):
        if paths and not (under(delta.new_file.path, paths) or under(delta.old_file.path, paths)):
            continue
        patch = diff[i]
        if patch is None:
            continue
        matched += 1
        with_hunks = limits.include_hunks and matched <= limits.max_files
        entry = _file(patch, limits, budget, with_hunks)
        insertions += entry.insertions
        deletions += entry.deletions
        if matched <= limits.max_files:
            files.append(entry)
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
    raw, label = compute(repo, base, target, staged, limits.context_lines)
    return render(raw, label, paths, limits)


def commit_diff(repo: pygit2.Repository, commit: pygit2.Commit, limits: DiffLimits) -> DiffReport:
    """A commit against its first parent (root commits against the empty tree), as ``git show`` does."""
    parent = commit.parents[0].tree if commit.parents else empty_tree(repo)
    raw = parent.diff_to_tree(commit.tree, context_lines=limits.context_lines)
    raw.find_similar(DiffFind.FIND_RENAMES)
    return render(raw, f"{commit.parents[0].id if commit.parents else 'empty'}..{commit.id}", (), limits)
