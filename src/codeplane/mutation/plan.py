"""Planning one target in memory: preconditions, new bytes, and its part of the delta (no writes).

Every function here either returns a :class:`Planned` or raises a catalog error; nothing touches disk,
so a failure anywhere in a batch leaves the work tree untouched by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.hashing import sha256_bytes
from codeplane.mutation.commit import FileWrite
from codeplane.mutation.delta import EditRange, FileDelta, LineCorrection, LineSpan, TextReindent
from codeplane.mutation.diffs import count_changes, segment_hunk
from codeplane.mutation.document import (
    Document,
    LineEnding,
    TextFormat,
    detect_line_ending,
    keep_undecodable,
    lines_of,
    to_newline,
)
from codeplane.mutation.edits import CreateFile, ReplaceText, UpdateSpan
from codeplane.mutation.refusals import CONTEXT_LINES, current_text, where_text_went
from codeplane.mutation.repo_style import Declared
from codeplane.mutation.scope import Target
from codeplane.mutation.spans import (
    Replacement,
    anchor_span,
    apply_replacements,
    check_disjoint,
    expected_lines,
    find_block,
    span_replacement,
    text_replacements,
)

MAX_RANGES_PER_FILE = 100


@dataclass(frozen=True)
class Current:
    """A target as read under its lock: bytes (``None`` if absent), permission bits, identity."""

    data: bytes | None
    mode: int
    stat: tuple[int, int, int] | None


@dataclass(frozen=True)
class Planned:
    delta: FileDelta
    #: ``None`` when the file's bytes do not change.
    writes: tuple[FileWrite, ...]
    old_ranges: tuple[tuple[int, int], ...] = ()
    new_ranges: tuple[tuple[int, int], ...] = ()
    #: Decoded text before/after for a dry run's unified diff (``None``: absent or binary).
    old_text: str | None = field(default=None, repr=False)
    new_text: str | None = field(default=None, repr=False)
    short_diff: str = ""


#: The current text where an edit was aimed (``refusals.py``), as a refusal's details.
AimedAt = Callable[[Document], dict[str, Any]]


def check_sha(path: str, index: int, current: Current, expected: str | None, *,
              aimed_at: AimedAt | None = None) -> None:
    """5002 unless the bytes on disk hash to ``expected`` (SHA-256 of the exact bytes, as read_source), or to a
    hash it is a prefix of (12+ hex digits, ``edits.SHA256_PREFIX_MIN``). The refusal carries the current hash
    and, for a text edit, the current text where it was aimed: enough to redo the edit without a re-read, and
    nothing the caller sent (its own ``expected_file_sha256``)."""
    if expected is None or current.data is None:
        return
    actual = sha256_bytes(current.data)
    if actual.startswith(expected):
        return
    doc = _document(current.data, path) if aimed_at is not None else None
    shown = aimed_at(doc) if aimed_at is not None and doc is not None else {}
    raise CodePlaneError(
        ErrorCode.MUTATION_PRECONDITION_FAILED, f"{path} changed since it was read" + ("; now:" if shown else ""),
        details={"path": path, "edit_index": index, "reason": "file hash mismatch", "actual_file_sha256": actual,
                 **shown},
    )


def _aimed_at(edit: UpdateSpan | ReplaceText, window: int) -> AimedAt:
    """Where a text edit was aimed in the file as it is now: its ``old_text`` (or the lines most like it), its
    ``expected_content`` re-anchored nearby, the span's lines (an insertion: the lines either side), or, when
    ``expected_content`` is no longer near, the span with context."""
    def view(doc: Document) -> dict[str, Any]:
        if isinstance(edit, ReplaceText):
            return where_text_went(doc, edit.old_text)
        start, end = edit.start_line, edit.end_line
        if edit.expected_content:
            block = expected_lines(edit.expected_content)
            found = find_block(doc.lines(), block, start - 1 - window, start - 1 + window)
            if len(found) == 1:
                return current_text(doc, found[0] + 1, found[0] + len(block))
            return current_text(doc, start, end, context=CONTEXT_LINES)
        return current_text(doc, start - 1, start) if end < start else current_text(doc, start, end)
    return view


def _document(data: bytes, path: str) -> Document | None:
    try:
        return Document.decode(data, path)
    except CodePlaneError:
        return None


def _missing(path: str, index: int) -> CodePlaneError:
    return CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{path} does not exist",
                          details={"path": path, "edit_index": index})


def _text_of(data: bytes | None, path: str) -> str | None:
    doc = _document(data, path) if data is not None else None
    return doc.text if doc is not None else None


def _ranges(doc: Document, new_doc: Document, ordered: Sequence[Replacement]) -> list[EditRange]:
    """Line ranges per replacement, merged where two edits share a line."""
    merged: list[EditRange] = []
    shift = 0
    for rep in ordered:
        if rep.end > rep.start:
            old_start, old_end = doc.line_of(rep.start), doc.line_of(rep.end - 1)
        else:
            old_start = doc.line_of(rep.start) if rep.start < len(doc.text) else doc.line_count + 1
            old_end = old_start - 1
        at = rep.start + shift
        shift += len(rep.new) - (rep.end - rep.start)
        if rep.new:
            new_start, new_end = new_doc.line_of(at), new_doc.line_of(at + len(rep.new) - 1)
        else:
            new_start = new_doc.line_of(at) if at < len(new_doc.text) else new_doc.line_count + 1
            new_end = new_start - 1
        if merged and old_start <= merged[-1].old_end:
            last = merged.pop()
            old_start, new_start = last.old_start, last.new_start
            old_end, new_end = max(old_end, last.old_end), max(new_end, last.new_end)
        merged.append(EditRange(old_start=old_start, old_end=old_end, new_start=new_start, new_end=new_end))
    return merged


def _replacements(doc: Document, lines: Sequence[str], path: str,
                  edits: Sequence[tuple[int, UpdateSpan | ReplaceText]],
                  window: int) -> tuple[list[Replacement], list[LineCorrection], list[TextReindent]]:
    """Every edit of one file as character replacements on ``doc``, with the spans re-anchored on the way."""
    replacements: list[Replacement] = []
    corrections: list[LineCorrection] = []
    reindents: list[TextReindent] = []
    for index, edit in edits:
        if isinstance(edit, UpdateSpan):
            start, end, fix = anchor_span(doc, path, index, edit.start_line, edit.end_line,
                                          expected=edit.expected_content, window=window, lines=lines)
            if fix is not None:
                corrections.append(LineCorrection(
                    edit_index=index, original=LineSpan(start_line=fix.original[0], end_line=fix.original[1]),
                    corrected=LineSpan(start_line=fix.corrected[0], end_line=fix.corrected[1])))
            replacements.append(span_replacement(doc, start, end, edit.new_content, index))
        else:
            found, reindent = text_replacements(doc, path, index, old_text=edit.old_text, new_text=edit.new_text,
                                                replace_all=edit.replace_all)
            replacements += found
            if reindent is not None:
                reindents.append(TextReindent(edit_index=index, line=reindent.line, indent=reindent.indent))
    return replacements, corrections, reindents


def plan_update(target: Target, current: Current, edits: Sequence[tuple[int, UpdateSpan | ReplaceText]],
                *, window: int, default_ending: LineEnding) -> Planned:
    """Merge every span/text edit of one file into one new content (5002, 5004, 5006, 5008)."""
    path = target.rel
    first = edits[0][0]
    if current.data is None:
        raise _missing(path, first)
    for index, edit in edits:
        check_sha(path, index, current, edit.expected_file_sha256, aimed_at=_aimed_at(edit, window))
    doc = Document.decode(current.data, path, default_ending=default_ending)
    lines = doc.lines()
    try:
        replacements, corrections, reindents = _replacements(doc, lines, path, edits, window)
    except CodePlaneError as exc:
        # A retry of a refused text edit needs the file's current hash as its precondition.
        if exc.error is ErrorCode.MUTATION_PRECONDITION_FAILED:
            exc.details.setdefault("actual_file_sha256", sha256_bytes(current.data))
        raise
    ordered = check_disjoint(path, replacements)
    new_text = apply_replacements(doc.text, ordered)
    # Offsets mean the same in the raw text; its undecodable bytes the edits leave alone are written back as is.
    new_raw = new_text if doc.raw == doc.text else apply_replacements(
        doc.raw, [replace(r, new=keep_undecodable(doc.raw[r.start:r.end], r.new)) for r in ordered])
    new_bytes = doc.encode(new_raw, path)
    new_doc = Document.from_text(new_text, doc.fmt)
    ranges = _ranges(doc, new_doc, ordered)
    insertions = deletions = 0
    hunks: list[str] = []
    for r in ranges:
        old_seg = lines[r.old_start - 1:r.old_end]
        new_seg = [new_doc.line(n) for n in range(r.new_start, r.new_end + 1)]
        ins, dels = count_changes(old_seg, new_seg)
        insertions, deletions = insertions + ins, deletions + dels
        hunks.append(segment_hunk(r.old_start, old_seg, r.new_start, new_seg))
    changed = new_bytes != current.data
    delta = FileDelta(
        path=path, action="updated" if changed else "unchanged",
        old_sha256=sha256_bytes(current.data) if changed else None,
        file_sha256=sha256_bytes(new_bytes), insertions=insertions, deletions=deletions,
        line_ending=doc.fmt.line_ending, encoding=doc.fmt.label,
        edit_ranges=tuple(ranges[:MAX_RANGES_PER_FILE]), edit_ranges_truncated=len(ranges) > MAX_RANGES_PER_FILE,
        line_corrections=tuple(corrections), reindented=tuple(reindents), git_ignored=target.git_ignored,
    )
    writes = (FileWrite(path, current.data, current.mode, current.stat, new_bytes, current.mode),) if changed else ()
    return Planned(
        delta=delta, writes=writes,
        old_ranges=tuple((r.old_start, r.old_end) for r in ranges),
        new_ranges=tuple((r.new_start, r.new_end) for r in ranges),
        old_text=doc.text, new_text=new_text, short_diff=f"--- a/{path}\n+++ b/{path}\n" + "".join(hunks),
    )


def plan_create(target: Target, current: Current, index: int, edit: CreateFile, *,
                default_ending: LineEnding, new_mode: int, declared: Declared = None) -> Planned:
    """A new file (5005 if it exists and not ``overwrite``); an overwrite keeps mode, encoding and BOM.

    Line endings: the path's ``.gitattributes`` ``eol`` (``declared``) always; under ``-text`` the content as
    given; otherwise content without ``\\r`` gets the file's (a new file: the repository's) ending."""
    path = target.rel
    if current.data is not None and not edit.overwrite:
        raise CodePlaneError(ErrorCode.FILE_EXISTS, f"{path} already exists; set overwrite to replace it",
                             details={"path": path, "edit_index": index,
                                      "file_sha256": sha256_bytes(current.data)})
    check_sha(path, index, current, edit.expected_file_sha256)
    fmt = TextFormat(line_ending=default_ending)
    old_doc: Document | None = None
    if current.data is not None:
        try:
            old_doc = Document.decode(current.data, path, default_ending=default_ending)
            fmt = old_doc.fmt
        except CodePlaneError:
            old_doc = None  # overwriting a binary file with text: plain UTF-8
    if declared == "as-given":
        content = edit.content
        fmt = replace(fmt, line_ending=detect_line_ending(content) or fmt.line_ending)
    elif declared is not None:
        fmt = replace(fmt, line_ending=declared)
        content = to_newline(edit.content, fmt.newline)
    else:
        content = edit.content if "\r" in edit.content else to_newline(edit.content, fmt.newline)
    encoder = old_doc or Document.from_text("", fmt)
    new_bytes = encoder.encode(content, path)
    new_doc = Document.from_text(content, fmt)
    old_lines = old_doc.lines() if old_doc else []
    new_lines = new_doc.lines()
    insertions, deletions = count_changes(old_lines, new_lines)
    existed = current.data is not None
    delta = FileDelta(
        path=path, action="updated" if existed else "created",
        old_sha256=sha256_bytes(current.data) if current.data is not None and new_bytes != current.data else None,
        file_sha256=sha256_bytes(new_bytes), insertions=insertions, deletions=deletions,
        line_ending=fmt.line_ending, encoding=fmt.label,
        # A new file's one range is its whole text, which ``insertions`` counts.
        edit_ranges=(EditRange(old_start=1, old_end=len(old_lines), new_start=1, new_end=len(new_lines)),)
        if existed else (),
        git_ignored=target.git_ignored,
    )
    mode = current.mode if existed else new_mode
    write = FileWrite(path, current.data, current.mode, current.stat, new_bytes, mode)
    return Planned(
        delta=delta, writes=(write,) if new_bytes != current.data else (),
        old_ranges=((1, len(old_lines)),) if old_lines else (), new_ranges=((1, len(new_lines)),),
        old_text=old_doc.text if old_doc else None, new_text=content,
        short_diff=f"--- a/{path}\n+++ b/{path}\n" + segment_hunk(1, old_lines, 1, new_lines),
    )


def plan_delete(target: Target, current: Current, index: int, expected_sha: str | None) -> Planned:
    path = target.rel
    if current.data is None:
        raise _missing(path, index)
    check_sha(path, index, current, expected_sha)
    old_text = _text_of(current.data, path)
    old_lines = lines_of(old_text)
    delta = FileDelta(path=path, action="deleted", old_sha256=sha256_bytes(current.data), deletions=len(old_lines),
                      line_ending=None, encoding=None, git_ignored=target.git_ignored)
    write = FileWrite(path, current.data, current.mode, current.stat, None, 0)
    return Planned(delta=delta, writes=(write,), old_ranges=((1, len(old_lines)),) if old_lines else (),
                   old_text=old_text, short_diff=f"--- a/{path}\n+++ /dev/null\n")


def plan_move(src: Target, dst: Target, src_now: Current, dst_now: Current, index: int,
              *, overwrite: bool, expected_sha: str | None, git_mv: bool) -> Planned:
    """Move bytes and mode from ``src`` to ``dst`` (5004 no source, 5005 destination exists)."""
    if src_now.data is None:
        raise _missing(src.rel, index)
    check_sha(src.rel, index, src_now, expected_sha)
    if dst_now.data is not None and not overwrite:
        raise CodePlaneError(ErrorCode.FILE_EXISTS, f"{dst.rel} already exists; set overwrite to replace it",
                             details={"path": dst.rel, "edit_index": index})
    sha = sha256_bytes(src_now.data)
    delta = FileDelta(path=dst.rel, action="moved", old_path=src.rel, file_sha256=sha, line_ending=None,
                      encoding=None, git_ignored=dst.git_ignored, git_mv=git_mv)
    writes = (
        FileWrite(src.rel, src_now.data, src_now.mode, src_now.stat, None, 0),
        FileWrite(dst.rel, dst_now.data, dst_now.mode, dst_now.stat, src_now.data, src_now.mode),
    )
    text = _text_of(src_now.data, src.rel)
    return Planned(delta=delta, writes=writes, old_text=text, new_text=text,
                   short_diff=f"rename from {src.rel}\nrename to {dst.rel}\n")
