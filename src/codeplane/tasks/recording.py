"""Turning a tool call's outcome into one ledger row (§12.5), without prompts or file contents.

The row keeps paths, hashes, counts, fingerprints and the tool's content-free ``op_detail``. A
mutation's ``short_diff`` from its report is a real diff excerpt (it contains file text), so it goes to
the artifact store and the row keeps only a reference plus a path-level summary (``~ a.py``, ``- b.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from codeplane.core import unanswered
from codeplane.core.artifacts import ArtifactRef
from codeplane.core.calls import CallOutcome, MutationReport
from codeplane.core.logging import get_logger
from codeplane.tasks.convergence import Convergence
from codeplane.tasks.models import OperationRecord

if TYPE_CHECKING:  # the ledger imports this module
    from codeplane.tasks.ledger import Ledger

log = get_logger(__name__)

#: Bounds that keep one row small whatever the call touched (the full list is in the artifact, if any).
MAX_PATHS = 500
#: The row a start writes for a write a killed server applied and never answered (``core/unanswered.py``).
UNANSWERED_OP = "write.unanswered"
MAX_SUMMARY_PATHS = 50
MAX_FAILING_TESTS = 200
#: Characters of a tool name a row keeps, its cut marker included: a name the registry does not serve is the caller's
#: text, and one of 2 MB was stored whole, then echoed by get_task, describe, /status and cpl status (past the SDK's
#: 1 MB event).
TOOL_NAME_MAX = 120


def bounded_tool_name(name: str) -> str:
    """``name`` as a row or a status line keeps it: characters that would break a line (control, bidi) escaped, and
    past :data:`TOOL_NAME_MAX` cut with ``…(N chars)``. Applying it again changes nothing (rows are re-read)."""
    shown = name[:TOOL_NAME_MAX + 1]
    if not shown.isprintable():
        shown = shown.encode("unicode_escape").decode("ascii")
    if len(name) <= TOOL_NAME_MAX and len(shown) <= TOOL_NAME_MAX:
        return shown
    marker = f"…({len(name):,} chars)"
    return shown[:TOOL_NAME_MAX - len(marker)] + marker


def path_summary(report: MutationReport) -> str:
    """``+ path`` for a created file, ``~ path`` for a changed one, ``- path`` for a deleted one; at most
    ``MAX_SUMMARY_PATHS`` lines. A move's destination is created (``+``, among ``created_paths``), its source
    deleted (QA56 #5: it read ``~``)."""
    created = set(report.created_paths)
    lines = [f"{'-' if not sha else '+' if path in created else '~'} {path}"
             for path, sha in report.changed_paths[:MAX_SUMMARY_PATHS]]
    hidden = len(report.changed_paths) - MAX_SUMMARY_PATHS
    if hidden > 0:
        lines.append(f"… {hidden} more")
    return "\n".join(lines)


def operation_record(
    outcome: CallOutcome,
    *,
    task_id: str | None,
    convergence: Convergence | None,
    limit_triggered: str | None,
    extra_detail: dict[str, Any] | None,
    stash: Callable[[bytes], ArtifactRef | None] | None,
) -> OperationRecord:
    """The row for one call. ``stash`` stores bytes as an artifact and returns its reference."""
    info = outcome.info
    detail: dict[str, Any] = {}
    if info.op_detail:
        detail["args"] = info.op_detail
    if outcome.error_name:
        detail["error"] = outcome.error_name
    detail.update(extra_detail or {})
    fields: dict[str, Any] = {}
    report = outcome.mutation
    if report is not None:
        paths = tuple(path for path, _ in report.changed_paths)
        files = report.files_changed if report.files_changed is not None else len(paths)
        if files > min(len(paths), MAX_PATHS):
            detail["changed_paths_total"] = files
        paths = paths[:MAX_PATHS]
        if report.uncounted:
            detail["lines_uncounted"] = report.uncounted
        fields.update(
            repo_before_hash=report.repo_before or None, repo_after_hash=report.repo_after or None,
            changed_paths=paths, diff_stats=(files, report.insertions, report.deletions),
            short_diff=path_summary(report),
        )
        if report.symbols_changed:
            detail["symbols_changed"] = len(report.symbols_changed)
        if report.short_diff and stash is not None:
            ref = stash(report.short_diff.encode("utf-8"))
            if ref is not None:
                fields.update(artifact_id=ref.artifact_id, artifact_sha256=ref.sha256)
    failure = outcome.failure
    if failure is not None:
        fields.update(failure_fingerprint=failure.fingerprint, failure_class=failure.failure_class or None,
                      failing_tests=tuple(sorted(failure.failing_tests))[:MAX_FAILING_TESTS])
        if failure.exit_code is not None:
            detail["exit_code"] = failure.exit_code
    if convergence is not None:
        fields.update(mutation_fingerprint=convergence.mutation_fingerprint, no_op=convergence.no_op,
                      non_progress=convergence.non_progress)
        if convergence.failure_fingerprint:
            fields["failure_fingerprint"] = convergence.failure_fingerprint
    return OperationRecord(
        task_id=task_id, timestamp_ms=info.started_ms, op_type=bounded_tool_name(info.tool), success=outcome.ok,
        duration_ms=round(outcome.duration_ms), session_id=info.session_id, kind=info.kind,
        request_id=info.request_id, error_code=outcome.error_code, limit_triggered=limit_triggered,
        result_bytes=outcome.result_bytes if outcome.ok else None, detail=detail, **fields,
    )


def record_unanswered(ledger: Ledger, *, record_operations: bool) -> None:
    """A row for each write a previous server applied and was killed before answering (``core/unanswered``), under
    the session and task that admitted it. Run before that server's OPEN tasks are closed, so the row comes before
    its task's closing, as the call's own row would have."""
    for entry in unanswered.pending(ledger.path.parent):
        if record_operations:
            owner = entry.owner
            # A row names only a task the ledger holds (a foreign key); the tracker stores a task when it admits a
            # write, so only a lost ledger tail leaves one out: the row then keeps the id in its detail.
            stored = owner is not None and ledger.get_task(owner.task_id) is not None
            ledger.record(OperationRecord(
                task_id=owner.task_id if owner is not None and stored else None, timestamp_ms=entry.at_ms,
                op_type=UNANSWERED_OP, success=True, session_id=owner.session_id if owner is not None else None,
                kind="mutation", request_id=entry.request_id, changed_paths=entry.paths,
                detail={"tool": bounded_tool_name(entry.tool or "write"), "batch": entry.batch,
                        "why": "applied; the server stopped before it answered (recorded at the next start)",
                        **({"task": owner.task_id} if owner is not None and not stored else {}),
                        **({"changed_paths_total": entry.paths_total}
                           if entry.paths_total > len(entry.paths) else {})}))
        entry.file.unlink(missing_ok=True)
        log.warning("a write applied before the server stopped had no ledger row; recorded", batch=entry.batch,
                    tool=entry.tool, files=entry.paths_total)
