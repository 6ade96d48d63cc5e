"""Building and finishing runs of a real :class:`TestingService` in tests (no server)."""

from __future__ import annotations

import time
from pathlib import Path

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import TestsConfig
from codeplane.core.layout import RepoLayout
from codeplane.testing import RunRecord, RunSnapshot, TestingService


def service_for(repo: Path, **config: object) -> TestingService:
    """A service for ``repo`` with ``config`` as ``tests.*`` settings (close it: the ``services`` fixture)."""
    layout = RepoLayout(repo)
    return TestingService(repo, TestsConfig.model_validate(config), layout, ArtifactStore(layout.artifacts_dir, 48))


def finish(record: RunRecord, timeout: float = 120) -> RunSnapshot:
    """The run's snapshot once it has finished."""
    deadline = time.monotonic() + timeout
    while not record.finished:
        assert time.monotonic() < deadline, "run did not finish"
        record.wait(record.version, 0.5)
    return record.snapshot()
