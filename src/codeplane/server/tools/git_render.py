"""Text renderings of git answers, shaped like the git CLI output an agent already reads.

A diff is a unified diff (``git diff`` form, with each file's status and counts in its header), a log is
``git log --oneline``-like with full ids (the next call may pass them as refs), a status is
``git status --short``-like. Every id and cursor of the structured answer appears (answers.py).
"""

from __future__ import annotations

from codeplane.git.diffs import DiffReport
from codeplane.git.log import CommitInfo
from codeplane.git.show import ShowResult
from codeplane.git.status import StatusReport


def render_diff(report: DiffReport) -> str:
    stats = report.stats
    lines = [f"diff {report.compared}: {stats.files_changed} files, +{stats.insertions} -{stats.deletions}"]
    for f in report.files:
        name = f"{f.old_path} -> {f.path}" if f.old_path else f.path
        lines.append(f"--- {f.status} {name} +{f.insertions} -{f.deletions}" + (" (binary)" if f.binary else ""))
        for hunk in f.hunks:
            header = hunk.header.strip()
            if not header.startswith("@@"):
                header = f"@@ -{hunk.old_start},{hunk.old_lines} +{hunk.new_start},{hunk.new_lines} @@ {header}"
            lines.append(header.rstrip())
            lines += [f"{line.origin}{line.content.rstrip(chr(10))}" for line in hunk.lines]
            if hunk.lines_omitted:
                lines.append(f"… {hunk.lines_omitted} lines omitted")
        if f.hunks_omitted:
            lines.append(f"… {f.hunks_omitted} hunks omitted")
    if report.files_omitted:
        lines.append(f"… {report.files_omitted} files omitted")
    if report.truncation:
        lines.append(report.truncation)
    return "\n".join(lines)


def commit_line(commit: CommitInfo) -> str:
    return f"{commit.oid} {commit.author.time[:10]} {commit.author.name}: {commit.summary}"


def render_log(commits: list[CommitInfo], next_cursor: str | None) -> str:
    lines = [commit_line(c) for c in commits] or ["no commits"]
    if next_cursor:
        lines.append(f"next cursor: {next_cursor}")
    return "\n".join(lines)


def render_status(report: StatusReport) -> str:
    head = f"## {report.branch or 'HEAD (detached)'} {report.head_commit or '(no commits)'}"
    if report.upstream:
        head += f" ... {report.upstream} [ahead {report.ahead or 0}, behind {report.behind or 0}]"
    if report.state != "none":
        head += f" state={report.state}"
    lines = [head]
    lines += [f"{e.status[:1].upper()}  {e.path}" for e in report.staged]
    lines += [f" {e.status[:1].upper()} {e.path}" for e in report.modified]
    lines += [f"?? {path}" for path in report.untracked]
    for c in report.conflicts:
        oids = " ".join(f"{k}={v}" for k, v in (("ancestor", c.ancestor_oid), ("ours", c.ours_oid),
                                                   ("theirs", c.theirs_oid)) if v)
        lines.append(f"UU {c.path} {oids}".rstrip())
    if report.is_clean:
        lines.append("clean")
    if report.truncated:
        lines.append("(lists cut at limit)")
    return "\n".join(lines)


def render_show(show: ShowResult) -> str:
    lines = [f"{show.kind} {show.oid}"]
    if show.commit is not None:
        c = show.commit
        lines.append(f"author {c.author.name} <{c.author.email}> {c.author.time}")
        if c.parents:
            lines.append("parents " + " ".join(c.parents))
        lines.append(c.message.rstrip())
    if show.blob is not None and show.blob.text is not None:
        lines.append(show.blob.text.rstrip("\n"))
    lines += [f"{e.kind} {e.oid} {e.name}" for e in show.entries]
    if show.diff is not None:
        lines.append(render_diff(show.diff))
    return "\n".join(lines)
