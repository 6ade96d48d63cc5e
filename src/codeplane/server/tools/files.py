"""File tools (§23.7): ``read_source``, ``read_file_full``, ``list_files``.

Reads come from disk at call time (never staler than the disk); ``file_sha256`` is the SHA-256 of the
file's exact bytes, the value ``write_source`` accepts as ``expected_file_sha256``. Listings come from
the file table after it caught up with pending changes under the listed directory.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Literal

import anyio
from pydantic import Field

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.index.files import MAX_LIST_LIMIT
from codeplane.index.reading import (
    DEFAULT_READ_BYTES,
    FULL_READ_MAX_BYTES,
    MAX_READ_BYTES,
    ReadTarget,
    read_full,
    read_sources,
)
from codeplane.repo.universe import quoted_path
from codeplane.server.answers import compact_json, short_sha
from codeplane.server.services import Services
from codeplane.server.tooling import LINE_MAX, ToolContext, ToolExample, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.cursor_arg import Cursor
from codeplane.server.tools.paging import (
    CURSOR_STAND_IN,
    PAGE_BYTES,
    PageCursors,
    chunk_text,
    items_that_fit,
    page_line,
    size,
)


class Target(ToolParams):
    path: str | None = Field(default=None, description="Repo-relative POSIX path.")
    symbol: str | None = Field(default=None, max_length=500, description=(
        "Instead of lines: a definition's name, qualified name or def_uid (with path: defined in that file); "
        "reads its whole span, decorators and doc comments above it included."))
    start_line: int | None = Field(default=None, ge=1, le=LINE_MAX, description="First line (1-based, default 1).")
    end_line: int | None = Field(default=None, ge=1, le=LINE_MAX,
                                 description="Last line, inclusive (default: end of file).")


class ReadSourceParams(ToolParams):
    targets: list[Target] = Field(min_length=1, max_length=50)
    cursor: Cursor = Field(default=None, description="next cursor of the previous call (same targets).")
    max_bytes: int = Field(default=DEFAULT_READ_BYTES, ge=1024, le=MAX_READ_BYTES, description=(
        f"Content bytes returned by this call at most (never more than about {PAGE_BYTES} in all: the cursor "
        "continues)."))


class SourceFile(ToolResult):
    path: str
    content: str
    language: str | None
    line_count: int
    range: tuple[int, int] = Field(description="[start_line, end_line] returned, inclusive; [0, 0] if empty.")
    file_sha256: str = Field(description="SHA-256 of the file's exact bytes: pass as expected_file_sha256.")
    size: int
    partial: bool = Field(default=False, description="The requested range continues on the next call (use cursor).")
    start_column: int | None = Field(default=None, description=(
        "1-based column content starts at on the range's first line: a cursor continuing a line longer than a read."))
    lossy: bool = Field(default=False, description=(
        "Not valid UTF-8 (a Latin-1 file): invalid bytes are shown as U+FFFD, so this content is not the file's."))


class ReadSourceResult(ToolResult):
    resource_kind: Literal["source"] = "source"
    delivery: Literal["inline"] = "inline"
    files: list[SourceFile]
    cursor: str | None = None
    has_more: bool = False


class ReadFileFullParams(ToolParams):
    path: str = Field(description="Repo-relative POSIX path.")
    confirm: bool = Field(default=False, description="Must be true to receive the content (two-phase gate).")
    cursor: Cursor = Field(default=None, description="next_cursor of the previous part (same path, confirm).")


class ReadFileFullResult(ToolResult):
    path: str
    confirmed: bool
    size: int
    line_count: int
    file_sha256: str
    language: str | None
    content: str | None = None
    max_bytes: int = FULL_READ_MAX_BYTES
    message: str | None = None
    part: int | None = Field(default=None, description="content is part `part` of `parts`; next_cursor continues.")
    parts: int | None = None
    next_cursor: str | None = None
    lossy: bool = Field(default=False, description=(
        "Not valid UTF-8 (a Latin-1 file): invalid bytes are shown as U+FFFD, so this content is not the file's."))


#: Parts of whole files too long for one text, kept for their cursors.
_FULL_PAGES: PageCursors[ReadFileFullResult] = PageCursors()


class ListFilesParams(ToolParams):
    path: str = Field(default="", description="Directory to list (repo-relative; default: the root).")
    depth: int | None = Field(default=None, ge=1, le=64, description=(
        "Levels below path to show; deeper files are folded into directory entries. Default: all levels."))
    pattern: str | None = Field(default=None, max_length=500, description=(
        "Gitignore-style glob on the repo-relative path: '*.py' at any depth, 'src/**/test_*.py'. As in rg -g: "
        "'!x' = everything but x; '*.{py,txt}' braces expand; './' anchors like '/'."))
    limit: int = Field(default=100, ge=1, le=MAX_LIST_LIMIT)
    cursor: Cursor = Field(default=None, description="next_cursor of the previous page.")


class FileEntryModel(ToolResult):
    path: str
    type: Literal["file", "dir"]
    kind: str | None = Field(default=None, description="text | binary | oversized | symlink (files only).")
    language: str | None = None
    size: int
    line_count: int | None = None
    file_count: int = 1


class ListFilesResult(ToolResult):
    path: str
    entries: list[FileEntryModel]
    next_cursor: str | None = None
    total: int
    epoch: int


def _read_target(ctx: ToolContext, index: int, target: Target) -> ReadTarget:
    if target.path is None and target.symbol is None:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"targets.{index}: give path or symbol",
                             details={"field": f"targets.{index}"})
    if target.symbol is None:
        assert target.path is not None
        return ReadTarget(target.path, target.start_line, target.end_line)
    if target.start_line is not None or target.end_line is not None:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"targets.{index}: a symbol target reads its whole "
                             "definition; give path and lines for a range", details={"field": f"targets.{index}"})
    path, start, end = ctx.services.structural.definition_span(target.symbol, target.path)
    return ReadTarget(path, start, end)


async def _read_source(ctx: ToolContext, params: ReadSourceParams) -> ReadSourceResult:
    targets = await anyio.to_thread.run_sync(
        lambda: [_read_target(ctx, i, t) for i, t in enumerate(params.targets)])
    # Each file's header line takes its share of the text too.
    budget = max(1024, min(params.max_bytes, PAGE_BYTES - sum(size(t.path) + 60 for t in targets)))
    batch = await anyio.to_thread.run_sync(
        lambda: read_sources(ctx.services.root, targets, cursor=params.cursor, max_bytes=budget))
    files = [SourceFile(path=f.path, content=f.content, language=f.language, line_count=f.line_count,
                        range=(f.start_line, f.end_line), file_sha256=f.file_sha256, size=f.size, partial=f.partial,
                        start_column=f.start_column if f.start_column > 1 else None, lossy=f.lossy)
             for f in batch.files]
    return ReadSourceResult(files=files, cursor=batch.next_cursor, has_more=batch.next_cursor is not None)


async def _read_file_full(ctx: ToolContext, params: ReadFileFullParams) -> ReadFileFullResult:
    key = compact_json(["read_file_full", params.path, params.confirm])
    if params.cursor is not None:
        page, part, parts, next_cursor = _FULL_PAGES.next(params.cursor, key)
        return page.model_copy(update={"part": part, "parts": parts, "next_cursor": next_cursor})
    read = await anyio.to_thread.run_sync(lambda: read_full(ctx.services.root, params.path, confirm=params.confirm))
    # Size and lines are the record's own fields, and the text's head line says them: not again here.
    message = None if params.confirm else (
        "Call again with confirm: true to receive the whole file, or read only the lines you need with read_source.")
    whole = ReadFileFullResult(path=read.path, confirmed=params.confirm, size=read.size, line_count=read.line_count,
                               file_sha256=read.file_sha256, language=read.language, content=read.content,
                               message=message, lossy=read.lossy)
    if read.content is None or size(read.content) <= PAGE_BYTES:
        return whole
    # The parts are cut from this one read: together they are the file with this file_sha256.
    pages = [whole.model_copy(update={"content": chunk}) for chunk in chunk_text(read.content)]
    first, next_cursor = _FULL_PAGES.first(pages, key)
    return first.model_copy(update={"part": 1, "parts": len(pages), "next_cursor": next_cursor})


async def _list_files(ctx: ToolContext, params: ListFilesParams) -> ListFilesResult:
    result = await anyio.to_thread.run_sync(lambda: _list_page(ctx, params, params.limit))
    fit = items_that_fit(len(result.entries), lambda k: render_list_files(result.model_copy(
        update={"entries": result.entries[:k], "next_cursor": CURSOR_STAND_IN})))
    if fit == len(result.entries):
        return result
    # Fewer entries, so that the text fits; the page's cursor resumes after the last one shown.
    return await anyio.to_thread.run_sync(lambda: _list_page(ctx, params, fit))


def _list_page(ctx: ToolContext, params: ListFilesParams, limit: int) -> ListFilesResult:
    index = ctx.services.index
    listing = compact_json(["list_files", params.path, params.pattern, params.depth])
    after, offset = (None, 0) if params.cursor is None else _LIST_CURSORS.resume(listing, params.cursor)
    page = index.list_files(params.path, glob=params.pattern, depth=params.depth, limit=limit, cursor=after)
    entries = [FileEntryModel(path=e.path, type=e.type, kind=e.kind, language=e.language, size=e.size,
                              line_count=e.line_count, file_count=e.file_count) for e in page.entries]
    next_cursor = None if page.next_after is None else \
        _LIST_CURSORS.issue(listing, page.next_after, offset + len(entries))
    return ListFilesResult(path=params.path, entries=entries, next_cursor=next_cursor, total=page.total,
                           epoch=index.epoch)


class _ListCursors:
    """Where each listing cursor resumes, kept on the server so the cursor is ``<id>.<offset>`` (the path it
    resumes after, in the cursor itself, made ~60 characters of it). The next page still starts after the last
    path shown (keyset: a listing stays exact while files come and go); the offset is the entries listed before
    it. A cursor another listing issued, made up, or forgotten (evicted, a restart) is refused (1005)."""

    KEPT = 4096
    _ID_HEX = 10

    def __init__(self) -> None:
        self._after: OrderedDict[str, tuple[str, str, int]] = OrderedDict()
        self._lock = threading.Lock()

    def issue(self, listing: str, after: str, offset: int) -> str:
        """The cursor of the page after ``after`` (the same page, the same cursor)."""
        cursor_id = hashlib.sha256(compact_json([listing, after, offset]).encode()).hexdigest()[:self._ID_HEX]
        with self._lock:
            self._after[cursor_id] = (listing, after, offset)
            self._after.move_to_end(cursor_id)
            while len(self._after) > self.KEPT:
                self._after.popitem(last=False)
        return f"{cursor_id}.{offset}"

    def resume(self, listing: str, cursor: str) -> tuple[str, int]:
        """The path ``cursor`` resumes after and its offset."""
        cursor_id, _, offset = cursor.partition(".")
        with self._lock:
            kept = self._after.get(cursor_id)
        if kept is None or kept[0] != listing or str(kept[2]) != offset:
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "this cursor was not issued by this listing (same path, "
                                 "pattern and depth) or has expired; list again without it",
                                 details={"cursor": cursor[:100]})
        return kept[1], kept[2]


_LIST_CURSORS = _ListCursors()


def render_read_source(result: ReadSourceResult) -> str:
    """Each file as a one-line header, ``== path start-end/total <sha>`` (the file's short SHA-256, the
    precondition of its next write; ``start:column`` where a cursor continues a line), and its text."""
    parts = []
    for f in result.files:
        first = f"{f.range[0]}:{f.start_column}" if f.start_column else f"{f.range[0]}"
        lines = first if f.range[0] == f.range[1] else f"{first}-{f.range[1]}"
        head = f"== {quoted_path(f.path)} {lines}/{f.line_count} {short_sha(f.file_sha256)}"
        if f.partial:
            head += " (partial)"
        if f.lossy:
            head += _LOSSY
        body = f.content if f.content.endswith("\n") or not f.content else f.content + "\n"
        parts.append(f"{head}\n{body}")
    if result.cursor:
        parts.append(f"more: cursor {result.cursor}\n")
    return "".join(parts).rstrip("\n")


#: A lossy read's header note: the agent is about to write this text back, perhaps unchanged.
_LOSSY = " (not UTF-8: invalid bytes shown as \ufffd; writing this text back changes them)"


def render_read_full(result: ReadFileFullResult) -> str:
    head = (f"== {quoted_path(result.path)} {result.line_count} lines {result.size} bytes "
            f"{short_sha(result.file_sha256)}")
    if result.lossy:
        head += _LOSSY
    if result.content is None:
        return f"{head}\n{result.message or ''}".rstrip()
    if result.part is not None and result.parts is not None:
        return f"{head} {page_line(result.part, result.parts, result.next_cursor)}\n{result.content}".rstrip("\n")
    return f"{head}\n{result.content}".rstrip("\n")


def render_list_files(result: ListFilesResult) -> str:
    """``ls``-like: one entry per line (dirs end in ``/`` with their file count), a total, the cursor. Entries
    under the listed directory are named relative to it, as ``ls`` names them: the head line says it once."""
    listed = quoted_path(result.path) or "."
    # No epoch: the same tree lists as the same bytes on a fresh clone (the record keeps it).
    lines = [f"{len(result.entries)} of {result.total} entries under {listed}"
             + (f"; next cursor: {result.next_cursor}" if result.next_cursor else "")]
    under = f"{result.path.strip('/')}/" if result.path and result.path.strip("/") else ""
    for e in result.entries:
        name = quoted_path(e.path.removeprefix(under) if under and e.path.startswith(under) else e.path)
        if e.type == "dir":
            lines.append(f"{name}/  {e.file_count} files {e.size} B")
        else:
            extra = f" {e.line_count}L" if e.line_count is not None else ""
            kind = f" {e.kind}" if e.kind and e.kind != "text" else ""
            lines.append(f"{name}  {e.size} B{extra}{kind}")
    return "\n".join(lines)


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            name="read_source", category="files", params=ReadSourceParams, result=ReadSourceResult,
            handler=_read_source, kind="read", render=render_read_source,
            summary=("Read line ranges of one or more files, or a definition by name (symbol). Each file comes "
                     "as a header, '== path start-end/total <sha>', and its exact text; <sha> is the first 12 hex "
                     "digits of file_sha256 (SHA-256 of the bytes on disk), the precondition write_source "
                     "checks. At most max_bytes per call; has_more/cursor continue."),
            when_to_use=("reading code found with search", "getting file_sha256 before write_source",
                         "reading several files or ranges in one call"),
            when_not_to_use=("finding where something is (use search)", "listing a directory (use list_files)"),
            examples=(ToolExample("a function by name", {"targets": [{"symbol": "app.models.User.save"}]}),
                      ToolExample("lines 10-40 of one file", {"targets": [{"path": "src/app.py", "start_line": 10,
                                                                           "end_line": 40}]}),
                      ToolExample("two whole small files", {"targets": [{"path": "README.md"},
                                                                        {"path": "pyproject.toml"}]})),
        ),
        ToolSpec(
            name="read_file_full", category="files", params=ReadFileFullParams, result=ReadFileFullResult,
            handler=_read_file_full, kind="read", render=render_read_full,
            summary=("Read a whole file, gated: without confirm it returns size, line count and file_sha256 only; "
                     f"with confirm: true the content (files up to {FULL_READ_MAX_BYTES} bytes), in parts of at most "
                     f"{PAGE_BYTES} bytes: next_cursor continues."),
            when_to_use=("you really need the entire file, e.g. a short config file",),
            when_not_to_use=("a part of the file is enough (use read_source with a line range)",
                             "the file is large or binary"),
            examples=(ToolExample("ask for size first", {"path": "setup.cfg"}),
                      ToolExample("then read it", {"path": "setup.cfg", "confirm": True})),
        ),
        ToolSpec(
            name="list_files", category="files", params=ListFilesParams, result=ListFilesResult,
            handler=_list_files, kind="read", render=render_list_files,
            summary=("List files of the repository (the indexed universe: .cplignore and build/vendor directories "
                     "excluded) under a directory, with language, size and line count; depth folds deeper files "
                     "into directory entries; paginated."),
            when_to_use=("exploring the layout of a directory", "finding files by name pattern"),
            when_not_to_use=("finding text inside files (use search)",),
            examples=(ToolExample("top level", {"depth": 1}),
                      ToolExample("all Python tests", {"pattern": "test_*.py", "path": "tests"})),
        ),
    ]
