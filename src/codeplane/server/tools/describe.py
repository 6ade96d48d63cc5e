"""``describe`` (§23.7): repository summary or one tool's documentation."""

from __future__ import annotations

from typing import Any, Literal

import anyio

from codeplane import API_VERSION
from codeplane.core.errors import CodePlaneError, ErrorCode, catalog
from codeplane.repo.workspace import head_info
from codeplane.server.schema import input_schema
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolParams, ToolResult, ToolSpec


class DescribeParams(ToolParams):
    action: Literal["repo", "tool", "errors"] = "repo"
    name: str | None = None


class ToolExampleModel(ToolResult):
    description: str
    params: dict[str, Any]


class DescribeResult(ToolResult):
    action: str
    # action=repo
    repo_root: str | None = None
    repo_id: str | None = None
    api_version: str | None = None
    language: str | None = None
    branch: str | None = None
    head: str | None = None
    detached: bool | None = None
    index_status: str | None = None
    tool_count: int | None = None
    #: tools.profile: which tools this server serves (full, core, read_only).
    profile: str | None = None
    tools: list[str] = []
    status: dict[str, Any] = {}
    # action=tool
    name: str | None = None
    description: str | None = None
    category: str | None = None
    when_to_use: list[str] = []
    when_not_to_use: list[str] = []
    examples: list[ToolExampleModel] = []
    annotations: dict[str, bool] = {}
    input_schema: dict[str, Any] = {}
    # action=errors
    errors: list[dict[str, Any]] = []


async def _describe(ctx: ToolContext, params: DescribeParams) -> DescribeResult:
    services = ctx.services
    if params.action == "errors":
        return DescribeResult(action="errors", errors=catalog())
    if params.action == "tool":
        if not params.name:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "action='tool' needs name",
                                 details={"field": "name", "tools": ctx.registry.names()})
        spec = ctx.registry.get(params.name)
        if spec is None:
            raise CodePlaneError(ErrorCode.UNKNOWN_TOOL, f"no tool named {params.name!r}",
                                 details={"tool": params.name, "available": ctx.registry.names()})
        return DescribeResult(
            action="tool", name=spec.name, description=spec.summary, category=spec.category,
            when_to_use=list(spec.when_to_use), when_not_to_use=list(spec.when_not_to_use),
            examples=[ToolExampleModel(description=e.description, params=e.params) for e in spec.examples],
            annotations={"readOnlyHint": spec.read_only, "destructiveHint": spec.destructive,
                         "idempotentHint": spec.idempotent, "openWorldHint": False},
            input_schema=input_schema(spec, documented=True),
        )
    head = await anyio.to_thread.run_sync(head_info, services.root)
    status = await anyio.to_thread.run_sync(services.status)  # full-table counts: off the event loop
    index = status.get("index")
    index_state = index.get("state") if isinstance(index, dict) else None
    language = index.get("primary_language") if isinstance(index, dict) else None
    return DescribeResult(
        action="repo", repo_root=str(services.root), repo_id=services.repo_id, api_version=API_VERSION,
        language=str(language) if language else "unknown", branch=head.branch, head=head.head,
        detached=head.detached, index_status=str(index_state or "unknown"),
        tool_count=len(ctx.registry), profile=ctx.registry.profile, tools=ctx.registry.names(), status=status,
    )


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            name="describe",
            category="introspection",
            summary="Repository summary (root, branch, HEAD, index state, tools) or one tool's documentation.",
            params=DescribeParams,
            result=DescribeResult,
            handler=_describe,
            kind="meta",
            when_to_use=("starting work on a repository", "checking index state or epoch",
                         "learning how a tool is called (action='tool')",
                         "looking up an error code (action='errors')"),
            when_not_to_use=("searching code (use search)", "reading files (use read_source)"),
            examples=(ToolExample("repo summary", {}),
                      ToolExample("document one tool", {"action": "tool", "name": "describe"})),
        )
    ]
