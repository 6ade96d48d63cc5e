"""Text renderings of git answers, shaped like the git CLI output an agent already reads.

A diff is a unified diff (``git diff`` form, with each file's status and counts in its header), a log is
``git log --oneline``-like with 12-digit ids (the next call may pass them as refs: git resolves a short id
as it does on the command line; the record has them whole), a status is
``git status --short``-like, a write its outcome and its effect (HEAD and refs moved, paths with their new
sha256, the recovery point). Every id and cursor of the structured answer appears (answers.py).
"""

from __future__ import annotations

from codeplane.git.blame import BlamePage
from codeplane.git.diffs import DiffReport
from codeplane.git.history import HistoryPage
from codeplane.git.log import CommitInfo
from codeplane.git.show import BLOB_LIMIT, ShowResult
from codeplane.git.status import StatusReport
from codeplane.repo.universe import quoted_path

#: Hex digits of a commit id in a text (git itself shows 7; refs accept the short form; the record has them
#: whole).
_OID_HEX = 12


def path_text(path: str) -> str:
    """A path as a text line shows it: quoted with C escapes as git's ``core.quotePath`` quotes it (``"a\\nb"``,
    as search and list_files show it) when it holds a control character, since a newline in a name would read
    as a second, made-up status line, or when it starts with a double quote, which would read as quoted."""
    if path.isprintable() and not path.startswith('"'):
        return path
    return quoted_path(path)


def _short_oids(label: str) -> str:
    return "..".join(side[:_OID_HEX] if len(side) == 40 and all(c in "0123456789abcdef" for c in side)
                     else side for side in label.split(".."))


def render_diff(report: DiffReport, *, labelled: bool = True) -> str:
    """Head line (what was compared; the totals when more than one file), then per file ``--- status path +a
    -d`` and its hunks as git prints them. Unlabelled (a commit's diff from its only parent, which ``git show``
    does not name either: ``<commit>~1`` reaches it), the head line is the totals alone, or nothing for one
    file."""
    stats = report.stats
    totals = f"{stats.files_changed} files, +{stats.insertions} -{stats.deletions}" \
        if stats.files_changed != 1 or len(report.files) != 1 else ""
    head = f"diff {_short_oids(report.compared)}" + (f": {totals}" if totals else "") if labelled else totals
    lines = [head] if head else []
    for f in report.files:
        name = f"{path_text(f.old_path)} -> {path_text(f.path)}" if f.old_path else path_text(f.path)
        lines.append(f"--- {f.status} {name} +{f.insertions} -{f.deletions}" + (" (binary)" if f.binary else ""))
        if f.old_mode and f.new_mode:  # git's own header lines: a chmod alone has no hunk to show it
            lines += [f"old mode {f.old_mode}", f"new mode {f.new_mode}"]
        # Hunks past ``max_lines`` keep no line: counted on one line, not a header and a stub each (83 of them).
        empty = [h for h in f.hunks if not h.lines and h.lines_omitted]
        for hunk in f.hunks:
            if len(empty) > 1 and not hunk.lines and hunk.lines_omitted:
                continue
            header = hunk.header.strip()
            if not header.startswith("@@"):
                header = f"@@ -{hunk.old_start},{hunk.old_lines} +{hunk.new_start},{hunk.new_lines} @@ {header}"
            lines.append(header.rstrip())
            for line in hunk.lines:
                lines.append(f"{line.origin}{line.content.rstrip(chr(10))}")
                if line.no_newline:
                    lines.append("\\ No newline at end of file")
            if hunk.lines_omitted:
                lines.append(f"… {hunk.lines_omitted} lines omitted")
        if len(empty) > 1:
            lines.append(f"… {len(empty)} more hunks, {sum(h.lines_omitted for h in empty)} lines omitted")
        if f.hunks_omitted:
            lines.append(f"… {f.hunks_omitted} hunks omitted")
    notes = report.truncation
    if report.files_omitted:
        # One line for the files left out, with the max_files that lists them all (the truncation note said the
        # count again and only "raise max_files").
        every = stats.files_changed
        lines.append(f"… {report.files_omitted} files omitted: " + (
            f"max_files={every} lists all" if every <= MAX_FILES_ASKED else "narrow paths"))
        told = f"{report.files_omitted} more files "
        left = [n for n in (notes or "").removeprefix("diff truncated: ").split("; ") if n and not n.startswith(told)]
        notes = "diff truncated: " + "; ".join(left) if left else None
    if notes:
        lines.append(notes)
    return "\n".join(lines)


#: The most files a diff's ``max_files`` may ask for (git_read's schema bound).
MAX_FILES_ASKED = 2000


def commit_line(commit: CommitInfo) -> str:
    return f"{commit.oid[:_OID_HEX]} {commit.author.time[:10]} {commit.author.name}: {commit.summary}"


def render_log(commits: list[CommitInfo], next_cursor: str | None) -> str:
    lines = [commit_line(c) for c in commits] or ["no commits"]
    if next_cursor:
        lines.append(f"next cursor: {next_cursor}")
    return "\n".join(lines)


#: git status's two letters for an unmerged path, by which stages it has (ancestor, ours, theirs): ``UD`` deleted by
#: them, ``DU`` deleted by us, ``AA`` both added, and so on.
_UNMERGED = {(True, True, True): "UU", (True, True, False): "UD", (True, False, True): "DU",
             (False, True, True): "AA", (False, True, False): "AU", (False, False, True): "UA",
             (True, False, False): "DD", (False, False, False): "UU"}


#: A submodule at its recorded commit with changed or untracked files: git's lower-case letters (nothing to stage).
_WT_LETTER = {"modified content": "m", "untracked content": "?"}


def render_status(report: StatusReport) -> str:
    # A 12-digit id like the log's: every ref argument accepts it.
    commit = report.head_commit[:_OID_HEX] if report.head_commit else "(no commits)"
    head = f"## {report.branch or 'HEAD (detached)'} {commit}"
    if report.upstream and report.upstream_gone:
        head += f" ... {report.upstream} [gone]"
    elif report.upstream:
        head += f" ... {report.upstream} [ahead {report.ahead or 0}, behind {report.behind or 0}]"
    if report.state != "none":
        head += f" state={report.state}"
    lines = [head]
    if report.sequence:
        lines.append(f"between picks: {report.sequence}")
    lines += [f"{e.status[:1].upper()}  {path_text(e.old_path)} -> {path_text(e.path)}" if e.old_path
              else f"{e.status[:1].upper()}  {path_text(e.path)}" for e in report.staged]
    lines += [f" {_WT_LETTER.get(e.status, e.status[:1].upper())} {path_text(e.path)}" for e in report.modified]
    lines += [f"?? {path_text(path)}" for path in report.untracked]
    for c in report.conflicts:
        oids = " ".join(f"{k}={v[:_OID_HEX]}" for k, v in (("ancestor", c.ancestor_oid), ("ours", c.ours_oid),
                                                   ("theirs", c.theirs_oid)) if v)
        letters = _UNMERGED[(bool(c.ancestor_oid), bool(c.ours_oid), bool(c.theirs_oid))]
        lines.append(f"{letters} {path_text(c.path)} {oids}".rstrip())
    if report.is_clean:
        lines.append("clean")
    if report.truncated:  # each cut list's whole count, and how to see the rest (paths narrows, limit widens)
        cut = [f"{total - (len(shown) if listed is None else listed):,} more {name}"
               for name, shown, listed, total in (
                   ("staged", report.staged, report.staged_listed, report.staged_total),
                   ("modified", report.modified, report.modified_listed, report.modified_total),
                   ("untracked", report.untracked, report.untracked_listed, report.untracked_total))
               if total > (len(shown) if listed is None else listed)]
        lines.append(f"… {', '.join(cut) or 'more'} (narrow with paths, or raise limit)")
    return "\n".join(lines)


def render_show(show: ShowResult) -> str:
    """``git show``-like: a commit as its ``git log --oneline``-like line (a merge's parents after it; like
    ``git show``, one parent is not named) and its message, then its diff; a tag as its name, id and
    target; a blob as its text; a tree as its entries. Ids at 12 digits like the log's (refs accept them);
    emails, full timestamps and 40-digit ids are left to the record."""
    lines: list[str] = []
    if show.tag is not None:
        t = show.tag
        lines.append(f"tag {t.name} {show.oid[:_OID_HEX]} -> {t.target[:_OID_HEX]}"
                     + (f" {t.tagger.time[:10]} {t.tagger.name}" if t.tagger else ""))
        lines += [t.message.rstrip()] if t.message.strip() else []
        if t.message_truncated:
            lines.append("… message cut")
    if show.commit is not None:
        c = show.commit
        head = f"commit {c.oid[:_OID_HEX]} {c.author.time[:10]} {c.author.name}"
        if len(c.parents) > 1:
            head += " merge of " + " ".join(p[:_OID_HEX] for p in c.parents)
        lines += [head, c.message.rstrip()]
        if c.message_truncated:
            lines.append("… message cut")
    elif show.tag is None:
        lines.append(f"{show.kind} {show.oid[:_OID_HEX]}")
    blob = show.blob
    if blob is not None:
        if blob.text is not None:
            lines.append(blob.text.rstrip("\n"))
        if blob.binary or blob.truncated:
            lines.append(f"(binary, {blob.size} bytes)" if blob.binary
                         else f"(first {BLOB_LIMIT} of {blob.size} bytes)")
    lines += [f"{e.kind} {e.oid[:_OID_HEX]} {path_text(e.name)}" for e in show.entries]
    if show.entries_total is not None and show.entries_total > len(show.entries):
        lines.append(f"… {show.entries_total - len(show.entries)} more entries")
    if show.diff is not None:
        parents = show.commit.parents if show.commit is not None else []
        lines.append(render_diff(show.diff, labelled=not (len(parents) == 1
                                                            and show.diff.compared == f"{parents[0]}..{show.oid}")))
    return "\n".join(lines)


def render_history(page: HistoryPage) -> str:
    """``git log --follow``-like: a commit per line with what happened to the file, and its name where it changes
    (``as old/name.py`` on the first older commit that had it, not on each of them)."""
    lines = []
    name = page.path
    for e in page.entries:
        what = e.change + (f" from {path_text(e.old_path)}" if e.old_path else "") + (
            f" as {path_text(e.path)}" if e.path != name else "")
        name = e.path
        if e.line_range:
            what += f" lines {e.line_range[0]}-{e.line_range[1]}"
        lines.append(f"{e.oid[:_OID_HEX]} {e.author.time[:10]} {e.author.name}: {e.summary} [{what}]")
    if page.pagination.next_cursor:
        lines.append(f"next cursor: {page.pagination.next_cursor}")
    return "\n".join(lines) or "no history"


def render_blame(page: BlamePage) -> str:
    """``git blame``-like, a hunk per line: lines, commit (12 digits, a ref git_inspect accepts), date,
    author, summary; where the lines came from when the file was renamed or they moved."""
    lines = [f"blame {path_text(page.path)} @ {page.commit[:_OID_HEX]} ({page.total_lines} lines)"]
    for h in page.hunks:
        came = f" (from {path_text(h.orig_path)}:{h.orig_start_line})" if h.orig_path != page.path else ""
        lines.append(f"{h.start_line}-{h.start_line + h.lines - 1} {h.commit[:_OID_HEX]} "
                     f"{h.author.time[:10]} {h.author.name}: {h.summary}{came}")
    if page.pagination.next_cursor:
        lines.append(f"next cursor: {page.pagination.next_cursor}")
    return "\n".join(lines)
