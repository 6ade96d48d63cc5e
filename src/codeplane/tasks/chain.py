"""The ledger's hash chain (DECISIONS D12): how a row hash is computed and how a chain is verified.

Each operation row stores ``prev_hash`` (the previous row's ``row_hash``) and ``row_hash`` =
SHA-256 over ``prev_hash`` and every other column of the row, in :data:`HASHED_COLUMNS` order. Editing
any value, deleting or inserting a row, or truncating the tail breaks the chain at a precise row.

The retention job is the only deleter. It removes a *prefix* of the chain and then appends a
checkpoint row (``op_type = ledger.retention``) whose ``detail`` names the last deleted row and its
hash (the anchor). A chain that does not start at the genesis hash verifies only if a checkpoint
row - itself protected by the chain - vouches for exactly that start.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

GENESIS_HASH = "0" * 64
CHECKPOINT_OP = "ledger.retention"

#: Every column of ``operations`` except ``prev_hash``/``row_hash``, in hashing (and SELECT) order.
HASHED_COLUMNS: tuple[str, ...] = (
    "op_id", "task_id", "timestamp", "duration_ms", "op_type", "success",
    "repo_before_hash", "repo_after_hash", "changed_paths", "diff_stats", "short_diff",
    "mutation_fingerprint", "failure_fingerprint", "failure_class", "failing_tests", "limit_triggered",
    "session_id", "kind", "request_id", "error_code", "no_op", "non_progress", "result_bytes",
    "detail", "artifact_id", "artifact_sha256",
)
ALL_COLUMNS: tuple[str, ...] = (*HASHED_COLUMNS, "prev_hash", "row_hash")
_OP_ID = HASHED_COLUMNS.index("op_id")
_OP_TYPE = HASHED_COLUMNS.index("op_type")
_DETAIL = HASHED_COLUMNS.index("detail")


def row_hash(prev_hash: str, values: Sequence[Any]) -> str:
    """SHA-256 of the previous hash and the row's values (str, int or None only, as SQLite stores them)."""
    blob = json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{prev_hash}\n{blob}".encode()).hexdigest()


@dataclass(frozen=True)
class ChainReport:
    """The verdict of :func:`verify_rows`. ``first_broken_op_id`` is ``None`` when the chain holds."""

    ok: bool
    rows_checked: int
    first_op_id: int | None = None
    last_op_id: int | None = None
    first_broken_op_id: int | None = None
    reason: str | None = None
    checkpoints: int = 0

    def summary(self) -> str:
        if self.ok:
            if self.rows_checked == 0:
                return "ledger is empty"
            return (f"hash chain intact: {self.rows_checked} rows (op {self.first_op_id}..{self.last_op_id}), "
                    f"{self.checkpoints} retention checkpoint(s)")
        return f"first broken row op_id={self.first_broken_op_id}: {self.reason}"


def checkpoint_anchor(detail_json: str | None) -> tuple[int, str] | None:
    """(anchor op_id, anchor hash) from a checkpoint row's ``detail``; ``None`` if it is not one."""
    if not detail_json:
        return None
    try:
        detail = json.loads(detail_json)
        checkpoint = detail["checkpoint"]
        return int(checkpoint["anchor_op_id"]), str(checkpoint["anchor_hash"])
    except (ValueError, KeyError, TypeError):
        return None


def verify_rows(rows: Iterable[Sequence[Any]], *, sequence: int | None = None) -> ChainReport:
    """Verify rows given in ``op_id`` order as ``ALL_COLUMNS`` tuples.

    ``sequence`` is SQLite's AUTOINCREMENT high-water mark for ``operations``; when it is above the last
    row, rows were removed from the end. Stops at the first broken row.
    """
    count = checkpoints = 0
    first: Sequence[Any] | None = None
    prev: Sequence[Any] | None = None
    anchors: set[tuple[int, str]] = set()
    n = len(HASHED_COLUMNS)
    for row in rows:
        values, stored_prev, stored_hash = row[:n], row[n], row[n + 1]
        op_id = int(values[_OP_ID])
        count += 1
        problem: str | None = None
        if row_hash(str(stored_prev), values) != stored_hash:
            problem = "row_hash does not match the row's content (the row was modified)"
        elif prev is not None and op_id != int(prev[_OP_ID]) + 1:
            problem = f"op_id jumps from {prev[_OP_ID]} to {op_id} (rows were deleted)"
        elif prev is not None and stored_prev != prev[n + 1]:
            problem = "prev_hash does not match the previous row's row_hash"
        if problem is not None:
            return ChainReport(False, count, _op(first) or op_id, op_id, op_id, problem, checkpoints)
        if first is None:
            first = row
        if values[_OP_TYPE] == CHECKPOINT_OP:
            anchor = checkpoint_anchor(values[_DETAIL])
            if anchor is not None:
                anchors.add(anchor)
                checkpoints += 1
        prev = row
    if first is None or prev is None:
        if sequence:
            return ChainReport(False, 0, None, None, sequence,
                               f"ledger has no rows but {sequence} were written (rows were deleted)")
        return ChainReport(True, 0)
    first_id, last_id = int(first[_OP_ID]), int(prev[_OP_ID])
    starts_at_genesis = first[n] == GENESIS_HASH and first_id == 1
    if not starts_at_genesis and (first_id - 1, str(first[n])) not in anchors:
        return ChainReport(False, count, first_id, last_id, first_id,
                           "chain does not start at genesis and no retention checkpoint vouches for "
                           "the deleted prefix (rows were deleted)", checkpoints)
    if sequence is not None and sequence > last_id:
        return ChainReport(False, count, first_id, last_id, last_id + 1,
                           f"rows {last_id + 1}..{sequence} were removed from the end of the ledger",
                           checkpoints)
    return ChainReport(True, count, first_id, last_id, None, None, checkpoints)


def _op(row: Sequence[Any] | None) -> int | None:
    return None if row is None else int(row[_OP_ID])
