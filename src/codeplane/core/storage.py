"""Storage failures as catalogued errors: disk full, quota, file-size limit, read-only file system, permission denied.

The operating system, SQLite and Tantivy each report these their own way (``OSError.errno``,
``sqlite3.Error.sqlite_errorcode``, ``"... (os error 28)"`` in a Tantivy message). :func:`storage_error`
turns any of them into one catalog entry that tells the caller what to do: 5010 ``STORAGE_FULL`` is
retryable (freeing space, or raising a quota or the file-size limit, fixes it), 5011 ``STORAGE_READ_ONLY``
and 5012 ``STORAGE_PERMISSION_DENIED`` need the operator. Anything else is not a storage failure and gives ``None``.
"""

from __future__ import annotations

import errno
import os
import re
import resource
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import STATE_DIR_NAME

_BY_ERRNO = {
    errno.ENOSPC: ErrorCode.STORAGE_FULL,
    errno.EDQUOT: ErrorCode.STORAGE_FULL,
    # A file-size limit (``ulimit -f``, RLIMIT_FSIZE) is a quota on one file: freeing nothing helps, raising it does.
    errno.EFBIG: ErrorCode.STORAGE_FULL,
    errno.EROFS: ErrorCode.STORAGE_READ_ONLY,
    errno.EACCES: ErrorCode.STORAGE_PERMISSION_DENIED,
    errno.EPERM: ErrorCode.STORAGE_PERMISSION_DENIED,
}
#: SQLite primary result codes (the low byte of an extended code).
_SQLITE_FULL, _SQLITE_READONLY, _SQLITE_PERM, _SQLITE_IOERR = 13, 8, 3, 10
_BY_SQLITE = {_SQLITE_FULL: ErrorCode.STORAGE_FULL, _SQLITE_READONLY: ErrorCode.STORAGE_READ_ONLY,
              _SQLITE_PERM: ErrorCode.STORAGE_PERMISSION_DENIED}
#: How Rust (Tantivy) and Python spell an errno inside a message.
#: An errno in a message: Rust's ``Display`` (``(os error 28)``) and ``Debug`` (``Os { code: 28, ... }``, as Tantivy's
#: ``IoError`` prints one) forms, and Python's.
_ERRNO_IN_TEXT = re.compile(r"\(os error (\d+)\)|\[Errno (\d+)\]|\bOs \{ code: (\d+)")
_ADVICE = {
    ErrorCode.STORAGE_FULL: "free space on that file system (or raise the quota or the file-size limit) and retry",
    ErrorCode.STORAGE_READ_ONLY: "the file system is mounted read-only; remount it read-write, then retry",
    ErrorCode.STORAGE_PERMISSION_DENIED: "give the user running CodePlane write access to it, then retry",
}


def storage_code(exc: BaseException) -> tuple[ErrorCode, int | None] | None:
    """(catalog entry, errno if known) when ``exc`` is a storage failure, else ``None``."""
    if isinstance(exc, OSError) and exc.errno in _BY_ERRNO:
        return _BY_ERRNO[exc.errno], exc.errno
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if isinstance(code, int) and (code & 0xFF) in _BY_SQLITE:
            return _BY_SQLITE[code & 0xFF], None
        if "disk is full" in str(exc):
            return ErrorCode.STORAGE_FULL, errno.ENOSPC
        if isinstance(code, int) and (code & 0xFF) == _SQLITE_IOERR and file_size_limit() is not None:
            # SQLite maps only ENOSPC to SQLITE_FULL: a write past the file-size limit (EFBIG, its own files or its
            # sort's temporary ones) is a bare "disk I/O error", which read as a bug retried forever.
            return ErrorCode.STORAGE_FULL, errno.EFBIG
    match = _ERRNO_IN_TEXT.search(str(exc))
    if match is not None:
        number = int(match.group(1) or match.group(2) or match.group(3))
        if number in _BY_ERRNO:
            return _BY_ERRNO[number], number
    return None


def storage_error(exc: BaseException, *, doing: str, path: Path | str | None = None,
                  outcome: str = "") -> CodePlaneError | None:
    """The catalogued error for a storage failure while ``doing`` something, or ``None``.

    ``path`` defaults to the exception's own filename; ``outcome`` says what state things were left in
    (e.g. "nothing was written"). Details carry the path, whether it is CodePlane's state or the work tree,
    the errno and the free bytes of its file system (when it can be measured).
    """
    found = storage_code(exc)
    if found is None:
        return None
    code, number = found
    where = path if path is not None else getattr(exc, "filename", None)
    details: dict[str, Any] = {"reason": _reason(exc)}
    if number is not None:
        details["errno"] = errno.errorcode.get(number, str(number))
    if where is not None:
        details["path"] = str(where)
        details["area"] = "codeplane_state" if STATE_DIR_NAME in Path(str(where)).parts else "work_tree"
        free = _free_bytes(Path(str(where)))
        if free is not None:
            details["free_bytes"] = free
    target = f" ({where})" if where is not None else ""
    done = f"; {outcome}" if outcome else ""
    return CodePlaneError(code, f"{doing} failed: {details['reason']}{target}{done}; {_ADVICE[code]}",
                          details=details)


def file_size_limit() -> int | None:
    """The process's file-size limit in bytes (``ulimit -f``), ``None`` when there is none."""
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else int(soft)


def probe_write(directory: Path) -> OSError | None:
    """The error creating a file in ``directory`` gives, or ``None`` when it can be written. SQLite says only
    "unable to open database file"; this names the cause (read-only, permission, full)."""
    try:
        fd, name = tempfile.mkstemp(prefix=".cpl-probe-", dir=directory)
    except OSError as exc:
        return exc
    os.close(fd)
    os.unlink(name)
    return None


def _reason(exc: BaseException) -> str:
    limit = file_size_limit()
    if limit is not None and storage_code(exc) == (ErrorCode.STORAGE_FULL, errno.EFBIG):
        # The limit is what to raise; neither EFBIG's text nor SQLite's "disk I/O error" names it.
        said = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0]
        return f"{said} (a file reached the file-size limit, ulimit -f, of {limit:,} bytes)"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _free_bytes(path: Path) -> int | None:
    for candidate in (path, *path.parents):
        try:
            return shutil.disk_usage(candidate).free
        except OSError:
            continue
    return None
