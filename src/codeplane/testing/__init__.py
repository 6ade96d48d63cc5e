"""The tests subsystem (spec §11): runner discovery, cost-balanced parallel runs, structured results,
impact-aware selection. See ARCHITECTURE.md. Imports nothing from mutation, git or tasks."""

from codeplane.testing.discovery import Discovery, MissingRunner, discover
from codeplane.testing.impact import ImpactIndex, ImpactResult
from codeplane.testing.model import CaseResult, RunSnapshot, Target, TargetRecord, TargetResult
from codeplane.testing.run_store import RunHandle, StoredRun
from codeplane.testing.runs import RunRecord
from codeplane.testing.service import DiscoveryView, TestingService

__all__ = [
    "CaseResult", "Discovery", "DiscoveryView", "ImpactIndex", "ImpactResult", "MissingRunner", "RunHandle",
    "RunRecord", "RunSnapshot", "StoredRun", "Target", "TargetRecord", "TargetResult", "TestingService", "discover",
]
