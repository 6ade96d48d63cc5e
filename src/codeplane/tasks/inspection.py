"""Read-only views of ``ledger.db`` for the CLI: ``cpl doctor``'s chain and quarantine checks and
``cpl status`` offline.

They open the file read-only and never create it, so they are safe while the server writes (WAL).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codeplane.core.clock import now_ms
from codeplane.core.doctor import CheckResult, unwritable_check
from codeplane.core.errors import CodePlaneError
from codeplane.core.layout import RepoLayout
from codeplane.core.stores import sqlite_problem
from codeplane.tasks.budgets import past_deadline
from codeplane.tasks.ledger import connect_read_only, task_from_row, verify_connection
from codeplane.tasks.ledger_identity import never_initialised, remembered
from codeplane.tasks.quarantine import current_sha256, quarantined
from codeplane.tasks.recording import bounded_tool_name
from codeplane.tasks.schema import newer_ledger, recorded_version

#: The triggers that make the ledger append-only (schema.py); a missing one is a failed check.
REQUIRED_TRIGGERS = ("operations_reject_delete", "operations_reject_update", "tasks_closed_are_final",
                     "tasks_identity_is_fixed", "tasks_reject_delete")
#: Ledger rows ``/status`` and ``cpl status`` list as the last operations (the same bound with or without a server).
RECENT_OPERATIONS = 5
#: What a last-operations row keeps of a ledger row (``get_task`` and the operations API have the whole row).
_BRIEF = ("op_id", "timestamp", "task_id", "op_type", "success", "error_code", "duration_ms", "limit_triggered",
          "no_op", "non_progress")
#: A task's deadline in SQL, as ``TaskRecord.deadline_ms`` computes it (``limits_json`` always holds the limit).
_DEADLINE = "opened_at_ms + json_extract(limits_json, '$.max_duration_sec') * 1000"
_CHECK = "ledger hash chain"
_FIX = ("the ledger was changed outside CodePlane; keep a copy of .codeplane/ledger.db for inspection, "
        "then move it aside (the server starts a new ledger)")
_DAMAGED = ("`cpl doctor --fix` (or the next `cpl up`) moves it aside as ledger.corrupt-<time>.db, records its "
            "SHA-256 and starts a new chain")


def check_ledger(root: Path) -> list[CheckResult]:
    """``cpl doctor``: verify the hash chain and the append-only triggers; name the first broken row."""
    path = RepoLayout(root).ledger_db
    results = check_quarantined(root)
    if not path.exists():
        gone = remembered(path.parent)
        if gone is not None:
            return [CheckResult("ledger.db present", False, f"ledger {gone[0]} (created {gone[1]}) is missing",
                                "restore it from a backup; otherwise the next start begins a new chain that "
                                "records the loss"), *results]
        return [CheckResult(_CHECK, True, "no ledger yet (the server creates it on first start)"), *results]
    if never_initialised(path):
        return [CheckResult(_CHECK, True, "no ledger yet: ledger.db was created but holds no chain (a first start "
                            "that failed, e.g. on a full disk); the next start makes the ledger in it"), *results]
    try:
        problem = sqlite_problem(path, read_only=True)
    except CodePlaneError as exc:
        return [unwritable_check("ledger.db integrity", exc), *results]
    if problem is not None:
        return [CheckResult("ledger.db integrity", False, problem, _DAMAGED), *results]
    try:
        conn = connect_read_only(path)
    except sqlite3.Error as exc:
        return [CheckResult(_CHECK, False, f"cannot open {path}: {exc}", _DAMAGED), *results]
    try:
        refused = newer_ledger(recorded_version(conn), path)
        if refused is not None:  # its chain and triggers are a newer version's to judge
            return [CheckResult("ledger schema", False, f"{refused.code} {refused.message}",
                                "run the CodePlane version that wrote it (this one's server refuses to start on it), "
                                "or move ledger.db aside to start a new chain"), *results]
        report = verify_connection(conn)
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    except sqlite3.Error as exc:
        return [CheckResult(_CHECK, False, f"cannot read {path}: {exc}", _DAMAGED), *results]
    finally:
        conn.close()
    results.insert(0, CheckResult(_CHECK, report.ok, report.summary(), "" if report.ok else _FIX))
    missing = [t for t in REQUIRED_TRIGGERS if t not in present]
    results.insert(1, CheckResult("ledger append-only triggers", not missing,
                                  f"missing: {', '.join(missing)}" if missing else "UPDATE/DELETE rejected by SQLite",
                                  _FIX if missing else ""))
    return results


def check_quarantined(root: Path) -> list[CheckResult]:
    """One failed check per quarantined ledger the user has not acknowledged (evidence is reported until
    someone looked at it); a file changed since it was moved aside fails even when acknowledged."""
    results: list[CheckResult] = []
    for path, record in quarantined(RepoLayout(root).state_dir):
        if record.missing:
            results.append(CheckResult(
                "missing ledger", record.acknowledged_at is not None,
                f"{record.reason}; noticed {record.quarantined_at}, a new chain records it ({path.name})"
                + (f"; acknowledged {record.acknowledged_at}" if record.acknowledged_at else ""),
                "" if record.acknowledged_at else "restore it from a backup if it matters, then "
                "`cpl doctor --ack-quarantine`"))
            continue
        changed = current_sha256(path) != record.sha256
        detail = (f"{path.name} ({record.size} bytes, sha256 {record.sha256}) moved aside {record.quarantined_at}: "
                  f"{record.reason}")
        if changed:
            results.append(CheckResult("quarantined ledger", False, f"{detail}; the file changed since then",
                                       "the quarantined file was modified; restore it from a backup if you have one"))
        elif record.acknowledged_at is None:
            results.append(CheckResult("quarantined ledger", False, detail,
                                       "inspect or archive it, then `cpl doctor --ack-quarantine` (the file is kept)"))
        else:
            results.append(CheckResult("quarantined ledger", True, f"{detail}; acknowledged {record.acknowledged_at}"))
    return results


def quarantine_warnings(state_dir: Path, *, skip: str | None = None) -> list[str]:
    """One line per quarantined ledger not yet acknowledged (``skip``: one the caller already reports)."""
    return [(f"ledger missing: {record.reason} ({path.name}); " if record.missing else
             f"ledger quarantined: {path.name} (sha256 {record.sha256}): {record.reason}; ")
            + "`cpl doctor --ack-quarantine` once inspected"
            for path, record in quarantined(state_dir)
            if record.acknowledged_at is None and path.name != skip]


def brief_operation(row: Mapping[str, Any]) -> dict[str, Any]:
    """A ledger row (stored values, by column) as ``/status`` and ``cpl status`` list it: the same shape whether the
    row was just written by the server or read back after a restart or without a server. A value that says nothing
    (null, an unset flag) is left out; ``success`` always stays."""
    out: dict[str, Any] = {}
    for key in _BRIEF:
        value = row.get(key)
        if key in ("success", "no_op", "non_progress") and value is not None:
            value = bool(value)
        elif key == "op_type" and isinstance(value, str):
            value = bounded_tool_name(value)  # a row older than the bound may hold a name of megabytes
        if key == "success" or (value is not None and value is not False):
            out[key] = value
    return out


def ledger_overview(path: Path, *, recent: int = RECENT_OPERATIONS, max_tasks: int = 50,
                    now: int | None = None) -> dict[str, Any] | None:
    """Open tasks and the last operations straight from the file (``cpl status`` without a server).

    As the running server's status does: the ``max_tasks`` newest open tasks, newest first, with the true
    ``open_task_count`` (an agent that crashed was using its newest task). Tasks left OPEN here belong to a
    server that stopped; the next server start closes them as CLOSED_INTERRUPTED. One past its deadline (``now``,
    the clock by default) is not open: as a server would, it is listed among ``failed_tasks`` (CLOSED_FAILED by
    ``duration``, which the next start records), never as open (QA56 #4). ``None`` when there is no ledger (or
    only a ``ledger.db`` that never became one).
    """
    if not path.is_file() or never_initialised(path):
        return None
    try:
        return _overview(path, recent, max_tasks, now_ms() if now is None else now)
    except sqlite3.Error as exc:  # damaged: doctor explains, the next start quarantines it
        return {"open_tasks": [], "recent_operations": [], "ledger": {"path": str(path), "unreadable": str(exc)}}


def _overview(path: Path, recent: int, max_tasks: int, now: int) -> dict[str, Any]:
    conn = connect_read_only(path)
    try:
        refused = newer_ledger(recorded_version(conn), path)
        if refused is not None:  # what the server would say at its start, rather than rows of a schema it does not know
            return {"open_tasks": [], "recent_operations": [], "ledger": {"path": str(path), "refused": {
                "code": refused.code, "error": refused.error.name, "message": refused.message}}}
        tasks = conn.execute(f"SELECT * FROM tasks WHERE state = 'OPEN' AND {_DEADLINE} > ? "
                             "ORDER BY opened_at_ms DESC, task_id LIMIT ?", (now, max_tasks)).fetchall()
        open_count = conn.execute(f"SELECT COUNT(*) FROM tasks WHERE state = 'OPEN' AND {_DEADLINE} > ?",
                                  (now,)).fetchone()[0]
        late = conn.execute(f"SELECT * FROM tasks WHERE state = 'OPEN' AND {_DEADLINE} <= ? "
                            "ORDER BY opened_at_ms DESC, task_id LIMIT ?", (now, max_tasks)).fetchall()
        ops = conn.execute(f"SELECT {', '.join(_BRIEF)} FROM operations ORDER BY op_id DESC LIMIT ?",
                           (recent,)).fetchall()
        counts = conn.execute("SELECT (SELECT COUNT(*) FROM operations), (SELECT COUNT(*) FROM tasks)").fetchone()
    finally:
        conn.close()
    open_tasks = []
    for row in tasks:
        task = task_from_row(row)
        open_tasks.append({**task.to_public(task.opened_at_ms), "budget": task.budget_line(),
                           "note": "server not running: closed as CLOSED_INTERRUPTED on next start"})
    # Closed in the answer only (the file is read-only here), as the server closes one it reaches past the deadline.
    failed = [past_deadline(task_from_row(row), now) for row in late]
    return {
        "open_tasks": open_tasks,
        "open_task_count": int(open_count),
        **({"failed_tasks": [{**task.to_public(now), "budget": task.budget_line(),
                              "note": "server not running: past its deadline; recorded on next start"}
                             for task in failed]} if failed else {}),
        "recent_operations": [brief_operation(dict(zip(_BRIEF, r, strict=True))) for r in reversed(ops)],
        "ledger": {"path": str(path), "operations": int(counts[0]), "tasks": int(counts[1])},
    }
