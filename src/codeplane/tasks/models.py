"""The task model (§12.2): states, limits, counters and the persisted task record."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

#: From this share of any limit on, every answer's ``meta`` shows the budget line (issue 16: only then).
NEAR_LIMIT_SHARE = 0.8


class TaskState(StrEnum):
    """Lifecycle states (§12.2). Every ``CLOSED_*`` state is final: tasks are never reopened."""

    OPEN = "OPEN"
    CLOSED_SUCCESS = "CLOSED_SUCCESS"
    CLOSED_FAILED = "CLOSED_FAILED"
    CLOSED_INTERRUPTED = "CLOSED_INTERRUPTED"

    @property
    def closed(self) -> bool:
        return self is not TaskState.OPEN


class BudgetType(StrEnum):
    """Which limit refused a call; the ``budget_type`` of 6001/6004 details and ``limit_triggered``."""

    MUTATIONS = "mutations"
    TEST_RUNS = "test_runs"
    DURATION = "duration"
    READ_BYTES = "read_bytes"
    READ_CALLS = "read_calls"


@dataclass(frozen=True)
class TaskLimits:
    """Hard per-task limits (§12.2). Defaults come from ``tasks.*`` in the config."""

    max_mutations: int
    max_test_runs: int
    max_duration_sec: int

    def as_dict(self) -> dict[str, int]:
        return {"max_mutations": self.max_mutations, "max_test_runs": self.max_test_runs,
                "max_duration_sec": self.max_duration_sec}


@dataclass(frozen=True)
class ReadLimits:
    """Per-session read budget (§23.4): bytes served and calls made by read tools."""

    max_bytes: int
    max_calls: int


@dataclass(frozen=True)
class RepoSnapshot:
    """The repository when a task opened (§12.2 ``repo_snapshot``)."""

    git_head: str | None
    index_version: int | None = None


@dataclass(frozen=True)
class TaskRecord:
    """The persisted task state of §12.2, plus who opened it and why it closed.

    Immutable: every change produces a new record (``with_changes``), which the ledger persists.
    """

    task_id: str
    session_id: str
    opened_at_ms: int
    state: TaskState
    limits: TaskLimits
    repo_snapshot: RepoSnapshot
    implicit: bool
    closed_at_ms: int | None = None
    close_reason: str | None = None
    #: The limit that closed the task (``CLOSED_FAILED`` by a budget), so later refusals can name it.
    limit_triggered: BudgetType | None = None
    mutation_count: int = 0
    test_run_count: int = 0
    last_mutation_fingerprint: str | None = None
    last_failure_fingerprint: str | None = None
    #: A mutation happened since the last failing test run (needed for the non-progress flag).
    mutated_since_failure: bool = False

    def with_changes(self, **changes: Any) -> TaskRecord:
        return replace(self, **changes)

    @property
    def deadline_ms(self) -> int:
        return self.opened_at_ms + self.limits.max_duration_sec * 1000

    def budget_line(self) -> str:
        """Human-readable budget use for ``meta.budget``, e.g. ``mutations 3/20, test_runs 0/50``."""
        return (f"mutations {self.mutation_count}/{self.limits.max_mutations}, "
                f"test_runs {self.test_run_count}/{self.limits.max_test_runs}")

    def near_limit(self, now_ms: int, share: float = NEAR_LIMIT_SHARE) -> bool:
        """Whether any limit is used up to ``share`` (the point from which every answer shows the budget)."""
        elapsed = max(0, now_ms - self.opened_at_ms) / 1000
        return (self.mutation_count >= share * self.limits.max_mutations
                or self.test_run_count >= share * self.limits.max_test_runs
                or elapsed >= share * self.limits.max_duration_sec)

    def to_public(self, now_ms: int) -> dict[str, Any]:
        """The §12.2 shape, as ``get_task`` and ``cpl status`` show it."""
        remaining = max(0, self.deadline_ms - now_ms) // 1000 if self.state is TaskState.OPEN else 0
        return {
            "task_id": self.task_id,
            "session_id": self.session_id,
            "state": self.state.value,
            "implicit": self.implicit,
            "opened_at_ms": self.opened_at_ms,
            "closed_at_ms": self.closed_at_ms,
            "close_reason": self.close_reason,
            "limit_triggered": self.limit_triggered.value if self.limit_triggered else None,
            "repo_snapshot": {"git_head": self.repo_snapshot.git_head,
                              "index_version": self.repo_snapshot.index_version},
            "limits": self.limits.as_dict(),
            "counters": {"mutation_count": self.mutation_count, "test_run_count": self.test_run_count},
            "remaining_duration_sec": remaining,
            "last_mutation_fingerprint": self.last_mutation_fingerprint,
            "last_failure_fingerprint": self.last_failure_fingerprint,
        }


@dataclass(frozen=True)
class ReadUse:
    """A session's read budget use since it started or since its last ``reset_budget``."""

    bytes: int = 0
    calls: int = 0
    resets: int = 0

    def near_limit(self, limits: ReadLimits, share: float = NEAR_LIMIT_SHARE) -> bool:
        return self.calls >= share * limits.max_calls or self.bytes >= share * limits.max_bytes

    def line(self, limits: ReadLimits) -> str:
        return f"read_calls {self.calls}/{limits.max_calls}, read_bytes {self.bytes}/{limits.max_bytes}"


@dataclass(frozen=True)
class OperationRecord:
    """One ledger row (§12.5 v1 schema, all columns, plus session/kind/detail and artifact refs).

    Never carries prompts or file contents: paths, hashes, counts, fingerprints and short
    content-free descriptions only. ``prev_hash``/``row_hash`` are filled in by the ledger.
    """

    task_id: str | None
    timestamp_ms: int
    op_type: str
    success: bool
    duration_ms: int = 0
    session_id: str | None = None
    kind: str | None = None
    request_id: str | None = None
    error_code: int | None = None
    repo_before_hash: str | None = None
    repo_after_hash: str | None = None
    changed_paths: tuple[str, ...] | None = None
    diff_stats: tuple[int, int, int] | None = None  # files_changed, insertions, deletions
    short_diff: str | None = None
    mutation_fingerprint: str | None = None
    failure_fingerprint: str | None = None
    failure_class: str | None = None
    failing_tests: tuple[str, ...] | None = None
    limit_triggered: str | None = None
    no_op: bool | None = None
    non_progress: bool | None = None
    result_bytes: int | None = None
    #: Content-free facts about the call (``action=push``, a close reason, a retention checkpoint).
    detail: dict[str, Any] = field(default_factory=dict)
    artifact_id: str | None = None
    artifact_sha256: str | None = None
