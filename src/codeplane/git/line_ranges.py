"""The ``line_range`` a caller gives blame and line history, checked against the file it names.

Rules, the same as ``read_source``'s: lines are 1-based, ``[first, last]`` with ``first <= last``, and
``first`` must lie inside the file; each breach is 1003 naming ``line_range``. A ``last`` past the end
is cut to the last line. Where git differs: ``git blame -L 5,1`` swaps the bounds; CodePlane refuses them,
as ``read_source`` does, because a reversed range is more often a slip than a wish. Past the end and
line 0 git refuses too (``fatal: file has only 62 lines``, ``-L invalid line number: 0``).
"""

from __future__ import annotations

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.pathspecs import shown


def line_count(blob: pygit2.Blob) -> int:
    """Lines as git counts them: a last line without a newline counts."""
    data = blob.data
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _refuse(message: str, line_range: tuple[int, int], **details: object) -> CodePlaneError:
    return CodePlaneError(ErrorCode.INVALID_ARGUMENTS, message,
                          details={"field": "line_range", "line_range": list(line_range), **details})


def check_line_range(line_range: tuple[int, int], total: int, path: str, commit: str) -> tuple[int, int]:
    """``line_range`` with its end cut to ``total`` lines; 1003 (``field: line_range``) for a range that is not
    1-based, is reversed, or starts past the end of ``path`` in ``commit``."""
    first, last = line_range
    if first < 1 or last < 1:
        raise _refuse(f"line_range [{first}, {last}]: lines are numbered from 1", line_range)
    if last < first:
        raise _refuse(f"line_range [{first}, {last}] ends before it starts; give [first, last]", line_range)
    if first > total:
        raise _refuse(f"line_range starts at line {first}, past the end of {shown(path)} ({total} lines at "
                      f"{commit[:12]})", line_range, path=shown(path), line_count=total)
    return first, min(last, total)


def refuse_root(path: str, what: str) -> None:
    """1003 (``field: path``) when ``path`` is the repository root (``"."``): ``what`` needs a file."""
    if not path:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"path names the repository root; {what}",
                             details={"field": "path", "path": "."})
