"""``describe`` (§23.7): repository summary or one tool's documentation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import anyio
from pydantic import Field, model_validator

from codeplane import API_VERSION
from codeplane.core.config import RefactorConfig
from codeplane.core.errors import CodePlaneError, ErrorCode, catalog
from codeplane.git.pathspecs import shown
from codeplane.repo.workspace import head_info
from codeplane.server.answers import compact_json, lean, lean_dump, pairs, shown_id
from codeplane.server.dispatch import SESSION_ARG
from codeplane.server.schema import input_schema
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolParams, ToolResult, ToolSpec


class DescribeParams(ToolParams):
    action: Literal["repo", "tool", "errors"] = Field(default="repo", description="Default: tool with name, else repo.")
    name: str | None = Field(default=None, description="tool: the tool to document.")

    @model_validator(mode="before")
    @classmethod
    def _name_means_tool(cls, data: Any) -> Any:
        # ``describe(name="search")`` asks for search's page, and only action=tool takes a name: answering the repo
        # summary instead dropped the argument without a word (QA64 F3). An explicit other action with it is 1003.
        if isinstance(data, dict) and data.get("name") is not None and "action" not in data:
            return {**data, "action": "tool"}
        return data


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
            raise ctx.registry.not_served(params.name)
        return DescribeResult(
            action="tool", name=spec.name, description=spec.summary, category=spec.category,
            # A pointer to a tool this profile withholds is one the agent cannot follow.
            when_to_use=[w for w in spec.when_to_use if not ctx.registry.withheld_named(w)],
            when_not_to_use=[w for w in spec.when_not_to_use if not ctx.registry.withheld_named(w)],
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
        # A branch name that is not UTF-8 (``git checkout -b $'br\\xff'``) as the git tools show it (it was 9001).
        language=str(language) if language else "unknown", branch=shown(head.branch) if head.branch else None,
        head=head.head,
        detached=head.detached, index_status=str(index_state or "unknown"),
        tool_count=len(ctx.registry), profile=ctx.registry.profile, tools=ctx.registry.names(), status=status,
    )


def _scalars(section: dict[str, Any], *keys: str) -> str:
    """``key=value`` of the scalars named, a zero count left out (``runs_kept=0``, ``open_plans=0``: nothing to
    see; the record has them)."""
    return pairs({k: v for k in keys if k in section and not isinstance(v := section[k], dict | list)
                  and not (type(v) is int and v == 0)})


def _index_line(index: dict[str, Any]) -> str:
    langs = index.get("languages")
    told = f"index {index.get('state')} @epoch {index.get('epoch')}: {index.get('file_count')} files"
    if isinstance(langs, dict) and langs:
        told += " (" + ", ".join(f"{k} {v}" for k, v in sorted(langs.items(), key=lambda kv: -kv[1])) + ")"
    told += (f", {index['pending_changes']} pending" if index.get("pending_changes") else "") + \
        f", watcher {index.get('watcher')}"
    extra = {k: index[k] for k in ("binary_files", "oversized_files", "symlinks") if index.get(k)}
    source = index.get("source")
    if isinstance(source, dict) and source.get("kind") not in (None, "local"):
        extra["source"] = source
    told += f"; {pairs(extra)}" if extra else ""
    if index.get("unnamed_files"):  # left out: a name a JSON answer cannot carry
        told += (f"; {index['unnamed_files']} names not valid UTF-8 left out: "
                 + ", ".join(index.get("unnamed_examples", [])))
    return told


def _task_lines(tasks: dict[str, Any]) -> list[str]:
    lines = []
    for task in tasks.get("open_tasks") or []:
        if isinstance(task, dict):
            who = f"session {shown_id(str(task.get('session_id')))}" + (", implicit" if task.get("implicit") else "")
            lines.append(f"task {task.get('task_id')} ({who}): {task.get('budget')}; "
                         f"{task.get('remaining_duration_sec')}s left")
    ledger = tasks.get("ledger")
    if isinstance(ledger, dict) and not ledger.get("recording", True):
        lines.append(f"ledger not recording: {pairs(ledger)}")
    return lines


#: A refactor plan's lifetime unless configured (``refactor.plan_ttl_sec``).
_PLAN_TTL_DEFAULT = RefactorConfig().plan_ttl_sec


#: Status sections summed up in a line or two: the state an agent checks (is the index ready, at which
#: epoch, what is pending, which task is open with what budget); build timings, grammar versions and the
#: recent operations stay in the record (``status``) for people and programs.
_SUMMARIES: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "index": lambda s: [_index_line(s)],
    "structural": lambda s: [f"structural {s.get('state')}: "
                             + _scalars(s, "files", "defs", "refs", "imports", "counts_pending",
                                                                "files_with_syntax_errors")],
    "tasks": _task_lines,
    "tests": lambda s: [f"tests: {_scalars(s, *s)}"],
    # Served at all means enabled (switched off, the tools are not listed), and a plan's lifetime only when it is
    # not the default: ``enabled=true plan_ttl_sec=900`` said nothing on every describe.
    "refactor": lambda s: [f"refactor: {told}"] if (told := _scalars(
        {k: v for k, v in s.items() if (k, v) not in (("enabled", True), ("plan_ttl_sec", _PLAN_TTL_DEFAULT))},
        *s)) else [],
}


def render_describe(result: DescribeResult) -> str:
    """``action='repo'``: the repository, the index and the open task in a few lines (the tool list is
    tools/list's; counted); ``errors``: a line per code (half the catalog's JSON); ``tool``: a manual page
    (``_tool_doc``)."""
    if result.action == "errors":
        return "\n".join(f"{e['code']} {e['error']}{' (retryable)' if e.get('retryable') else ''}: {e['summary']}"
                         + (f" [never raised: {e['reserved']}]" if e.get("reserved") else "") for e in result.errors)
    if result.action == "tool":
        return _tool_doc(result)
    if result.action != "repo":
        return compact_json(lean_dump(result))
    head = (f"repo {result.repo_root} ({result.language}) {result.branch or 'detached'} "
            f"{(result.head or 'unborn')[:12]}{' detached' if result.detached else ''}; "
            f"profile {result.profile}, {result.tool_count} tools; repo_id {result.repo_id}")  # api_version: record
    lines = [head]
    for name, section in result.status.items():
        if not isinstance(section, dict):
            lines.append(f"{name}: {compact_json(section)}")
        elif section.get("error"):
            lines.append(f"{name}: error {section['error']}")
        else:
            warnings = section.get("warnings")
            lines += [f"warning: {w}" for w in warnings] if isinstance(warnings, list) else []
            if name in _SUMMARIES:
                lines += _SUMMARIES[name](section)
                continue
            # recoveries: each one is a warning line already
            rest = {k: v for k, v in lean(section).items() if k not in ("warnings", "recoveries")}
            if rest:
                lines.append(f"{name}: {pairs(rest)}")
    return "\n".join(lines)


def _tool_doc(result: DescribeResult) -> str:
    """One tool's documentation as a manual page: what it does, when to use it, examples as the arguments to
    pass, and the parameters by name. Each parameter's type, bounds, default and description are the input
    schema's, which the client has from tools/list (a line per parameter was half the text); only what that
    schema leaves out (the session argument's meaning) is said. The record keeps the schema (``input_schema``)."""
    hints = [name for name, key in (("read-only", "readOnlyHint"), ("destructive", "destructiveHint"),
                                    ("idempotent", "idempotentHint")) if result.annotations.get(key)]
    lines = [f"{result.name} [{', '.join([result.category or 'tool', *hints])}]: {result.description}"]
    if result.when_to_use:
        lines.append("use for: " + "; ".join(result.when_to_use))
    if result.when_not_to_use:
        lines.append("not for: " + "; ".join(result.when_not_to_use))
    lines += [f"e.g. {e.description}: {compact_json(e.params)}" for e in result.examples]
    schema = result.input_schema
    required = set(schema.get("required", []))
    properties = schema.get("properties", {})
    if properties:
        names = ", ".join(f"{name}{' (required)' if name in required else ''}" for name in properties)
        lines.append(f"parameters (types, bounds, defaults: the tools/list schema): {names}")
    session = properties.get(SESSION_ARG, {})
    if isinstance(session, dict) and session.get("description"):
        lines.append(f"{SESSION_ARG}: {session['description']}")
    return "\n".join(lines)


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            name="describe",
            category="introspection",
            summary="Repository summary (root, branch, HEAD, index state, tools) or one tool's documentation.",
            params=DescribeParams,
            result=DescribeResult,
            handler=_describe,
            render=render_describe,
            kind="meta",
            when_to_use=("starting work on a repository", "checking index state or epoch",
                         "learning how a tool is called (action='tool')",
                         "looking up an error code (action='errors')"),
            when_not_to_use=("searching code (use search)", "reading files (use read_source)"),
            examples=(ToolExample("repo summary", {}),
                      ToolExample("document one tool", {"action": "tool", "name": "describe"})),
        )
    ]
