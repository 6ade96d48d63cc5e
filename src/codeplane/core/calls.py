"""The seam between the tool dispatcher (``server``) and whoever accounts for calls (``tasks``).

The server calls each observer before and after every tool call; the tasks subsystem implements it
(budgets, fingerprints, ledger). Defined here, below both, so neither imports the other. Results that
change state or run tests describe themselves through :class:`MutationReport` / :class:`FailureReport`
so the observer never needs the producing subsystem's types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

CallKind = Literal["read", "mutation", "test", "meta"]


@dataclass(frozen=True)
class CallInfo:
    tool: str
    kind: CallKind
    session_id: str
    request_id: str
    started_ms: int
    #: Short, content-free description of the call for the ledger (e.g. ``action=push``). No file contents.
    op_detail: str = ""


@dataclass(frozen=True)
class MutationReport:
    """What a state-changing call did (§12.3 mutation fingerprint input, §12.5 ledger columns)."""

    #: (path, new sha256 or "" for deleted), sorted by path.
    changed_paths: tuple[tuple[str, str], ...]
    insertions: int = 0
    deletions: int = 0
    #: Symbols whose definitions the change touched (``path:kind:name``), sorted.
    symbols_changed: tuple[str, ...] = ()
    #: A short unified diff excerpt (bounded) for the ledger; may be empty.
    short_diff: str = ""
    repo_before: str = ""
    repo_after: str = ""
    #: ``repo_before``/``repo_after`` name HEAD only (git operations): equal, they do not show that the work tree
    #: and index are as before (a merge that stopped on conflicts, a hard reset to HEAD, a stash pop).
    head_only: bool = False
    #: (ref, its target now; "" deleted) for each ref a git operation moved, created or deleted, and ``HEAD`` with
    #: the branch it names when it switched: a change too, though no file changed (a branch created).
    refs_moved: tuple[tuple[str, str], ...] = ()
    #: The paths among ``changed_paths`` that the call created (the ledger's summary marks them ``+``).
    created_paths: tuple[str, ...] = ()
    #: Files changed in all, when ``changed_paths`` lists only the first ones (a git write lists 100).
    files_changed: int | None = None
    #: Changed files whose lines could not be counted: ``insertions``/``deletions`` cover the others.
    uncounted: int = 0


@dataclass(frozen=True)
class FailureReport:
    """A failing test run (§12.3 failure fingerprint input)."""

    fingerprint: str
    failing_tests: tuple[str, ...]
    failure_class: str
    exit_code: int | None


@runtime_checkable
class ReportsMutation(Protocol):
    def mutation_report(self) -> MutationReport | None: ...


@runtime_checkable
class ReportsTestRun(Protocol):
    def test_run_report(self) -> FailureReport | None:
        """``None`` when the run passed; a counted test run either way."""


@dataclass(frozen=True)
class CallOutcome:
    info: CallInfo
    duration_ms: float
    ok: bool
    error_code: int | None = None
    error_name: str | None = None
    #: The handler's result model (``None`` on failure).
    result: Any = None
    #: Bytes of the serialised result, for read budgets.
    result_bytes: int = 0
    mutation: MutationReport | None = None
    failure: FailureReport | None = None


@dataclass(frozen=True)
class CallNotes:
    """What an observer adds to the answer's ``meta`` (it reports; it never decides, §12.3)."""

    no_op: bool | None = None
    non_progress: bool | None = None
    mutation_fingerprint: str | None = None
    failure_fingerprint: str | None = None
    warnings: tuple[str, ...] = ()
    #: The call's ledger row (``None``: not recorded), so its log line and metrics name the row ``cpl status`` shows.
    op_id: int | None = None
    #: The budget that refused the call (the ledger's ``limit_triggered``), if one did.
    limit_triggered: str | None = None


@dataclass(frozen=True)
class TaskMeta:
    task_id: str | None
    task_state: str | None
    #: Human-readable budget use, e.g. ``mutations 3/20, test_runs 0/50``.
    budget: str | None = None
    #: A limit is near or hit, so the answer shows ``budget`` (it is left out otherwise).
    budget_near: bool = False


class CallObserver(Protocol):
    def before_call(self, info: CallInfo) -> None:
        """Raise a ``CodePlaneError`` to refuse the call (e.g. budget exhausted)."""

    def after_call(self, outcome: CallOutcome) -> CallNotes | None:
        """Record the call (every call, refused ones too). Must not raise for the call's own failure."""

    def task_meta(self, session_id: str) -> TaskMeta | None:
        """Task fields for the envelope of the session's answer."""
