"""The composition root: every subsystem service a tool handler may reach, built once per server.

Subsystems add a typed attribute here and a :class:`Lifecycle` entry in ``build_services``; tools reach
them through ``ctx.services``. Nothing below ``server`` imports this module.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from codeplane.core.calls import CallObserver
from codeplane.core.clock import now_ms
from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout


@dataclass
class Readiness:
    """Whether the server can answer index-backed queries; ``/ready`` reports it."""

    ready: bool = False
    reason: str = "starting"


@dataclass(frozen=True)
class Lifecycle:
    """A named start/stop pair run by the app lifespan, in order (stop in reverse)."""

    name: str
    start: Callable[[], Awaitable[None]]
    stop: Callable[[], Awaitable[None]]


@dataclass
class Services:
    root: Path
    config: CodePlaneConfig
    repo_id: str
    layout: RepoLayout = field(init=False)
    pid: int = field(default_factory=os.getpid)
    started_at_ms: int = field(default_factory=now_ms)
    readiness: Readiness = field(default_factory=Readiness)
    observers: list[CallObserver] = field(default_factory=list)
    lifecycles: list[Lifecycle] = field(default_factory=list)
    #: Named sections of ``/status`` and ``describe`` (``index``, ``tasks``, ...), computed on demand.
    status_sections: dict[str, Callable[[], dict[str, object]]] = field(default_factory=dict)
    last_error: str | None = None

    def __post_init__(self) -> None:
        self.layout = RepoLayout(self.root)

    def status(self) -> dict[str, object]:
        return {name: section() for name, section in sorted(self.status_sections.items())}


def build_services(root: Path, config: CodePlaneConfig, repo_id: str) -> Services:
    services = Services(root=root, config=config, repo_id=repo_id)
    services.readiness = Readiness(ready=True, reason="no index configured")
    services.status_sections["index"] = lambda: {
        "state": "not_built", "placeholder": True, "note": "the index subsystem is not wired in yet"}
    return services
