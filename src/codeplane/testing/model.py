"""The test-run record (D10): run → targets → attempts → cases, plus artifact references.

Everything here is a frozen value. A run in flight is assembled from these by ``runs.py``; parsers and
runners produce :class:`CaseResult` lists; tools render snapshots. Names avoid a ``Test`` prefix so
pytest never mistakes them for test classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: ``xpass``: a non-strict xfail that passed (pytest's XPASS; a strict one is ``failed``, as pytest says).
CaseOutcome = Literal["passed", "failed", "error", "skipped", "xfail", "xpass"]
#: ``flaky``: failed, then passed on the re-run. ``not_run``: never started (fail-fast, global timeout).
#: ``queued``/``running``: only while the run is in flight, a target without a result yet, waiting for a process
#: or in one (a finished run says ``not_run`` or ``cancelled`` of those it never ran).
TargetOutcome = Literal["passed", "failed", "error", "timeout", "skipped", "flaky", "cancelled", "not_run", "queued",
                        "running"]
#: Target outcomes of a run in flight: the target has no result yet.
IN_FLIGHT_OUTCOMES: frozenset[str] = frozenset({"queued", "running"})
RunState = Literal["queued", "running", "passed", "failed", "cancelled", "timed_out"]
TERMINAL_STATES: frozenset[str] = frozenset({"passed", "failed", "cancelled", "timed_out"})
#: Target outcomes that make a run fail.
FAILING_OUTCOMES: frozenset[str] = frozenset({"failed", "error", "timeout"})

#: Bounds on what one case may carry inline; full output lives in artifacts.
MESSAGE_CHARS = 500
TRACEBACK_CHARS = 2_000


def clip_head(text: str, limit: int) -> str:
    """The first ``limit`` characters (messages: the start says what went wrong)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clip_tail(text: str, limit: int) -> str:
    """The last ``limit`` characters (tracebacks: the end is where it failed)."""
    return text if len(text) <= limit else "…" + text[-(limit - 1):]


@dataclass(frozen=True)
class Target:
    """The smallest unit CodePlane schedules (§11.2/§11.3): a test file, a Go package, a Rust test binary.

    ``target_id`` is repo-relative and stable across runs; ``selector`` is what the runner is given
    (relative to ``cwd``); ``cmd`` runs this target alone and is shown to the agent.
    """

    target_id: str
    runner: str
    lang: str
    cwd: str
    selector: str
    cmd: tuple[str, ...]
    estimated_cost: float = 1.0
    kind: str = "unit"
    #: Repo-relative source file of the target (for impact selection); "" for package-level targets.
    path: str = ""
    #: Only these cases of the target (pytest node id parts after the file: ``test_x``, ``TestC::test_x``);
    #: empty: all of them. Set by impact selection and ``file::case`` target ids; runners that cannot select
    #: cases never get any.
    cases: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaseResult:
    """One test case, parsed from a machine format."""

    case_id: str
    target_id: str
    outcome: CaseOutcome
    duration_s: float = 0.0
    message: str = ""
    exception_type: str = ""
    traceback: str = ""

    @property
    def failing(self) -> bool:
        return self.outcome in ("failed", "error")


@dataclass(frozen=True)
class RunArtifact:
    """A stored log or report of one batch process (content-addressed under ``.codeplane/artifacts/``)."""

    #: ``stdout``, ``stderr``, ``events`` (pytest plugin JSONL), ``junit``, ``json``, ``coverage``, ...
    kind: str
    artifact_id: str
    #: Repo-relative path of the stored file.
    path: str
    sha256: str
    bytes: int


@dataclass(frozen=True)
class TargetResult:
    """What one attempt learned about one target (before retries are merged)."""

    target_id: str
    outcome: TargetOutcome
    cases: tuple[CaseResult, ...] = ()
    duration_s: float = 0.0
    exit_code: int | None = None
    #: Why the target errored or timed out when no case says so (collection error, runner crash).
    message: str = ""
    #: Passing cases a format counts but does not list (ExUnit prints only failures).
    unlisted_passed: int = 0
    #: Cases this attempt actually ran, when fewer than it lists: pytest's in-process re-run runs only the
    #: failed cases again, and the others are carried over from the first attempt (None: all it lists).
    cases_run: int | None = None
    #: A re-run cannot change it (a case id the file does not hold, a syntax error in it): not retried.
    settled: bool = False


@dataclass(frozen=True)
class Attempt:
    """One execution of one target. Attempts are never overwritten; a re-run appends one."""

    number: int
    batch_id: str
    result: TargetResult
    artifacts: tuple[RunArtifact, ...] = ()


@dataclass(frozen=True)
class TargetRecord:
    target: Target
    outcome: TargetOutcome
    attempts: tuple[Attempt, ...] = ()
    #: Cases that failed in an earlier attempt and passed in the last one.
    flaky_cases: tuple[str, ...] = ()

    @property
    def final(self) -> TargetResult | None:
        return self.attempts[-1].result if self.attempts else None


@dataclass(frozen=True)
class Counts:
    passed: int = 0
    failed: int = 0
    error: int = 0
    skipped: int = 0
    xfail: int = 0
    xpass: int = 0

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.error + self.skipped + self.xfail + self.xpass


@dataclass(frozen=True)
class ChangedUnitCoverage:
    """How much of one changed definition a coverage run executed (§11.9.5, scoped to the change)."""

    path: str
    #: The definition's qualified name.
    name: str
    #: Some test of the run, or an import it made, called it.
    ran: bool
    #: Changed lines of its body that hold code, and how many of them ran.
    lines: int = 0
    lines_run: int = 0
    #: Changed code lines that did not run (the first 20).
    missed: tuple[int, ...] = ()


@dataclass(frozen=True)
class RunCoverage:
    """What ``run_test_targets(coverage=true)`` recorded, and its coverage of the changed code."""

    #: Tests whose evidence was stored (and of them, those it cannot vouch for: failed, or ran code in a
    #: process it could not see).
    tests: int
    untrusted: int = 0
    #: Repository files the test processes loaded; those whose evidence could not be mapped (``path: why``,
    #: the first 20) count in ``unmapped``.
    files: int = 0
    unmapped: tuple[str, ...] = ()
    unmapped_total: int = 0
    #: Changed definitions (the first 50, not run first) and totals.
    changed: tuple[ChangedUnitCoverage, ...] = ()
    changed_total: int = 0
    changed_run: int = 0
    lines: int = 0
    lines_run: int = 0
    #: Changed lines that run at import (module level, class bodies, decorators, signatures): not measured.
    import_time_lines: int = 0
    note: str = ""


@dataclass(frozen=True)
class RunSnapshot:
    """A consistent view of a run at one instant (what ``get_test_run`` renders)."""

    run_id: str
    state: RunState
    progress_percentage: float
    last_progress_at: int
    started_at: int
    finished_at: int | None
    workers: int
    targets: tuple[TargetRecord, ...]
    counts: Counts
    fail_fast: bool
    timeout_sec: float
    message: str = ""
    fingerprint: str | None = None
    artifacts: tuple[RunArtifact, ...] = field(default=())
    #: Only for ``coverage=true`` runs, once finished.
    coverage: RunCoverage | None = None

    @property
    def finished(self) -> bool:
        return self.state in TERMINAL_STATES
