"""Drive a real :class:`TaskTracker` the way the dispatcher does (before_call → handler → after_call).

For service-level tests of budgets and convergence signals without starting a server: the outcome
carries synthetic ``MutationReport``/``FailureReport`` values exactly as real tool results provide them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.calls import CallInfo, CallKind, CallNotes, CallOutcome, FailureReport, MutationReport
from codeplane.core.config import TasksConfig
from codeplane.core.errors import CodePlaneError
from codeplane.tasks import Ledger, RepoSnapshot, TaskTracker, TrackerSettings

_ids = itertools.count(1)


class FakeClock:
    """A settable clock (ms) so duration and idle limits are tested without sleeping."""

    def __init__(self, start: int = 1_700_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * 1000)


def make_tracker(state_dir: Path, clock: FakeClock | None = None, **config: object) -> TaskTracker:
    settings = TrackerSettings.from_config(TasksConfig.model_validate(config))
    tracker = TaskTracker(Ledger(state_dir / "ledger.db"), settings,
                          snapshot=lambda: RepoSnapshot("a" * 40, 7),
                          artifacts=ArtifactStore(state_dir / "artifacts", 48), clock=clock or FakeClock())
    tracker.start()
    return tracker


@dataclass(frozen=True)
class Called:
    notes: CallNotes | None
    error: CodePlaneError | None
    request_id: str


def run_call(tracker: TaskTracker, tool: str, kind: CallKind, *, session: str = "s1",
             mutation: MutationReport | None = None, failure: FailureReport | None = None,
             result_bytes: int = 100, handler_error: CodePlaneError | None = None,
             during: Callable[[str], object] | None = None, result: object = None) -> Called:
    """``during(request_id)`` runs where the handler would (e.g. a task tool's service call)."""
    request_id = f"req_test_{next(_ids):06d}"
    info = CallInfo(tool=tool, kind=kind, session_id=session, request_id=request_id, started_ms=0)
    error: CodePlaneError | None = None
    try:
        tracker.before_call(info)
    except CodePlaneError as exc:
        error = exc
    if error is None and during is not None:
        try:
            during(request_id)
        except CodePlaneError as exc:
            error = exc
    if error is None and handler_error is not None:
        error = handler_error
    ok = error is None
    outcome = CallOutcome(
        info=info, duration_ms=0.2, ok=ok, error_code=error.code if error else None,
        error_name=error.error.name if error else None, result=result if ok else None,
        result_bytes=result_bytes if ok else 0,
        mutation=mutation if ok else None, failure=failure if ok else None,
    )
    return Called(tracker.after_call(outcome), error, request_id)


def edit(path: str = "a.py", sha: str = "1" * 64, *, ins: int = 1, dels: int = 0) -> MutationReport:
    return MutationReport(changed_paths=((path, sha),), insertions=ins, deletions=dels,
                          short_diff=f"--- a/{path}\n+++ b/{path}\n+secret content\n",
                          repo_before="b" * 40, repo_after="c" * 40)
