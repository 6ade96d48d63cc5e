"""Ledger retention (§12.5): the only code that deletes ledger rows.

A closed task expires when it closed more than ``max_age_days`` ago or when it is not among the
newest ``keep_tasks`` tasks (whichever comes first). OPEN tasks never expire. Only a *prefix* of the
operation chain is deleted - up to the first row of a task that is kept - so the surviving rows still
chain; an expired task whose rows interleave with a kept task's rows goes in a later run. The job
then appends a checkpoint row naming the last deleted row and its hash (see ``chain.py``). A
``ledger.quarantine`` or ``ledger.missing`` row younger than ``max_age_days`` is never deleted (``quarantine.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from codeplane.core.clock import iso_utc
from codeplane.tasks.chain import CHECKPOINT_OP
from codeplane.tasks.ledger import Ledger
from codeplane.tasks.ledger_identity import MISSING_OP
from codeplane.tasks.models import OperationRecord
from codeplane.tasks.quarantine import QUARANTINE_OP
from codeplane.tasks.recording import UNANSWERED_OP

_DAY_MS = 86_400_000


@dataclass(frozen=True)
class RetentionReport:
    deleted_operations: int = 0
    deleted_tasks: int = 0
    checkpoint_op_id: int | None = None


def run_retention(ledger: Ledger, *, now_ms: int, max_age_days: int, keep_tasks: int) -> RetentionReport:
    """Delete the expired prefix of the ledger in one transaction and record a checkpoint row.

    Does nothing (and records nothing) when no row has expired. On failure the transaction rolls back
    and the ledger is unchanged.
    """
    with ledger.transaction() as conn:
        conn.execute("DROP TABLE IF EXISTS temp.expired_tasks")
        conn.execute(
            "CREATE TEMP TABLE expired_tasks AS SELECT task_id FROM tasks WHERE state <> 'OPEN' AND ("
            " closed_at_ms < :cutoff OR task_id NOT IN ("
            "  SELECT task_id FROM tasks ORDER BY opened_at_ms DESC, task_id DESC LIMIT :keep))",
            {"cutoff": now_ms - max_age_days * _DAY_MS, "keep": keep_tasks},
        )
        first_kept = conn.execute(
            "SELECT MIN(op_id) FROM operations WHERE task_id IS NOT NULL"
            " AND task_id NOT IN (SELECT task_id FROM temp.expired_tasks)").fetchone()[0]
        last_op_id, _ = ledger.head
        through = last_op_id if first_kept is None else int(first_kept) - 1
        # A quarantine row (the new chain's record of a damaged ledger moved aside), like the record of a write
        # a killed server never answered (it belongs to no saved task), is evidence: it stays for the age limit
        # even when no task is kept, so the prefix stops before it.
        pinned = conn.execute("SELECT MIN(op_id) FROM operations WHERE op_type IN (?, ?, ?) AND timestamp >= ?",
                              (QUARANTINE_OP, MISSING_OP, UNANSWERED_OP,
                               iso_utc(now_ms - max_age_days * _DAY_MS))).fetchone()[0]
        if pinned is not None:
            through = min(through, int(pinned) - 1)
        anchor = conn.execute("SELECT op_id, row_hash FROM operations WHERE op_id <= ? "
                              "ORDER BY op_id DESC LIMIT 1", (through,)).fetchone()
        if anchor is None:
            conn.execute("DROP TABLE temp.expired_tasks")
            return RetentionReport()
        # The guard lets the delete triggers through for this transaction only.
        conn.execute("UPDATE ledger_guard SET retention_active = 1 WHERE id = 1")
        deleted_ops = conn.execute("DELETE FROM operations WHERE op_id <= ?", (through,)).rowcount
        deleted_tasks = conn.execute(
            "DELETE FROM tasks WHERE task_id IN (SELECT task_id FROM temp.expired_tasks)"
            " AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.task_id = tasks.task_id)").rowcount
        conn.execute("UPDATE ledger_guard SET retention_active = 0 WHERE id = 1")
        conn.execute("DROP TABLE temp.expired_tasks")
        checkpoint = OperationRecord(
            task_id=None, timestamp_ms=now_ms, op_type=CHECKPOINT_OP, success=True, kind="maintenance",
            detail={"checkpoint": {
                "anchor_op_id": int(anchor["op_id"]), "anchor_hash": str(anchor["row_hash"]),
                "deleted_operations": deleted_ops, "deleted_tasks": deleted_tasks,
                "max_age_days": max_age_days, "keep_tasks": keep_tasks}},
        )
        op_id = ledger.append_in(conn, checkpoint)
    return RetentionReport(deleted_ops, deleted_tasks, op_id)
