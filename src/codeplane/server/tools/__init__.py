"""Thin MCP adapters: each module returns ``ToolSpec`` values that parse input, call one service and
return a typed result. No business rules live here."""

from __future__ import annotations

from codeplane.server.services import Services
from codeplane.server.tooling import ToolSpec
from codeplane.server.tools import (
    analysis,
    describe,
    files,
    git_commits,
    git_layout,
    git_read,
    git_refs,
    git_remote,
    lint,
    map_repo,
    refactor,
    search,
    search_symbols,
    tasks,
    tests,
    write,
)


def all_tools(services: Services) -> list[ToolSpec]:
    """Every tool this server exposes. Subsystems append their module's ``tools(services)`` here."""
    specs: list[ToolSpec] = []
    specs += describe.tools(services)
    specs += search.tools(services)
    search_symbols.register()
    specs += map_repo.tools(services)
    specs += files.tools(services)
    specs += tasks.tools(services)
    specs += write.tools(services)
    specs += tests.tools(services)
    specs += lint.tools(services)
    specs += analysis.tools(services)
    if services.config.refactor.enabled:
        specs += refactor.tools(services)
    specs += [*git_read.tools(services), *git_commits.tools(services), *git_refs.tools(services),
              *git_remote.tools(services), *git_layout.tools(services)]
    return specs


def switched_off(services: Services) -> dict[str, str]:
    """Tools this configuration turns off, each with how to turn it back on (its call says so, not just 1004)."""
    if services.config.refactor.enabled:
        return {}
    how = "refactors are off (refactor.enabled=false, or cpl up --no-refactor); set refactor.enabled=true to use it"
    return {spec.name: how for spec in refactor.tools(services)}
