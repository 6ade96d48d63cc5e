"""A test run in flight and after (D9, D10): state, progress, attempts per target, the failure report.

:class:`RunRecord` is written by the executor's worker threads and read by tool calls in other threads, so
every access holds one condition variable; readers get frozen :class:`RunSnapshot` values and can block
until something changes (``wait``), which is how ``wait_sec`` and progress notifications work.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Sequence

from codeplane.core.calls import FailureReport
from codeplane.core.clock import now_ms
from codeplane.core.fingerprints import failure_fingerprint
from codeplane.testing.model import (
    FAILING_OUTCOMES,
    TERMINAL_STATES,
    Attempt,
    Counts,
    RunArtifact,
    RunCoverage,
    RunSnapshot,
    RunState,
    Target,
    TargetOutcome,
    TargetRecord,
)

_counter = itertools.count(1)
#: Failing cases whose tracebacks go into the fingerprint's stack part.
_STACK_CASES = 5


def new_run_id() -> str:
    return f"tr_{now_ms():x}{os.getpid() % 4096:03x}{next(_counter):04x}"


class RunRecord:
    """Mutable, thread-safe record of one run. Attempts are appended, never replaced (D10)."""

    def __init__(self, run_id: str, targets: Sequence[Target], *, workers: int, fail_fast: bool,
                 timeout_sec: float, why_empty: str = "", selection_note: str = "",
                 inconclusive: bool = False) -> None:
        self.run_id = run_id
        #: How the targets were chosen when the answer should say it (files selected at module level).
        self._selection_note = selection_note
        #: Why a run has no target at all (an ``affected_by`` that reached no test): its answer says so, where
        #: "passed: no cases" alone read as a pass.
        self._why_empty = why_empty if not targets else ""
        #: A run with no target whose selection was ``partial``: nothing proves that no test reaches the change, so
        #: it ends ``failed`` (failure class ``not_run``), never ``passed`` — a state an agent or a gate reads as
        #: "verified" (QA s50). Not widened to more tests instead: §11.9.7, CodePlane never broadens a partial
        #: selection on its own; the agent chooses the targets.
        self._inconclusive = inconclusive and not targets
        self.targets = {t.target_id: t for t in targets}
        self.workers = workers
        self.fail_fast = fail_fast
        self.timeout_sec = timeout_sec
        self.cancel_requested = threading.Event()
        #: What the run's message says when it ends cancelled: who asked (a cancel call, or the server stopping).
        self.cancel_reason = "cancelled on request"
        self._cond = threading.Condition()
        self._version = 0
        self._state: RunState = "queued"
        self._message = ""
        self._started = now_ms()
        self._finished: int | None = None
        self._last_progress = self._started
        self._attempts: dict[str, list[Attempt]] = {t: [] for t in self.targets}
        self._outcomes: dict[str, TargetOutcome] = {}
        self._flaky: dict[str, tuple[str, ...]] = {}
        self._fraction: dict[str, float] = {}
        #: Processes running each target now (shared pool files are in several at once).
        self._live: dict[str, int] = {}
        self._weights: dict[str, float] = {t.target_id: max(t.estimated_cost, 0.01) for t in targets}
        self._artifacts: list[RunArtifact] = []
        self._report: FailureReport | None = None
        self._report_delivered = False
        self._coverage: RunCoverage | None = None

    # -- writers (executor) -------------------------------------------------------------------------
    def _touch(self) -> None:
        self._version += 1
        self._last_progress = now_ms()
        self._cond.notify_all()

    def set_running(self, message: str = "") -> None:
        with self._cond:
            self._state, self._message = "running", message
            self._touch()

    def note(self, message: str) -> None:
        with self._cond:
            self._message = message
            self._touch()

    def progress(self, fractions: dict[str, float]) -> None:
        with self._cond:
            changed = False
            for target_id, fraction in fractions.items():
                value = min(max(fraction, 0.0), 1.0)
                if target_id in self._weights and value > self._fraction.get(target_id, 0.0):
                    self._fraction[target_id] = value
                    changed = True
            if changed:
                self._touch()

    def enter(self, target_ids: Sequence[str]) -> None:
        """A process started on these targets: until one of their attempts is added they are ``running``."""
        with self._cond:
            for target_id in target_ids:
                self._live[target_id] = self._live.get(target_id, 0) + 1
            self._touch()

    def leave(self, target_ids: Sequence[str]) -> None:
        """The process of :meth:`enter` ended (its results added first): a target it did not settle is queued."""
        with self._cond:
            for target_id in target_ids:
                left = self._live.get(target_id, 0) - 1
                if left > 0:
                    self._live[target_id] = left
                else:
                    self._live.pop(target_id, None)
            self._touch()

    def add_attempt(self, attempt: Attempt) -> None:
        with self._cond:
            target_id = attempt.result.target_id
            self._attempts[target_id].append(attempt)
            self._fraction[target_id] = 1.0
            self._touch()

    def attempts(self, target_id: str) -> list[Attempt]:
        with self._cond:
            return list(self._attempts[target_id])

    def add_artifacts(self, artifacts: Sequence[RunArtifact]) -> None:
        with self._cond:
            self._artifacts.extend(artifacts)

    def set_coverage(self, coverage: RunCoverage) -> None:
        with self._cond:
            self._coverage = coverage
            self._touch()

    def finish(self, state: RunState, outcomes: dict[str, TargetOutcome], flaky: dict[str, tuple[str, ...]],
               message: str = "") -> None:
        if state == "passed" and self._inconclusive:
            state = "failed"
        with self._cond:
            self._outcomes = dict(outcomes)
            self._flaky = dict(flaky)
            self._state = state
            self._message = "; ".join(m for m in (message or self._why_empty, self._selection_note) if m)
            self._finished = now_ms()
            self._report = self._failure_report() if state in ("failed", "timed_out") else None
            self._touch()

    # -- readers (tools) ----------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        with self._cond:
            return self._state in TERMINAL_STATES

    @property
    def version(self) -> int:
        with self._cond:
            return self._version

    def wait(self, seen_version: int, timeout: float) -> int:
        """Block until the record changes after ``seen_version``, it finishes, or ``timeout`` passes."""
        with self._cond:
            self._cond.wait_for(lambda: self._version != seen_version or self._state in TERMINAL_STATES,
                                timeout=max(timeout, 0.0))
            return self._version

    def take_failure_report(self) -> FailureReport | None:
        """The run's failure report, once: the call that first observes a failed finish reports it."""
        with self._cond:
            if self._report is None or self._report_delivered:
                return None
            self._report_delivered = True
            return self._report

    def snapshot(self) -> RunSnapshot:
        with self._cond:
            records = []
            counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0, "xfail": 0, "xpass": 0}
            for target_id in sorted(self.targets):
                attempts = tuple(self._attempts[target_id])
                outcome = self._outcomes.get(target_id) or (attempts[-1].result.outcome if attempts
                                                             else self._unsettled(target_id))
                records.append(TargetRecord(self.targets[target_id], outcome, attempts,
                                            self._flaky.get(target_id, ())))
                if attempts:
                    final = attempts[-1].result
                    for case in final.cases:
                        counts[case.outcome] += 1
                    counts["passed"] += final.unlisted_passed
                    if outcome in ("error", "timeout") and not any(c.failing for c in final.cases):
                        # A collection error or a hang has no failing case to count; the run's counts
                        # must still say something went wrong (an agent reads counts first).
                        counts["error"] += 1
            return RunSnapshot(
                run_id=self.run_id, state=self._state, progress_percentage=self._percentage(),
                last_progress_at=self._last_progress, started_at=self._started, finished_at=self._finished,
                workers=self.workers, targets=tuple(records), counts=Counts(**counts), fail_fast=self.fail_fast,
                timeout_sec=self.timeout_sec, message=self._message,
                fingerprint=self._report.fingerprint if self._report else None, artifacts=tuple(self._artifacts),
                coverage=self._coverage)

    def _unsettled(self, target_id: str) -> TargetOutcome:
        """A target without an attempt: ``not_run`` once the run ended, else waiting for a process or in one
        (while running, "not_run" read as "will not run")."""
        if self._state in TERMINAL_STATES:
            return "not_run"
        return "running" if self._live.get(target_id) else "queued"

    def _percentage(self) -> float:
        if self._state in TERMINAL_STATES:
            return 100.0
        total = sum(self._weights.values())
        done = sum(w * self._fraction.get(t, 0.0) for t, w in self._weights.items())
        return round(min(99.0, 100.0 * done / total), 1) if total else 0.0

    def _failure_report(self) -> FailureReport:
        if self._inconclusive:
            # Nothing failed and nothing ran: the fingerprint is that of the reason (the changed paths it names).
            return FailureReport(fingerprint=failure_fingerprint((), "not_run", self._why_empty, None),
                                 failing_tests=(), failure_class="not_run", exit_code=None)
        failing: list[str] = []
        stacks: list[str] = []
        exception = ""
        exit_code: int | None = None
        classes: set[str] = set()
        for target_id in sorted(self.targets):
            outcome = self._outcomes.get(target_id)
            attempts = self._attempts[target_id]
            if outcome not in FAILING_OUTCOMES:
                continue
            classes.add(str(outcome))
            final = attempts[-1].result if attempts else None
            if exit_code is None and final is not None:
                exit_code = final.exit_code
            cases = [c for c in final.cases if c.failing] if final else []
            if not cases:
                failing.append(f"{target_id}::({outcome})")
                stacks.append(final.message if final else "")
                exception = exception or str(outcome)
            for case in cases:
                failing.append(case.case_id)
                if len(stacks) < _STACK_CASES:
                    stacks.append(f"{case.exception_type}: {case.message}\n{case.traceback}")
                exception = exception or case.exception_type or case.outcome
        failure_class = "timeout" if "timeout" in classes else "error" if classes == {"error"} else "failed"
        fingerprint = failure_fingerprint(failing, exception, "\n".join(stacks), exit_code)
        return FailureReport(fingerprint=fingerprint, failing_tests=tuple(sorted(failing)),
                             failure_class=failure_class, exit_code=exit_code)
