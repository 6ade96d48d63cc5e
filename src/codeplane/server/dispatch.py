"""One path for every tool call: validate → observers → handler → envelope (spec §23.3, D14).

Invariants:
- The answer is always the envelope ``{result, meta}`` on success, or ``{error, meta}`` with
  ``isError`` on failure; the JSON text block carries the same object byte for byte.
- No exception escapes to the transport: unknown failures become 9001 with a log entry.
- Every call, refused or not, reaches each observer's ``after_call`` exactly once.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ConfigDict, ValidationError

from codeplane.core.calls import (
    CallInfo,
    CallNotes,
    CallOutcome,
    ReportsMutation,
    ReportsTestRun,
    TaskMeta,
)
from codeplane.core.clock import now_ms
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import bind_correlation, get_logger
from codeplane.server.services import Services
from codeplane.server.tooling import ProgressFn, ToolContext, ToolRegistry, ToolResult, ToolSpec

log = get_logger(__name__)
_request_counter = itertools.count(1)
_REQUEST_PREFIX = f"req_{os.getpid():x}_"

#: Every tool accepts this optional argument to join an explicit session (D11).
SESSION_ARG = "session_id"


class ResponseMeta(BaseModel):
    model_config = ConfigDict(frozen=True)

    session_id: str
    request_id: str
    timestamp_ms: int
    task_id: str | None = None
    task_state: str | None = None
    budget: str | None = None
    no_op: bool | None = None
    non_progress: bool | None = None
    mutation_fingerprint: str | None = None
    failure_fingerprint: str | None = None
    warnings: list[str] = []


def _canonical_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=False)


def new_request_id() -> str:
    return f"{_REQUEST_PREFIX}{next(_request_counter):08d}"


def _task_meta(services: Services, session_id: str) -> TaskMeta | None:
    for observer in services.observers:
        meta = observer.task_meta(session_id)
        if meta is not None:
            return meta
    return None


def _meta(services: Services, session_id: str, request_id: str, notes: list[CallNotes]) -> ResponseMeta:
    task = _task_meta(services, session_id)

    def first(attr: str) -> Any:
        return next((getattr(n, attr) for n in notes if getattr(n, attr) is not None), None)

    return ResponseMeta(
        session_id=session_id,
        request_id=request_id,
        timestamp_ms=now_ms(),
        task_id=task.task_id if task else None,
        task_state=task.task_state if task else None,
        budget=task.budget if task else None,
        no_op=first("no_op"),
        non_progress=first("non_progress"),
        mutation_fingerprint=first("mutation_fingerprint"),
        failure_fingerprint=first("failure_fingerprint"),
        warnings=[w for n in notes for w in n.warnings],
    )


def _validation_error(tool: str, exc: ValidationError) -> CodePlaneError:
    problems = [
        {"field": ".".join(str(p) for p in err["loc"]) or "(root)", "problem": err["msg"]}
        for err in exc.errors()
    ]
    summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems[:5])
    return CodePlaneError(
        ErrorCode.INVALID_ARGUMENTS,
        f"invalid arguments for {tool}: {summary}",
        details={"tool": tool, "problems": problems[:20]},
    )


def _error_result(error: CodePlaneError, meta: ResponseMeta) -> types.CallToolResult:
    body = {"error": error.to_payload(), "meta": meta.model_dump(mode="json")}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_canonical_json(body))],
        is_error=True,
    )


def _success_result(result: ToolResult, meta: ResponseMeta) -> tuple[types.CallToolResult, int]:
    body = {"result": result.model_dump(mode="json"), "meta": meta.model_dump(mode="json")}
    text = _canonical_json(body)
    return (
        types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=body,
            is_error=False,
        ),
        len(text.encode("utf-8")),
    )


async def dispatch(
    services: Services,
    registry: ToolRegistry,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    default_session: str,
    progress: ProgressFn | None = None,
) -> types.CallToolResult:
    """Run one tool call end to end. Never raises."""
    request_id = new_request_id()
    args = dict(arguments or {})
    explicit_session = args.pop(SESSION_ARG, None)
    session_id = explicit_session if isinstance(explicit_session, str) and explicit_session else default_session
    spec = registry.get(name)
    info = CallInfo(tool=name, kind=spec.kind if spec else "meta", session_id=session_id,
                    request_id=request_id, started_ms=now_ms())
    began = time.perf_counter()
    result: ToolResult | None = None
    error: CodePlaneError | None = None
    with bind_correlation(request_id=request_id, op_id=name):
        try:
            if spec is None:
                raise CodePlaneError(
                    ErrorCode.UNKNOWN_TOOL,
                    f"no tool named {name!r}; call describe to list tools",
                    details={"tool": name, "available": registry.names()},
                )
            if explicit_session is not None and not isinstance(explicit_session, str):
                raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "session_id must be a string",
                                     details={"tool": name, "field": SESSION_ARG})
            try:
                params = spec.params.model_validate(args)
            except ValidationError as exc:
                raise _validation_error(name, exc) from exc
            info = CallInfo(
                tool=name, kind=spec.kind_for(params) if spec.kind_for else spec.kind,
                session_id=session_id, request_id=request_id, started_ms=info.started_ms,
                op_detail=spec.detail_for(params) if spec.detail_for else "",
            )
            for observer in services.observers:
                observer.before_call(info)
            ctx = ToolContext(services=services, registry=registry, tool=name, session_id=session_id,
                              request_id=request_id, **({"progress": progress} if progress else {}))
            result = await _run(spec, ctx, params)
        except CodePlaneError as exc:
            error = exc
            log.info("tool call failed", tool=name, code=exc.code, error=exc.error.name)
        except Exception as exc:
            log.exception("tool call raised", tool=name)
            error = CodePlaneError(ErrorCode.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}",
                                   details={"tool": name})
        outcome = _outcome(info, began, result, error)
        notes: list[CallNotes] = []
        for observer in services.observers:
            try:
                note = observer.after_call(outcome)
            except Exception:
                log.exception("call observer failed", tool=name)
                continue
            if note is not None:
                notes.append(note)
        meta = _meta(services, session_id, request_id, notes)
        if error is not None or result is None:
            return _error_result(error or CodePlaneError(ErrorCode.INTERNAL_ERROR), meta)
        answer, _ = _success_result(result, meta)
        return answer


def _outcome(info: CallInfo, began: float, result: ToolResult | None,
             error: CodePlaneError | None) -> CallOutcome:
    size = 0
    mutation = failure = None
    if result is not None:
        size = len(_canonical_json(result.model_dump(mode="json")).encode("utf-8"))
        if isinstance(result, ReportsMutation):
            mutation = result.mutation_report()
        if isinstance(result, ReportsTestRun):
            failure = result.test_run_report()
    return CallOutcome(
        info=info,
        duration_ms=(time.perf_counter() - began) * 1000.0,
        ok=error is None,
        error_code=error.code if error else None,
        error_name=error.error.name if error else None,
        result=result,
        result_bytes=size,
        mutation=mutation,
        failure=failure,
    )


async def _run(spec: ToolSpec, ctx: ToolContext, params: Any) -> ToolResult:
    result = await spec.handler(ctx, params)
    if not isinstance(result, spec.result):
        raise CodePlaneError(ErrorCode.INTERNAL_ERROR,
                             f"{spec.name} returned {type(result).__name__}, expected {spec.result.__name__}")
    return result
