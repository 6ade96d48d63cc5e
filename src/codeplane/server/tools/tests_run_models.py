"""Output models of a test run (``run_test_targets``, ``get_test_run``, ``cancel_test_run``) and how a run
snapshot is rendered into them (bounded, sorted). The text of a run is rendered in ``tests_run_render``."""

from __future__ import annotations

import re
from typing import Any, Literal

from codeplane.core.clock import now_ms
from codeplane.server.tooling import ToolResult
from codeplane.testing.model import CaseResult, RunCoverage, RunSnapshot, TargetRecord
from codeplane.testing.paging import page, query_key
from codeplane.testing.reports import clip_ends

#: Inline bounds; everything else is in the artifacts or behind a cursor.
MAX_FAILURES = 25
MAX_ARTIFACTS = 100
#: A traceback or a target's message inline, at most (characters); the tail is kept, where the error is.
MAX_DETAIL_CHARS = 1500
_OUTCOME_ORDER = {"timeout": 0, "error": 1, "failed": 2, "flaky": 3, "cancelled": 4, "not_run": 5, "skipped": 6,
                  "passed": 7}


class CaseModel(ToolResult):
    case_id: str
    target_id: str
    outcome: Literal["passed", "failed", "error", "skipped", "xfail", "xpass"]
    duration_s: float
    message: str = ""
    exception_type: str = ""
    traceback: str = ""

    @classmethod
    def from_case(cls, case: CaseResult, *, detail: bool = True) -> CaseModel:
        return cls(case_id=case.case_id, target_id=case.target_id, outcome=case.outcome, duration_s=case.duration_s,
                   message=bounded(case.message), exception_type=case.exception_type,
                   traceback=bounded(case.traceback) if detail else "")


_NUMBER = re.compile(r"(\d+)")


def natural(case_id: str) -> tuple[tuple[int, int | str], ...]:
    """A case id's sort key with its numbers compared as numbers: ``[2]`` before ``[10]``, as pytest collects
    parameters (string order listed ``[0] [100] [101] … [11]``)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in _NUMBER.split(case_id) if part)


def bounded(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    """The end of ``text`` within ``limit``: where a traceback failed."""
    if len(text) <= limit:
        return text
    return "… " + text[len(text) - limit + 2:]


class ArtifactModel(ToolResult):
    kind: str
    artifact_id: str
    path: str
    sha256: str
    bytes: int


class AttemptModel(ToolResult):
    number: int
    batch_id: str
    outcome: str
    duration_s: float
    exit_code: int | None
    #: Empty when it is the previous attempt's message again (a re-run failing the same way).
    message: str = ""
    cases: int
    #: Cases this attempt ran: fewer than ``cases`` for pytest's in-process re-run of the failed ones.
    cases_run: int
    failing_cases: int
    #: Artifact ids of this attempt's process (logs, reports); details in the run's ``artifacts``.
    artifacts: list[str]


class TargetRunModel(ToolResult):
    target_id: str
    runner: str
    outcome: str
    attempts: list[AttemptModel]
    flaky_cases: list[str] = []


class CountsModel(ToolResult):
    """Cases by outcome; an outcome no case had is left out of the record (0), the total always said."""

    passed: int = 0
    failed: int = 0
    error: int = 0
    skipped: int = 0
    xfail: int = 0
    xpass: int = 0
    total: int


class ChangedCoverageModel(ToolResult):
    path: str
    #: The changed definition's qualified name.
    name: str
    ran: bool
    lines: int = 0
    lines_run: int = 0
    #: Changed code lines that did not run (max 20).
    missed: list[int] = []


class RunCoverageModel(ToolResult):
    """A coverage run: the evidence it stored, and how much of the changed code (affected_by) it ran (§11.9.5)."""

    tests: int
    untrusted: int = 0
    files: int = 0
    unmapped: list[str] = []
    unmapped_total: int = 0
    changed: list[ChangedCoverageModel] = []
    changed_total: int = 0
    changed_run: int = 0
    lines: int = 0
    lines_run: int = 0
    import_time_lines: int = 0
    note: str = ""

    @classmethod
    def from_coverage(cls, c: RunCoverage) -> RunCoverageModel:
        return cls(tests=c.tests, untrusted=c.untrusted, files=c.files, unmapped=list(c.unmapped),
                   unmapped_total=c.unmapped_total, changed=[
                       ChangedCoverageModel(path=u.path, name=u.name, ran=u.ran, lines=u.lines, lines_run=u.lines_run,
                                            missed=list(u.missed)) for u in c.changed],
                   changed_total=c.changed_total, changed_run=c.changed_run, lines=c.lines, lines_run=c.lines_run,
                   import_time_lines=c.import_time_lines, note=c.note)


class TestRunResult(ToolResult):
    """A test run (D9/D10): state and progress, targets with attempts, failures, artifacts."""

    __test__ = False

    run_id: str
    state: Literal["queued", "running", "passed", "failed", "cancelled", "timed_out"]
    finished: bool
    progress_percentage: float
    #: Epoch milliseconds of the last observed progress.
    last_progress_at: int
    started_at: int
    finished_at: int | None
    duration_s: float
    workers: int
    fail_fast: bool = False
    timeout_sec: float
    #: What the run is doing or why it ended other than by its cases (a server stop); "" for nothing to say.
    message: str = ""
    counts: CountsModel
    #: Targets per outcome (``passed``, ``failed``, ``flaky``, ``timeout``, ...).
    target_outcomes: dict[str, int]
    #: Targets that did not pass (every target with include='targets'); passing ones are in target_outcomes.
    targets: list[TargetRunModel]
    targets_total: int
    failures: list[CaseModel]
    failures_total: int = 0
    flaky: list[str]
    #: The first attempt's failure of each flaky case (message, traceback): a pass on retry does not erase it.
    flaky_failures: list[CaseModel] = []
    fingerprint: str | None
    artifacts: list[ArtifactModel]
    artifacts_total: int = 0
    #: ``include='cases'``: one page of every case of the final attempts (the failing ones with
    #: ``status='failed'``), by case id.
    cases: list[CaseModel] = []
    next_cursor: str | None = None
    #: When ``failures`` holds fewer than ``failures_total``: the ``include='cases', status='failed'`` cursor of
    #: the failing cases after those shown.
    failures_cursor: str | None = None
    #: A page a cursor continued: its text is the page alone (the summary was the first page's).
    continued: bool = False
    poll_hint: str | None = None
    #: cancel_test_run on a run that had already ended: nothing was stopped (the record is the run's head only).
    not_cancelled: bool = False
    #: Only for a finished coverage=true run.
    coverage: RunCoverageModel | None = None


def _attempt(record: TargetRecord) -> list[AttemptModel]:
    models = []
    previous = None
    for a in record.attempts:
        message = a.result.message
        models.append(AttemptModel(
            number=a.number, batch_id=a.batch_id, outcome=a.result.outcome, duration_s=a.result.duration_s,
            exit_code=a.result.exit_code, message="" if message == previous else clip_ends(message, MAX_DETAIL_CHARS),
            cases=len(a.result.cases) + a.result.unlisted_passed,
            cases_run=(a.result.cases_run if a.result.cases_run is not None
                       else len(a.result.cases) + a.result.unlisted_passed),
            failing_cases=sum(1 for c in a.result.cases if c.failing),
            artifacts=[x.artifact_id for x in a.artifacts]))
        previous = message
    return models


def _first_failures(targets: tuple[TargetRecord, ...]) -> list[CaseResult]:
    """How each flaky case failed the first time, by case id."""
    found = [c for r in targets if r.flaky_cases and r.attempts
             for c in r.attempts[0].result.cases if c.case_id in set(r.flaky_cases)]
    return sorted(found, key=lambda c: natural(c.case_id))


def _cases_key(snapshot: RunSnapshot, include: str, status: str | None) -> str:
    return query_key("run", snapshot.run_id, include, snapshot.finished, *([status] if status else []))


def failures_cursor(snapshot: RunSnapshot, total: int, shown: int) -> str | None:
    """The ``include='cases', status='failed'`` cursor of the failing cases after the first ``shown`` (the
    summary's failures are that listing's head, in the same order), None when every one was shown."""
    if not 0 < shown < total:
        return None
    return page(range(total), key=_cases_key(snapshot, "cases", "failed"), cursor=None, limit=shown,
                growing=True)[1]


def render_run(snapshot: RunSnapshot, *, include: str = "summary", cursor: str | None = None,
               limit: int = 100, status: str | None = None) -> dict[str, Any]:
    """The fields of a :class:`TestRunResult` for ``snapshot``; lists are sorted and bounded. ``status='failed'``
    lists only the failing cases (``include='cases'``), exactly the run's ``failures`` in their order."""
    ordered = sorted(snapshot.targets, key=lambda r: (_OUTCOME_ORDER.get(r.outcome, 9), r.target.target_id))
    finals = [(r, r.final) for r in ordered]
    failures = sorted((c for r, final in finals if final is not None and r.outcome != "flaky"
                       for c in final.cases if c.failing), key=lambda c: natural(c.case_id))
    key = _cases_key(snapshot, include, status if include == "cases" else None)
    cases: list[CaseModel] = []
    targets_page = ordered
    next_cursor = None
    if include == "cases":
        every = failures if status == "failed" else sorted(
            (c for _, final in finals if final is not None for c in final.cases), key=lambda c: natural(c.case_id))
        chunk, next_cursor = page(every, key=key, cursor=cursor, limit=limit, growing=True)
        cases = [CaseModel.from_case(c, detail=c.failing) for c in chunk]
        # The failing listing names the targets that did not pass only (the passing ones are its head's counts).
        targets_page = [r for r in ordered if r.outcome != "passed"][:limit] if status == "failed" else ordered[:limit]
    elif include == "targets":
        targets_page, next_cursor = page(ordered, key=key, cursor=cursor, limit=limit, growing=True)
    else:
        # An answer scales with what failed, not with the suite: passing targets are counts only.
        unsettled = [r for r in ordered if r.outcome != "passed"]
        targets_page, next_cursor = page(unsettled, key=key, cursor=cursor, limit=limit, growing=True)
    listed_artifacts = {x.artifact_id for r in targets_page for a in r.attempts for x in a.artifacts}
    artifacts = [a for a in snapshot.artifacts if include != "summary" or a.artifact_id in listed_artifacts]
    outcomes: dict[str, int] = {}
    for record in snapshot.targets:
        outcomes[record.outcome] = outcomes.get(record.outcome, 0) + 1
    counts = snapshot.counts
    end = snapshot.finished_at
    return {
        "run_id": snapshot.run_id, "state": snapshot.state, "finished": snapshot.finished,
        "progress_percentage": snapshot.progress_percentage, "last_progress_at": snapshot.last_progress_at,
        "started_at": snapshot.started_at, "finished_at": end,
        # A running run's time so far (it stayed 0.0 s until a case finished: the last progress was its start).
        "duration_s": round(((end or max(snapshot.last_progress_at, now_ms())) - snapshot.started_at) / 1000.0, 3),
        "workers": snapshot.workers, "fail_fast": snapshot.fail_fast, "timeout_sec": snapshot.timeout_sec,
        "message": snapshot.message,
        "counts": CountsModel(passed=counts.passed, failed=counts.failed, error=counts.error, skipped=counts.skipped,
                              xfail=counts.xfail, xpass=counts.xpass, total=counts.total),
        "target_outcomes": dict(sorted(outcomes.items())),
        "targets": [TargetRunModel(target_id=r.target.target_id, runner=r.target.runner, outcome=r.outcome,
                                   attempts=_attempt(r), flaky_cases=list(r.flaky_cases)) for r in targets_page],
        "targets_total": len(ordered),
        "failures": [CaseModel.from_case(c) for c in failures[:MAX_FAILURES]],
        "failures_total": len(failures),
        "flaky": sorted(c for r in snapshot.targets for c in r.flaky_cases)[:MAX_FAILURES],
        "flaky_failures": [CaseModel.from_case(c) for c in _first_failures(snapshot.targets)[:MAX_FAILURES]],
        "fingerprint": snapshot.fingerprint,
        "artifacts": [ArtifactModel(kind=a.kind, artifact_id=a.artifact_id, path=a.path, sha256=a.sha256,
                                    bytes=a.bytes) for a in artifacts[:MAX_ARTIFACTS]],
        "artifacts_total": len(artifacts),
        "cases": cases, "next_cursor": next_cursor, "continued": cursor is not None,
        "coverage": RunCoverageModel.from_coverage(snapshot.coverage) if snapshot.coverage is not None else None,
        # The head line names the run: the hint only says which call waits and which stops (125 bytes a poll).
        "poll_hint": None if snapshot.finished else "wait: get_test_run with wait_sec=30; stop: cancel_test_run",
    }
