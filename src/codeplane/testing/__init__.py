"""The tests subsystem (spec §11): runner discovery, cost-balanced parallel runs, structured results,
impact-aware selection. See ARCHITECTURE.md. Imports nothing from mutation, git or tasks.

The names below are loaded on first use (PEP 562): the server's tool modules import result models from the
submodules at boot, and running this ``__init__`` eagerly would import discovery, every runner and the service too
(~30 ms of CPU before ``/ready``), which the server builds after it (``server/services.py``'s ``Deferred``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codeplane.testing.discovery import Discovery, MissingRunner, discover
    from codeplane.testing.impact import ImpactIndex, ImpactResult
    from codeplane.testing.model import CaseResult, RunSnapshot, Target, TargetRecord, TargetResult
    from codeplane.testing.run_store import RunHandle, StoredRun
    from codeplane.testing.runs import RunRecord
    from codeplane.testing.service import DiscoveryView, TestingService

_HOMES = {
    "Discovery": "discovery", "MissingRunner": "discovery", "discover": "discovery",
    "ImpactIndex": "impact", "ImpactResult": "impact",
    "CaseResult": "model", "RunSnapshot": "model", "Target": "model", "TargetRecord": "model", "TargetResult": "model",
    "RunHandle": "run_store", "StoredRun": "run_store", "RunRecord": "runs",
    "DiscoveryView": "service", "TestingService": "service",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:  # a submodule (``from codeplane.testing import impact``) is then imported as usual
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CaseResult", "Discovery", "DiscoveryView", "ImpactIndex", "ImpactResult", "MissingRunner", "RunHandle",
    "RunRecord", "RunSnapshot", "StoredRun", "Target", "TargetRecord", "TargetResult", "TestingService", "discover",
]
