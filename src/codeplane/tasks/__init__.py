"""Sessions, tasks, budgets, convergence signals and the append-only ledger (spec §12, D10-D12).

The server registers a :class:`TaskTracker` as a call observer; it refuses calls over budget, reports
no-op mutations and non-progress failures, and writes one hash-chained ledger row per tool call.
Nothing here imports mutation, git or testing: they describe their effects through ``core.calls``.
"""

from codeplane.tasks.chain import ChainReport
from codeplane.tasks.ledger import Ledger
from codeplane.tasks.models import (
    BudgetType,
    OperationRecord,
    ReadLimits,
    ReadUse,
    RepoSnapshot,
    TaskLimits,
    TaskRecord,
    TaskState,
)
from codeplane.tasks.settings import TrackerSettings
from codeplane.tasks.tracker import TaskTracker, TaskView

__all__ = [
    "BudgetType",
    "ChainReport",
    "Ledger",
    "OperationRecord",
    "ReadLimits",
    "ReadUse",
    "RepoSnapshot",
    "TaskLimits",
    "TaskRecord",
    "TaskState",
    "TaskTracker",
    "TaskView",
    "TrackerSettings",
]
