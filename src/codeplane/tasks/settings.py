"""The task tracker's settings, from the ``tasks.*`` configuration."""

from __future__ import annotations

from dataclasses import dataclass

from codeplane.core.config import TasksConfig
from codeplane.tasks.models import ReadLimits, TaskLimits


@dataclass(frozen=True)
class TrackerSettings:
    default_limits: TaskLimits
    read_limits: ReadLimits
    idle_timeout_sec: int
    retention_days: int
    retention_tasks: int
    #: Write one ledger row per call (off only for overhead benchmarks and debugging).
    record_operations: bool = True

    @classmethod
    def from_config(cls, config: TasksConfig) -> TrackerSettings:
        return cls(
            default_limits=TaskLimits(config.max_mutations, config.max_test_runs, config.max_duration_sec),
            read_limits=ReadLimits(config.read_budget_bytes, config.read_budget_calls),
            idle_timeout_sec=config.session_idle_timeout_sec,
            retention_days=config.ledger_retention_days,
            retention_tasks=config.ledger_retention_tasks,
            record_operations=config.ledger_enabled,
        )
