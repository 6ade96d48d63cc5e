"""Git answers cut into pages whose text fits (``paging.py``): a diff by files, hunks and hunk lines, a blob
by lines of its text, a long commit or tag message by its lines (parts of their own, before the diff), a tree by
entries, a status by its lists' entries. Every page is a record of the same
model holding its part; the parts of all pages together are the whole answer, in order, each value once, but for
a diff line over :data:`LINE_BYTES` (minified code, a data blob on one line): it is shown as a window around its
first difference from its counterpart, with markers saying how many characters were cut on each side, since one
such line alone could make a part of megabytes (the official client fails an event over 1 MiB)."""

from __future__ import annotations

from typing import Any

from codeplane.git.diffs import DiffFile, DiffHunk, DiffLine, DiffReport
from codeplane.git.show import ShowResult
from codeplane.git.status import StatusReport
from codeplane.server.tools.git_render import path_text
from codeplane.server.tools.paging import PAGE_BYTES, chunk_text, size

#: Bytes of a line's rendering beyond its content: origin, newline.
_LINE_EXTRA = 2
#: Most UTF-8 bytes of one diff line's content a part shows (markers included): a few fit on a page with their
#: hunk's head, and a window this wide shows a change inside a minified line with its surroundings.
LINE_BYTES = 4 * 1024
#: Characters shown before the first difference, so that the change is read in its context.
_LEAD = 200


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, by bisection: slice compares run in C, a character loop over a megabyte
    line does not."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _cut(content: str, focus: int) -> str:
    """``content`` cut to at most :data:`LINE_BYTES` UTF-8 bytes around character ``focus``, each cut side told as
    ``[…N chars cut…]``; the line's newline is kept."""
    body = content.removesuffix("\n")
    start = max(0, focus - _LEAD)
    room = LINE_BYTES - 1 - 2 * len(f"[…{len(body):,} chars cut…] ".encode())
    window = body[start:start + room].encode("utf-8")[:room].decode("utf-8", errors="ignore")
    after = len(body) - start - len(window)
    return ((f"[…{start:,} chars cut…] " if start else "") + window + (f" […{after:,} chars cut…]" if after else "")
            + content[len(body):])


def _long(content: str) -> bool:
    # A UTF-8 character is at most 4 bytes: most lines are answered without encoding them.
    return len(content) > LINE_BYTES // 4 and size(content) > LINE_BYTES


def _bounded(hunk: DiffHunk) -> DiffHunk:
    """``hunk`` with every line over :data:`LINE_BYTES` cut; the k-th removed line of a change block and the k-th
    added one are cut around their first difference, other lines keep their start."""
    if not any(_long(line.content) for line in hunk.lines):
        return hunk
    lines = list(hunk.lines)
    i = 0
    while i < len(lines):
        if lines[i].origin == " ":
            i += 1
            continue
        block = i
        while i < len(lines) and lines[i].origin != " ":
            i += 1
        old = [k for k in range(block, i) if lines[k].origin == "-"]
        new = [k for k in range(block, i) if lines[k].origin == "+"]
        focus = {k: 0 for k in range(block, i)}
        for a, b in zip(old, new, strict=False):
            focus[a] = focus[b] = _common_prefix(lines[a].content, lines[b].content)
        for k, at in focus.items():
            if _long(lines[k].content):
                lines[k] = lines[k].model_copy(update={"content": _cut(lines[k].content, at)})
    for k, line in enumerate(lines):  # context lines: their start
        if _long(line.content):
            lines[k] = line.model_copy(update={"content": _cut(line.content, 0)})
    return hunk.model_copy(update={"lines": lines})


def _piece(hunk: DiffHunk, lines: list[DiffLine], last: bool) -> DiffHunk:
    """The part of ``hunk`` made of ``lines``, itself a valid hunk: a split hunk's header counts its part."""
    if len(lines) == len(hunk.lines):
        return hunk
    old = [ln for ln in lines if ln.origin != "+"]
    new = [ln for ln in lines if ln.origin != "-"]
    old_start = next((ln.old_lineno for ln in old if ln.old_lineno), hunk.old_start)
    new_start = next((ln.new_lineno for ln in new if ln.new_lineno), hunk.new_start)
    section = hunk.header.split("@@", 2)[2].strip() if hunk.header.count("@@") >= 2 else ""
    header = f"@@ -{old_start},{len(old)} +{new_start},{len(new)} @@" + (f" {section}" if section else "")
    return hunk.model_copy(update={"old_start": old_start, "old_lines": len(old), "new_start": new_start,
                                   "new_lines": len(new), "header": header, "lines": lines,
                                   "lines_omitted": hunk.lines_omitted if last else 0})


class _DiffPager:
    """Greedy packing of a diff's rendered lines into pages of at most ``budget`` bytes."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.pages: list[list[DiffFile]] = [[]]
        self.used = 0

    def _fits(self, n: int) -> bool:
        return self.used + n <= self.budget or self.used == 0

    def _close(self) -> None:
        self.pages.append([])
        self.used = 0

    def add_file(self, f: DiffFile) -> None:
        head = size(f"--- {f.status} {path_text(f.old_path or '')} -> {path_text(f.path)} +{f.insertions} "
                    f"-{f.deletions} (binary)") + 1 + (32 if f.old_mode and f.new_mode else 0)  # git's mode lines
        tail = 30 if f.hunks_omitted else 0
        if not f.hunks:
            if not self._fits(head + tail):
                self._close()
            self.pages[-1].append(f)
            self.used += head + tail
            return
        hunks: list[DiffHunk] = []
        for whole in f.hunks:
            hunk = _bounded(whole)
            hunk_head = size(hunk.header) + 60 + (30 if hunk.lines_omitted else 0)
            lines: list[DiffLine] = []
            # A hunk whose lines ``max_lines`` cut still takes its head (and the file's): it is measured like a
            # line, or the files after the cut all went into one part over the bound.
            held: list[DiffLine | None] = list(hunk.lines) or [None]
            for line in held:
                n = size(line.content) + _LINE_EXTRA if line is not None else 0
                opening = 0 if lines else hunk_head + (0 if hunks else head)
                if not self._fits(opening + n):
                    if lines:
                        hunks.append(_piece(hunk, lines, last=False))
                    if hunks:
                        self.pages[-1].append(self._part(f, hunks, last=False))
                    hunks, lines = [], []
                    self._close()
                    opening = hunk_head + head
                self.used += opening + n
                if line is not None:
                    lines.append(line)
            hunks.append(_piece(hunk, lines, last=True))
        self.pages[-1].append(self._part(f, hunks, last=True))
        self.used += tail

    @staticmethod
    def _part(f: DiffFile, hunks: list[DiffHunk], last: bool) -> DiffFile:
        if last and len(hunks) == len(f.hunks) and all(a is b for a, b in zip(hunks, f.hunks, strict=True)):
            return f
        return f.model_copy(update={"hunks": hunks, "hunks_omitted": f.hunks_omitted if last else 0})


def split_diff(report: DiffReport, budget: int = PAGE_BYTES) -> list[DiffReport]:
    """``report`` as pages: each has the whole diff's ``compared`` and ``stats``; what was cut
    (``files_omitted``, ``truncation``) is told on the last."""
    pager = _DiffPager(budget)
    for f in report.files:
        pager.add_file(f)
    pages = [files for files in pager.pages if files] or [[]]
    if len(pages) == 1:  # its lines may have been cut
        same = len(pages[0]) == len(report.files) and all(a is b for a, b in zip(pages[0], report.files, strict=True))
        return [report if same else report.model_copy(update={"files": pages[0]})]
    last = len(pages) - 1
    return [report.model_copy(update={"files": files} if i == last else
                              {"files": files, "files_omitted": 0, "truncation": None})
            for i, files in enumerate(pages)]


#: Bytes of a shown commit's or tag's head line (ids, date, name) beside a part of its message.
_HEAD_BYTES = 400


def _message_parts(show: ShowResult, budget: int) -> list[ShowResult]:
    """A tag's and a commit's message longer than half a page as parts of their own, each with its head (a log
    cuts a message at 8,000 characters; this is where the rest is read): the tag's, then the commit's, then the
    rest of ``show`` (a commit's diff) with neither. Empty when the messages fit beside the rest."""
    tag, commit = show.tag, show.commit
    if size(tag.message if tag else "") + size(commit.message if commit else "") <= budget // 2:
        return []
    bare = show.model_copy(update={"tag": None, "commit": None, "diff": None})
    parts: list[ShowResult] = []
    if tag is not None:
        chunks = chunk_text(tag.message, budget - _HEAD_BYTES)
        parts += [bare.model_copy(update={"tag": tag.model_copy(update={
                      "message": chunk, "message_truncated": tag.message_truncated and i == len(chunks) - 1})})
                  for i, chunk in enumerate(chunks)]
    if commit is not None:
        chunks = chunk_text(commit.message, budget - _HEAD_BYTES)
        parts += [bare.model_copy(update={"commit": commit.model_copy(update={
                      "message": chunk, "message_truncated": commit.message_truncated and i == len(chunks) - 1})})
                  for i, chunk in enumerate(chunks)]
    if show.diff is not None:
        parts += [bare.model_copy(update={"diff": d}) for d in split_diff(show.diff, budget)]
    return parts


def split_show(show: ShowResult, budget: int = PAGE_BYTES) -> list[ShowResult]:
    """A commit's diff, a blob's text or a tree's entries as pages; the commit (its message) and a tag are told
    on the first page, or on pages of their own before the diff when their messages are long."""
    long_message = _message_parts(show, budget)
    if long_message:
        return long_message
    if show.diff is not None:
        diffs = split_diff(show.diff, budget - size(show.commit.message if show.commit else ""))
        return [show.model_copy(update={"diff": d} if i == 0 else {"diff": d, "commit": None, "tag": None})
                for i, d in enumerate(diffs)]
    blob = show.blob
    if blob is not None and blob.text is not None and size(blob.text) > budget:
        chunks = chunk_text(blob.text, budget)
        # The blob's cut at BLOB_LIMIT is told once, after its last part.
        return [show.model_copy(update={"blob": blob.model_copy(update={
                    "text": chunk, "truncated": blob.truncated and i == len(chunks) - 1})})
                for i, chunk in enumerate(chunks)]
    if show.entries:
        pages: list[list[object]] = [[]]
        used = 0
        for entry in show.entries:
            n = size(entry.name) + 60
            if used + n > budget and pages[-1]:
                pages.append([])
                used = 0
            pages[-1].append(entry)
            used += n
        if len(pages) > 1:
            return [show.model_copy(update={"entries": entries}) for entries in pages]
    return [show]


def split_status(report: StatusReport, budget: int = PAGE_BYTES) -> list[StatusReport]:
    """The status's lists (staged, modified, untracked, conflicts, in the text's order) as pages; the branch,
    HEAD and the ``*_total`` counts are on every page."""
    lists = ("staged", "modified", "untracked", "conflicts")
    pages: list[dict[str, list[Any]]] = [{name: [] for name in lists}]
    used = 0
    for name in lists:
        for entry in getattr(report, name):
            path = entry if isinstance(entry, str) else entry.path
            n = size(path_text(path)) + (150 if name == "conflicts" else 4)  # a conflict names three 40-digit ids
            if used + n > budget and used:
                pages.append({name: [] for name in lists})
                used = 0
            pages[-1][name].append(entry)
            used += n
    if len(pages) == 1:
        return [report]
    listed = {f"{name}_listed": len(getattr(report, name)) for name in ("staged", "modified", "untracked")}
    return [report.model_copy(update={**page, "truncated": False}) for page in pages[:-1]] + [
        report.model_copy(update={**pages[-1], **listed})]
