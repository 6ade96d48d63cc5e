"""Bounded queries over the file table: listing (``list_files``) with depth folding and keyset paging.

Entries are ordered by path. Below ``depth`` levels under the listed directory, files are folded into
one ``dir`` entry per directory at that depth (with a file count and total size). Paging is by key: a
page continues strictly after the last entry of the previous one, so an entry is never returned twice
and an entry present throughout is never skipped, even when files change between pages.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Literal

from codeplane.index.globs import path_matcher

MAX_LIST_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class FileEntry:
    path: str
    type: Literal["file", "dir"]
    #: For files: ``text`` | ``binary`` | ``oversized`` | ``symlink``; ``None`` for directories.
    kind: str | None
    language: str | None
    size: int
    line_count: int | None
    #: Number of files folded into a ``dir`` entry (1 for a file).
    file_count: int


@dataclass(frozen=True)
class FilePage:
    entries: tuple[FileEntry, ...]
    #: Key to pass back as ``after`` for the next page; ``None`` when this page is the last.
    next_after: str | None
    #: Entries after folding (all pages).
    total: int


def list_entries(conn: sqlite3.Connection, *, prefix: str, glob: str | None, depth: int | None, limit: int,
                 after: str | None) -> FilePage:
    """One page of the listing under ``prefix`` ("" = the root). ``glob`` filters files before folding."""
    if limit < 1 or limit > MAX_LIST_LIMIT:
        raise ValueError(f"limit must be within 1..{MAX_LIST_LIMIT}")
    exact = conn.execute("SELECT path, kind, language, size, line_count FROM files WHERE path = ?",
                         (prefix,)).fetchone() if prefix else None
    if exact is not None:  # the "directory" is a file: list just that file
        path, kind, language, size, line_count = exact
        entry = FileEntry(path, "file", kind, language, size, line_count if kind == "text" else None, 1)
        return FilePage((entry,) if after is None or path > after else (), None, 1)
    if prefix:
        rows = conn.execute(
            "SELECT path, kind, language, size, line_count FROM files WHERE path > ? AND path < ? ORDER BY path",
            (prefix + "/", prefix + "0"))
        cut = len(prefix) + 1
    else:
        rows = conn.execute("SELECT path, kind, language, size, line_count FROM files ORDER BY path")
        cut = 0
    selected = path_matcher([glob]) if glob else None
    entries: list[FileEntry] = []
    for path, kind, language, size, line_count in rows:
        if selected is not None and not selected(path):
            continue
        parts = path[cut:].split("/")
        if depth is not None and len(parts) > depth:
            folded = path[:cut] + "/".join(parts[:depth])
            last = entries[-1] if entries else None
            if last is not None and last.path == folded and last.type == "dir":
                entries[-1] = FileEntry(folded, "dir", None, None, last.size + size, None, last.file_count + 1)
            else:
                entries.append(FileEntry(folded, "dir", None, None, size, None, 1))
            continue
        entries.append(FileEntry(path, "file", kind, language, size, line_count if kind == "text" else None, 1))
    # Folding can interleave a directory with sibling files that sort between its members; order by key.
    entries.sort(key=lambda e: e.path)
    merged: list[FileEntry] = []
    for entry in entries:
        if merged and merged[-1].path == entry.path and entry.type == "dir":
            prev = merged[-1]
            merged[-1] = FileEntry(prev.path, "dir", None, None, prev.size + entry.size, None,
                                   prev.file_count + entry.file_count)
        else:
            merged.append(entry)
    start = 0
    if after is not None:
        while start < len(merged) and merged[start].path <= after:
            start += 1
    page = merged[start:start + limit]
    more = start + limit < len(merged)
    return FilePage(tuple(page), page[-1].path if more and page else None, len(merged))
