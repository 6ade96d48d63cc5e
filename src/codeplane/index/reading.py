"""Reading files for agents (``read_source``, ``read_file_full``; spec §23.7, DECISIONS D4, D8).

Everything is read from disk at call time, so it is never staler than the disk. ``file_sha256`` is the
SHA-256 of the file's exact bytes (:func:`codeplane.core.hashing.sha256_bytes`): the very value
``write_source`` checks as its precondition, whatever the range read. Content is the decoded text of
the requested lines with their original line endings. Paths go through the one canonicaliser first.

A read cut by ``max_bytes`` continues with a short cursor: the first :data:`CURSOR_HEX` hex digits of the
SHA-256 of where it resumes (the targets, which of them, the line), kept on the server. The same position of
the same targets gets the same cursor; a cursor edited by hand, from another server process, for other
targets, older than :data:`CURSOR_TTL_SEC` or evicted is refused with 1005.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.hashing import sha256_bytes
from codeplane.core.paths import resolve_in_repo
from codeplane.index.languages import family_of
from codeplane.repo.content import count_lines, decode, is_binary, lossy

#: Default and largest number of content bytes (UTF-8) one ``read_source`` call returns.
DEFAULT_READ_BYTES = 200_000
MAX_READ_BYTES = 1_000_000
#: Largest file ``read_file_full`` returns (beyond it: read ranges with ``read_source``).
FULL_READ_MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ReadTarget:
    path: str
    start_line: int | None = None
    end_line: int | None = None


@dataclass(frozen=True)
class SourceSlice:
    path: str
    content: str
    #: §8.4.1 family key, or ``None``.
    language: str | None
    line_count: int
    #: 1-based inclusive; ``(0, 0)`` for an empty file.
    start_line: int
    end_line: int
    file_sha256: str
    size: int
    #: True when the requested range was not fully returned (continue with the cursor).
    partial: bool
    #: 1-based character column ``content`` starts at on ``start_line``: past 1 only where a cursor continues a
    #: line longer than a whole read.
    start_column: int = 1
    #: The file is not valid UTF-8 (UTF-16 with its mark): invalid bytes are shown as U+FFFD.
    lossy: bool = False


@dataclass(frozen=True)
class SourceBatch:
    files: tuple[SourceSlice, ...]
    next_cursor: str | None


@dataclass(frozen=True)
class FileBytes:
    path: str
    data: bytes


def read_file_bytes(root: Path, path: str) -> FileBytes:
    """The exact bytes of a repository file. 5001 for escapes, 5004 if missing or not a regular file."""
    rel = resolve_in_repo(root, path)
    absolute = rel.absolute(root)
    if not rel.rel or not absolute.is_file():
        raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{path!r} is not a file in the repository",
                             details={"path": path})
    try:
        data = absolute.read_bytes()
    except OSError as exc:
        raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"cannot read {path!r}: {exc.strerror}",
                             details={"path": path}) from exc
    return FileBytes(rel.rel, data)


def _targets_key(targets: Sequence[ReadTarget]) -> str:
    raw = json.dumps([[t.path, t.start_line, t.end_line] for t in targets])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


#: Hex digits of a read cursor (48 bits: an id no one issued is not found by chance), its lifetime, and how
#: many are kept (each a few dozen bytes; the least recently used go first).
CURSOR_HEX = 12
CURSOR_TTL_SEC = 3600.0
MAX_CURSORS = 4096


@dataclass(frozen=True)
class _Resume:
    key: str
    index: int
    line: int
    issued: float
    #: Characters of ``line`` already returned (a line longer than a read).
    column: int = 0
    #: SHA-256 of the file the cursor continues: resuming over another version would join two versions' lines.
    sha: str = ""


_cursors: OrderedDict[str, _Resume] = OrderedDict()
_cursors_lock = threading.Lock()


def _encode_cursor(key: str, index: int, line: int, column: int = 0, sha: str = "") -> str:
    cursor = hashlib.sha256(f"{key}|{index}|{line}|{column}|{sha}".encode()).hexdigest()[:CURSOR_HEX]
    with _cursors_lock:
        _cursors[cursor] = _Resume(key, index, line, time.monotonic(), column, sha)
        _cursors.move_to_end(cursor)
        while len(_cursors) > MAX_CURSORS:
            _cursors.popitem(last=False)
    return cursor


def _refused(cursor: str, why: str) -> CodePlaneError:
    return CodePlaneError(ErrorCode.INVALID_CURSOR, f"the cursor {why}; read again without a cursor",
                          details={"cursor": cursor[:100]})


def _decode_cursor(cursor: str, key: str, count: int) -> tuple[int, int, int, str]:
    """(target index, line, column, file sha256) a cursor resumes at; 1005 unless this process issued it for these
    targets."""
    if len(cursor) != CURSOR_HEX or any(c not in "0123456789abcdef" for c in cursor):
        raise _refused(cursor, "is malformed")
    with _cursors_lock:
        resume = _cursors.get(cursor)
        if resume is not None:
            _cursors.move_to_end(cursor)
    if resume is None or time.monotonic() - resume.issued > CURSOR_TTL_SEC:
        raise _refused(cursor, "expired or was not issued by this server")
    if resume.key != key or not 0 <= resume.index < count:
        raise _refused(cursor, "belongs to other targets (pass the same targets with it)")
    return resume.index, resume.line, resume.column, resume.sha


def _split_lines(text: str) -> list[str]:
    """Lines with their terminators, split on ``\\n`` only (as line numbers are counted everywhere)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def read_sources(root: Path, targets: Sequence[ReadTarget], *, cursor: str | None = None,
                 max_bytes: int = DEFAULT_READ_BYTES) -> SourceBatch:
    """Read line ranges of several files, at most ``max_bytes`` of content per call.

    A range that does not fit is cut after its last whole line that fits (at least one line is always
    returned; a line longer than the budget is cut to it, and the cursor resumes inside that line) and
    ``next_cursor`` resumes it. Fails with
    5001/5004/5008 naming the path, or 1003 for a start line beyond the end of the file.
    """
    key = _targets_key(targets)
    first_index, resume_line, resume_column, resume_sha = (0, 0, 0, "") if cursor is None else \
        _decode_cursor(cursor, key, len(targets))
    budget = max_bytes
    out: list[SourceSlice] = []
    for index in range(first_index, len(targets)):
        target = targets[index]
        loaded = read_file_bytes(root, target.path)
        if is_binary(loaded.data):
            raise CodePlaneError(ErrorCode.BINARY_FILE, f"{target.path!r} is a binary file",
                                 details={"path": target.path, "size": len(loaded.data)})
        sha = sha256_bytes(loaded.data)
        if index == first_index and resume_sha and sha != resume_sha:
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, f"{target.path!r} changed since the cursor was issued "
                                 "(continuing would join two versions); read again without a cursor",
                                 details={"cursor": (cursor or "")[:100], "path": target.path,
                                          "file_sha256": sha})
        text = decode(loaded.data)
        lines = _split_lines(text)
        total = count_lines(text)
        start = target.start_line or 1
        if index == first_index and resume_line:
            start = resume_line
        end = min(target.end_line or total, total)
        if total and start > total:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS,
                                 f"start_line {start} is beyond the end of {target.path!r} ({total} lines)",
                                 details={"path": target.path, "start_line": start, "line_count": total})
        if target.end_line is not None and target.end_line < start:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "end_line is before start_line",
                                 details={"path": target.path, "start_line": start, "end_line": target.end_line})
        column = resume_column if index == first_index and resume_line else 0
        chunk: list[str] = []
        used = 0
        line = start
        cut_at = 0  # characters of ``line`` returned when it is longer than the budget
        while line <= end:
            body = lines[line - 1][column:] if line == start else lines[line - 1]
            size = len(body.encode("utf-8"))
            if used + size > budget:
                if not chunk and not out:
                    piece = body.encode("utf-8")[:budget].decode("utf-8", errors="ignore")
                    chunk.append(piece)
                    used, cut_at = budget, column + len(piece)  # the call's first line: ``line == start``
                break
            chunk.append(body)
            used += size
            line += 1
        if chunk or not total:
            last = line if cut_at else line - 1
            out.append(SourceSlice(loaded.path, "".join(chunk), family_of(loaded.path), total,
                                   start if total else 0, last if total else 0, sha, len(loaded.data),
                                   partial=line <= end, start_column=column + 1, lossy=lossy(loaded.data)))
        budget -= used
        if line <= end:
            return SourceBatch(tuple(out), _encode_cursor(key, index, line, cut_at, sha))
    return SourceBatch(tuple(out), None)


@dataclass(frozen=True)
class FullRead:
    path: str
    size: int
    line_count: int
    file_sha256: str
    language: str | None
    content: str | None
    #: Not valid UTF-8: ``content`` shows invalid bytes as U+FFFD, so writing it back changes them.
    lossy: bool = False


def read_full(root: Path, path: str, *, confirm: bool, max_bytes: int = FULL_READ_MAX_BYTES) -> FullRead:
    """Phase 1 (``confirm=False``): size, lines and hash only. Phase 2: the whole text.

    Fails with 5008 for binary files and 5007 beyond ``max_bytes`` (read ranges with ``read_source``).
    """
    loaded = read_file_bytes(root, path)
    data = loaded.data
    if is_binary(data):
        raise CodePlaneError(ErrorCode.BINARY_FILE, f"{path!r} is a binary file",
                             details={"path": path, "size": len(data)})
    text = decode(data)
    result = FullRead(loaded.path, len(data), count_lines(text), sha256_bytes(data), family_of(loaded.path), None,
                      lossy(data))
    if not confirm:
        return result
    if len(data) > max_bytes:
        raise CodePlaneError(ErrorCode.FILE_TOO_LARGE,
                             f"{path!r} has {len(data)} bytes, more than read_file_full returns ({max_bytes}); "
                             "read line ranges with read_source instead",
                             details={"path": path, "size": len(data), "max_bytes": max_bytes})
    return FullRead(result.path, result.size, result.line_count, result.file_sha256, result.language, text,
                    result.lossy)
