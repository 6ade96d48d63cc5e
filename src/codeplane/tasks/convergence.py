"""Convergence signals (§12.3): no-op mutations and non-progress failures. Reported, never acted on.

- A mutation's fingerprint is ``core.fingerprints.mutation_fingerprint`` over its report. The call is a
  no-op (still counted on admission) when the fingerprint equals the task's previous one (§12.3), and
  also when the call provably changed nothing: its result reports no change (``mutation_report()``
  returned ``None`` or no paths) or the repository state before and after is the same (for git, whose
  state is HEAD, only when no path changed either: a merge stopped on conflicts wrote the work tree).
- A mutation its handler refused (admitted, then failed: text not found, a stale precondition, invalid
  arguments) changed nothing; its fingerprint is ``refusal_fingerprint`` over the tool, its arguments and the
  error code, and it is a no-op when that equals the task's previous mutation fingerprint: an agent retrying the
  same refused edit is the commonest loop, and the answers said nothing until the budget ran out. A refusal
  by the budgets themselves (6001/6003) is not an attempt and gets no fingerprint.
- A failing test run carries the fingerprint the tests subsystem computed with the shared normaliser.
  When it equals the task's previous failure fingerprint *and* a mutation happened in between, the
  answer says ``non_progress: true``. A run without a failure report leaves the previous failure in
  place: a result cannot tell "passed" from "still running" (D9), and a false "no progress" only
  reports, while a missed one hides a loop.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from codeplane.core.calls import CallNotes, CallOutcome, MutationReport, ReportsMutation
from codeplane.core.fingerprints import mutation_fingerprint
from codeplane.tasks.models import TaskRecord, TaskState

_NOTHING_CHANGED = MutationReport(changed_paths=())


@dataclass(frozen=True)
class Convergence:
    task: TaskRecord
    mutation_fingerprint: str | None = None
    no_op: bool | None = None
    failure_fingerprint: str | None = None
    non_progress: bool | None = None

    def notes(self, warnings: tuple[str, ...] = ()) -> CallNotes:
        return CallNotes(no_op=self.no_op, non_progress=self.non_progress,
                         mutation_fingerprint=self.mutation_fingerprint,
                         failure_fingerprint=self.failure_fingerprint, warnings=warnings)


def arguments_digest(tool: str, arguments: dict[str, Any]) -> str:
    """A digest of a call's tool and arguments (canonical JSON), content-free."""
    canonical = json.dumps([tool, arguments], sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def refusal_fingerprint(arguments_digest: str, error_code: int | None) -> str:
    """The fingerprint of a mutation its handler refused: the same call refused the same way repeats it."""
    return "mr_" + hashlib.sha256(f"{arguments_digest}:{error_code}".encode()).hexdigest()[:32]


def observe(task: TaskRecord, outcome: CallOutcome, *, update_task: bool = True,
            refused_attempt: str | None = None) -> Convergence:
    """Fingerprint the call's reports and compare them with the task's previous ones.

    ``update_task=False`` computes the signals without changing the task (a call whose task was
    closed or replaced while it ran must not touch the new or final record). ``refused_attempt`` is the
    :func:`refusal_fingerprint` of an admitted mutation its handler refused.
    """
    update_task = update_task and task.state is TaskState.OPEN
    mutation_fp = no_op = failure_fp = non_progress = None
    current = task
    report = outcome.mutation
    if report is None and outcome.ok and outcome.info.kind == "mutation" and isinstance(
            outcome.result, ReportsMutation):
        report = _NOTHING_CHANGED  # the tool says it changed nothing
    if report is not None:
        mutation_fp = mutation_fingerprint(report.changed_paths, report.insertions, report.deletions,
                                           report.symbols_changed, report.refs_moved)
        changed = bool(report.changed_paths or report.refs_moved)
        unchanged = (bool(report.repo_before) and report.repo_before == report.repo_after
                     and not (report.head_only and changed))
        no_op = mutation_fp == task.last_mutation_fingerprint or unchanged or not changed
        current = current.with_changes(last_mutation_fingerprint=mutation_fp, mutated_since_failure=True)
    elif refused_attempt is not None and not outcome.ok:
        mutation_fp = refused_attempt
        no_op = refused_attempt == task.last_mutation_fingerprint
        current = current.with_changes(last_mutation_fingerprint=mutation_fp)  # nothing changed: no failure reset
    failure = outcome.failure
    if failure is not None:
        failure_fp = failure.fingerprint
        non_progress = failure_fp == current.last_failure_fingerprint and current.mutated_since_failure
        current = current.with_changes(last_failure_fingerprint=failure_fp, mutated_since_failure=False)
    return Convergence(current if update_task else task, mutation_fp, no_op, failure_fp, non_progress)
