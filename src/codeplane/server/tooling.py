"""How a tool is declared: a typed spec (input model, output model, annotations, guidance) and a handler.

Tool modules under ``server/tools/`` build :class:`ToolSpec` values and nothing else; the dispatcher
(``dispatch.py``) owns validation, the envelope, error mapping and the call-observer hook.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from codeplane.server.services import Services

#: What a call does to state, for budgets and the ledger (§12).
ToolKind = Literal["read", "mutation", "test", "meta"]


class ToolParams(BaseModel):
    """Base for every tool's input model. Unknown arguments are errors, not silently dropped."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolResult(BaseModel):
    """Base for every tool's output model."""

    model_config = ConfigDict(frozen=True)


ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]


async def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


@dataclass(frozen=True)
class ToolContext:
    """What a handler may use: the services, who is calling, and a progress reporter."""

    services: Services
    registry: ToolRegistry
    tool: str
    session_id: str
    request_id: str
    progress: ProgressFn = _no_progress


@dataclass(frozen=True)
class ToolExample:
    description: str
    params: dict[str, Any]


Handler = Callable[[ToolContext, Any], Awaitable[ToolResult]]


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the agent sees it, plus the handler that serves it.

    ``handler`` is ``async def (ctx, params) -> ToolResult``; blocking work inside it belongs in
    ``anyio.to_thread.run_sync`` so one slow call does not stall the event loop.
    """

    name: str
    category: str
    summary: str
    params: type[ToolParams]
    result: type[ToolResult]
    handler: Handler
    kind: ToolKind = "read"
    when_to_use: tuple[str, ...] = ()
    when_not_to_use: tuple[str, ...] = ()
    examples: tuple[ToolExample, ...] = ()
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    title: str | None = None
    #: For action-style tools whose kind depends on the arguments (e.g. ``git_branch`` list vs delete).
    kind_for: Callable[[Any], ToolKind] | None = None
    #: Content-free summary of the arguments for the ledger (e.g. ``action=delete``); never file contents.
    detail_for: Callable[[Any], str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def description(self) -> str:
        parts = [self.summary.strip()]
        if self.when_to_use:
            parts.append("Use when: " + "; ".join(self.when_to_use) + ".")
        if self.when_not_to_use:
            parts.append("Do not use when: " + "; ".join(self.when_not_to_use) + ".")
        return "\n\n".join(parts)


class ToolRegistry:
    """All tools, in a deterministic order (category, then name)."""

    def __init__(self, specs: list[ToolSpec]) -> None:
        names = [s.name for s in specs]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate tool names: {duplicates}")
        self._specs = {s.name: s for s in sorted(specs, key=lambda s: (s.category, s.name))}

    def __iter__(self) -> Any:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def names(self) -> list[str]:
        return list(self._specs)
