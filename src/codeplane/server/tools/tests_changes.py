"""What changed, for impact selection: ``affected_by`` items checked, and their changed lines from git.

A file given without lines takes the lines that differ from a base revision: HEAD (uncommitted changes), or
``changed_since`` (a commit, branch or tag: the review of a commit or a branch). ``changed_since`` alone names
every file changed from that revision to the work tree, as ``git diff <rev>`` does (untracked files are not
in it). A path that is nowhere (neither on disk nor deleted since the base) is refused: a mistyped path
selected nothing and answered as a complete, green selection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import resolve_in_repo
from codeplane.git.diffs import DiffLimits, DiffReport
from codeplane.server.services import Services
from codeplane.testing.impact import parse_changes

if TYPE_CHECKING:
    from codeplane.git import GitService  # at boot, git's service is deferred to its first use

#: The most changed files one selection takes (``affected_by``'s own bound).
MAX_CHANGED_FILES = 2000
Spans = dict[str, list[tuple[int, int]]]


@dataclass(frozen=True)
class Changes:
    """The changed files to select by (``None``: no selection asked) and their changed lines by path."""

    items: list[str] | None
    ranges: Spans = field(default_factory=dict)


def changes(services: Services, affected_by: Sequence[str] | None, since: str | None) -> Changes:
    """The selection ``affected_by`` and ``changed_since`` ask for: 5004 for a path that is nowhere, 1003 for
    lines past a file's end or more than :data:`MAX_CHANGED_FILES` files changed since, 8002 for a revision that
    names no commit."""
    if since is None:
        _check(services, affected_by or (), "HEAD")
        return Changes(None if affected_by is None else list(affected_by),
                       _lines(services, affected_by or (), "HEAD"))
    git = _git(services)
    if affected_by is not None:
        _check(services, affected_by, since)
        return Changes(list(affected_by), _lines(services, affected_by, since))
    report = _diff(git, since, ())
    if report.files_omitted:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"more than {MAX_CHANGED_FILES} files changed since "
                             f"{since}: too many to select by; run the whole suite (no affected_by, no "
                             "changed_since)", details={"field": "changed_since", "limit": MAX_CHANGED_FILES})
    items = sorted({p for f in report.files for p in (f.path, f.old_path) if p})
    return Changes(items, _spans(report))


def _git(services: Services) -> GitService:
    git: GitService | None = getattr(services, "git", None)
    if git is None:
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "changed_since needs a git repository",
                             details={"field": "changed_since"})
    return git


def _diff(git: GitService, base: str, paths: Sequence[str]) -> DiffReport:
    try:
        return git.diff(base=base, paths=paths, limits=DiffLimits(
            max_files=len(paths) + 1 if paths else MAX_CHANGED_FILES, max_hunks_per_file=2000, max_lines=50_000,
            context_lines=0))
    except CodePlaneError as exc:
        if exc.error is ErrorCode.GIT_REF_NOT_FOUND and base != "HEAD":
            raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"changed_since {base!r} names no commit",
                                 details={"field": "changed_since", "ref": base}) from exc
        if exc.error is ErrorCode.INVALID_ARGUMENTS and base != "HEAD" and exc.details.get("field") == "base":
            # git's diff names its own parameter; the caller gave ``changed_since``.
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, exc.message.replace("base", "changed_since", 1),
                                 details={**exc.details, "field": "changed_since"}) from exc
        raise


def _lines(services: Services, items: Sequence[str], base: str) -> Spans:
    """For changed files given without lines, the lines that differ from ``base``; a file git cannot say
    (untracked, binary, too many hunks, no repository, no commit yet) gets none: it is selected at module
    level."""
    wanted = sorted({i.strip().removeprefix("./") for i in items if ":" not in i})
    git: GitService | None = getattr(services, "git", None)
    if not wanted or git is None:
        return {}
    try:
        return _spans(_diff(git, base, wanted))
    except CodePlaneError:
        if base != "HEAD":
            raise  # a revision the caller named: its error is theirs to see
        return {}


def _spans(report: DiffReport) -> Spans:
    """Added and replacing lines, and the lines around a pure removal (a replaced line is its new line alone, not
    the line above it too), as the files are now; a hunk whose lines were cut off counts whole. A file added
    since the base changed in every line."""
    ranges: Spans = {}
    for changed in report.files:
        if changed.binary or changed.hunks_omitted or changed.status not in ("modified", "renamed", "copied",
                                                                             "added"):
            continue
        spans: list[tuple[int, int]] = []
        for hunk in changed.hunks:
            if hunk.lines_omitted:
                spans.append((hunk.new_start, hunk.new_start + max(hunk.new_lines, 1)))
                continue
            previous = hunk.new_start - 1
            removed = False  # a run of ``-`` lines not (yet) replaced by ``+`` lines
            for line in hunk.lines:
                if line.origin == "-":
                    removed = True
                    continue
                if line.new_lineno is None:
                    continue
                if removed and line.origin != "+":  # a pure removal: the lines around where it was
                    spans.append((max(1, previous), previous + 1))
                removed = False
                previous = line.new_lineno
                if line.origin == "+":
                    spans.append((previous, previous))
            if removed:
                spans.append((max(1, previous), previous + 1))
        if spans:
            ranges[changed.path] = _merged(spans)
    return ranges


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Touching and overlapping spans as one (an added file is one span, not a span per line)."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _check(services: Services, items: Sequence[str], base: str) -> None:
    """5001 for a changed path in ``.git`` or through a symlink out of the repository (its lines were counted:
    ``/etc/passwd`` read through ``outlink/passwd``), 5004 for one that is neither in the work tree nor in
    ``base`` (a deleted file is), 1003 for lines past a file's end."""
    paths, ranges = parse_changes(items)
    missing: list[str] = []
    for path in dict.fromkeys(paths):
        resolve_in_repo(services.root, path)
        disk = services.root / path
        if not disk.exists():
            missing.append(path)
            continue
        if disk.is_file() and ranges.get(path):
            count = _line_count(disk)
            last = max(end for _, end in ranges[path])
            if last > count:
                raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{path} has {count} lines; line {last} was "
                                     "given as changed", details={"path": path, "line_count": count, "line": last})
    git: GitService | None = getattr(services, "git", None)
    if not missing or git is None:
        return
    try:
        report = _diff(git, base, missing)
    except CodePlaneError:
        if base != "HEAD":
            raise
        return
    deleted = {f.path for f in report.files if f.status == "deleted"}
    # A moved file's old path (``write_source`` names both in tests_affected_by) is gone from the work tree but
    # in the base: a change as much as a deletion.
    deleted |= {f.old_path for f in report.files if f.old_path}
    unknown = [p for p in missing if p not in deleted and not _in_revision(git, base, p)]
    if unknown:
        raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{unknown[0]} is not in the work tree, and git's {base} has "
                             "no such file that was deleted", details={"paths": unknown[:20]})


def _in_revision(git: GitService, base: str, path: str) -> bool:
    try:
        git.show(base, path, limits=DiffLimits(max_files=1, max_lines=1))
    except CodePlaneError:
        return False
    return True


def _line_count(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
