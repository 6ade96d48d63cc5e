"""``refactor_inspect``: page through a plan's uncertain edits with the lines around each one.

Cursors are opaque ``<offset>:<filter digest>`` strings; a cursor from another plan or filter is 1005.
Context lines are read from the file now, so an agent sees what it would be changing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.refactor.models import Certainty, InspectItem, InspectPage
from codeplane.refactor.plans import Plan
from codeplane.repo.content import decode

MAX_PAGE = 200
MAX_CONTEXT_LINES = 10
_MAX_LINE_CHARS = 300


def _digest(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:10]


def _parse_cursor(cursor: str | None, digest: str) -> int:
    if not cursor:
        return 0
    offset, _, tag = cursor.partition(":")
    if tag != digest or not offset.isdigit():
        raise CodePlaneError(ErrorCode.INVALID_CURSOR, "cursor belongs to another plan or filter",
                             details={"cursor": cursor})
    return int(offset)


def inspect_plan(root: Path, plan: Plan, *, candidate_id: str | None, certainties: Sequence[Certainty],
                 kinds: Sequence[str], cursor: str | None, limit: int, context_lines: int) -> InspectPage:
    """One page of ``plan``'s edits matching ``certainties`` and ``kinds`` (``code``/``doc``)."""
    option = plan.option(candidate_id)
    wanted_c = sorted(set(certainties))
    wanted_k = sorted(set(kinds))
    digest = _digest(plan.refactor_id, option.candidate_id, wanted_c, wanted_k)
    start = _parse_cursor(cursor, digest)
    selected = [e for e in option.all_edits() if e.certainty in wanted_c and e.kind in wanted_k]
    selected.sort(key=lambda e: (e.path, e.line, e.column, e.kind))
    page = selected[start:start + max(1, min(limit, MAX_PAGE))]
    around = max(0, min(context_lines, MAX_CONTEXT_LINES))
    cache: dict[str, list[str]] = {}
    items: list[InspectItem] = []
    for edit in page:
        if edit.path not in cache:
            try:
                cache[edit.path] = decode((root / edit.path).read_bytes()).split("\n")
            except OSError:
                cache[edit.path] = []
        lines = cache[edit.path]
        lo, hi = max(1, edit.line - around), min(len(lines), edit.end_line + around)
        context = [(n, lines[n - 1].rstrip("\r")[:_MAX_LINE_CHARS]) for n in range(lo, hi + 1)]
        items.append(InspectItem(edit=edit, context=context))
    end = start + len(page)
    return InspectPage(
        refactor_id=plan.refactor_id, candidate_id=option.candidate_id, certainties=wanted_c, kinds=wanted_k,
        total=len(selected), items=items, next_cursor=f"{end}:{digest}" if end < len(selected) else None,
    )
