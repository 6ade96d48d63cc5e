"""One path for every tool call: validate → observers → handler → envelope (spec §23.3, D14).

Invariants:
- The answer is always the envelope ``{result, meta}`` on success, or ``{error, meta}`` with
  ``isError`` on failure; the JSON text block carries the same object byte for byte.
- No exception escapes to the transport: unknown failures become 9001 with a log entry, including a result that
  cannot be encoded (a lone surrogate from a file or branch name that is not UTF-8): the record and the text are
  encoded before the call is recorded, so the ledger row says 9001 too. Only a cancellation does (the stop's
  drain cuts a call past its deadline, a client may cancel its own), once recorded.
- Every call, refused, invalid, failed or cut short, reaches each observer's ``after_call`` exactly once (a cut
  one as failed, ``CANCELLED``: it left no ledger row, and the count it was admitted for was lost).
- Every call of a served tool with a valid ``session_id`` reaches ``before_call``, one with invalid arguments
  too, before its 1003: it counts against the budgets like a call its handler refuses (a loop of mis-shaped
  writes never reached ``max_mutations``, while one the handler refused did).
- A tool name the registry does not serve is the caller's text: the call is recorded under it bounded
  (``tasks.recording.bounded_tool_name``), as every row, status and log line then repeats it.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections import OrderedDict
from functools import cache
from typing import Any, cast

import anyio
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
from codeplane.server.answers import bounded_error, compact_json, error_text, lean_dump, text_of
from codeplane.server.argument_errors import validation_error
from codeplane.server.services import Services
from codeplane.server.tooling import ProgressFn, ToolContext, ToolKind, ToolRegistry, ToolResult, ToolSpec
from codeplane.tasks.recording import bounded_tool_name

log = get_logger(__name__)
_request_counter = itertools.count(1)
_REQUEST_PREFIX = f"req_{os.getpid():x}_"

#: Every tool accepts this optional argument to join an explicit session (D11).
SESSION_ARG = "session_id"
#: A session id travels in every row of the ledger, every ``describe`` and ``/status`` of every client: one of 3 MB
#: made each of them 3 MB, and one with a newline forged lines in other sessions' answers.
SESSION_ID_MAX = 128
#: Where each answer's request id travels (protocol ``_meta``: for clients and logs, not the model).
REQUEST_ID_META_KEY = "codeplane/request_id"


class ResponseMeta(BaseModel):
    """What the agent must see beside a result; lean-dumped, so an ordinary answer's meta is ``{}``.

    The task id appears when it is new to the session (its first answer, a new task), its state when that
    is not OPEN, the session id only to a caller that named one; the budget line only when a limit is
    near or hit; signals and the failure fingerprint only when set, the mutation fingerprint only with
    ``no_op``. The request id, for correlating with the ledger and logs, travels in the protocol's
    ``_meta`` instead.
    """

    # defer_build: built by the warm-up after /ready (server/app.py), or on first use
    model_config = ConfigDict(frozen=True, defer_build=True)

    session_id: str | None = None
    task_id: str | None = None
    task_state: str | None = None
    budget: str | None = None
    no_op: bool | None = None
    non_progress: bool | None = None
    mutation_fingerprint: str | None = None
    failure_fingerprint: str | None = None
    warnings: list[str] = []


def new_request_id() -> str:
    return f"{_REQUEST_PREFIX}{next(_request_counter):08d}"


def _task_meta(services: Services, session_id: str) -> TaskMeta | None:
    for observer in services.observers:
        meta = observer.task_meta(session_id)
        if meta is not None:
            return meta
    return None


class _Announcements:
    """Which (task, state) each session was last told about, so ids are sent once, not on every answer."""

    _MAX_SESSIONS = 4096

    def __init__(self) -> None:
        self._seen: OrderedDict[str, tuple[str | None, str | None]] = OrderedDict()
        self._lock = threading.Lock()

    def is_news(self, session_id: str, task_id: str | None, state: str | None) -> bool:
        with self._lock:
            news = self._seen.get(session_id) != (task_id, state)
            self._seen[session_id] = (task_id, state)
            self._seen.move_to_end(session_id)
            while len(self._seen) > self._MAX_SESSIONS:
                self._seen.popitem(last=False)
            return news


_announced = _Announcements()


def _meta(services: Services, session_id: str, notes: list[CallNotes], *, explicit: bool) -> ResponseMeta:
    task = _task_meta(services, session_id)

    def first(attr: str) -> Any:
        return next((getattr(n, attr) for n in notes if getattr(n, attr) is not None), None)

    news = _announced.is_news(session_id, task.task_id if task else None, task.task_state if task else None)
    state = task.task_state if task else None
    # Only a budget running out is news: an open task's, or the session's read budget (the tracker leaves a closed
    # task's out: its error and get_task say what closed it, and its line stayed on every answer until open_task).
    budget_shown = task is not None and task.budget_near and bool(task.budget)
    no_op = first("no_op") or None
    return ResponseMeta(
        # The agent names a session itself when it needs one; a derived id is only echoed when asked for.
        session_id=session_id if news and explicit else None,
        task_id=task.task_id if task and news else None,
        task_state=state if news and state != "OPEN" else None,
        budget=task.budget if task and budget_shown else None,
        no_op=no_op,
        non_progress=first("non_progress") or None,
        # Every mutation has a fingerprint; it tells the agent something only when it repeats (no_op).
        mutation_fingerprint=first("mutation_fingerprint") if no_op else None,
        failure_fingerprint=first("failure_fingerprint"),
        warnings=[w for n in notes for w in n.warnings],
    )


def _session_problem(value: str) -> str | None:
    """Why ``value`` cannot name a session, or ``None``: at most :data:`SESSION_ID_MAX` printable characters."""
    if len(value) > SESSION_ID_MAX:
        return f"is {len(value):,} characters; at most {SESSION_ID_MAX} are accepted"
    if not value.isprintable():  # control, format (bidi overrides) and line-separator characters
        return "may hold only printable characters (no control characters, line breaks or bidi controls)"
    return None


def _error_result(error: CodePlaneError, meta: ResponseMeta, request_id: str) -> types.CallToolResult:
    payload = bounded_error(error.to_payload())
    lean_meta = lean_dump(meta)
    text = text_of(error_text(payload), lean_meta)
    try:
        compact_json([payload, lean_meta, text]).encode("utf-8")
    except UnicodeEncodeError:  # a message or detail naming a file by its raw (not UTF-8) name: the same error, escaped
        payload, lean_meta, text = _escaped(payload), _escaped(lean_meta), _escaped(text)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content={"error": payload, "meta": lean_meta},
        is_error=True,
        _meta={REQUEST_ID_META_KEY: request_id},
    )


def _success_result(rendered: str, record: dict[str, Any], meta: ResponseMeta,
                    request_id: str) -> types.CallToolResult:
    lean_meta = lean_dump(meta)
    text = text_of(rendered, lean_meta)
    if lean_meta:  # the record and its rendering were encoded before the call was recorded (``_encoded``): only the
        text[len(rendered):].encode("utf-8")  # meta line ``text_of`` appended to the rendering is new here
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content={"result": record, "meta": lean_meta},
        is_error=False,
        _meta={REQUEST_ID_META_KEY: request_id},
    )


def _encoded(spec: ToolSpec, result: ToolResult) -> tuple[dict[str, Any], str, int]:
    """(the lean record, the answer's text before meta, the record's size in bytes). Raises what the transport
    would raise later, out of every handler: a renderer bug, or a string UTF-8 cannot carry. Each is serialised and
    encoded once here; :func:`_success_result` encodes only what meta adds to the text."""
    record = lean_dump(result)
    # Its size goes to the ledger, and a tool without a renderer answers it as its text.
    record_json = compact_json(record)
    size = len(record_json.encode("utf-8"))
    if spec.render is None:
        return record, record_json, size
    rendered = spec.render(result)
    rendered.encode("utf-8")
    return record, rendered, size


def _escaped(value: Any) -> Any:
    """``value`` with every lone surrogate written out: ``\\xNN`` for a byte of a name that is not UTF-8 (as the
    git tools show such names), ``\\udNNN`` for any other."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            try:
                return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            except UnicodeEncodeError:
                return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_escaped(v) for v in value]
    return value


def _internal(exc: Exception, tool: str) -> CodePlaneError:
    return CodePlaneError(ErrorCode.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}", details={"tool": tool})


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
    valid = isinstance(explicit_session, str) and _session_problem(explicit_session) is None
    session_id = explicit_session if valid and explicit_session else default_session
    spec = registry.get(name)
    tool = name if spec is not None else bounded_tool_name(name)
    info = CallInfo(tool=tool, kind=spec.kind if spec else "meta", session_id=session_id,
                    request_id=request_id, started_ms=now_ms())
    began = time.perf_counter()
    result: ToolResult | None = None
    error: CodePlaneError | None = None
    # ``op_id`` is the call's ledger row, which exists only once the call ended (see below); lines logged while
    # it runs join that row by ``request_id`` (a ledger column too).
    with bind_correlation(request_id=request_id, tool=tool):
        try:
            if spec is None:
                raise registry.not_served(name)
            if explicit_session is not None and not isinstance(explicit_session, str):
                raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "session_id must be a string",
                                     details={"tool": name, "field": SESSION_ARG})
            if isinstance(explicit_session, str) and (problem := _session_problem(explicit_session)):
                raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"session_id {problem}",
                                     details={"tool": name, "field": SESSION_ARG, "max_length": SESSION_ID_MAX})
            invalid: CodePlaneError | None = None
            params: Any = None
            try:
                params = spec.params.model_validate(args)
            except ValidationError as exc:
                invalid = validation_error(name, exc, spec.params)
            info = CallInfo(
                tool=name, kind=_kind(spec, params if invalid is None else None, args),
                session_id=session_id, request_id=request_id, started_ms=info.started_ms,
                op_detail=spec.detail_for(params) if spec.detail_for and invalid is None else "",
            )
            tracker = getattr(services, "tasks", None)
            if info.kind == "mutation" and tracker is not None:  # a refused attempt's identity, for its no_op
                tracker.note_arguments(request_id, name, args)
            for observer in services.observers:
                observer.before_call(info)
            if invalid is not None:
                raise invalid
            ctx = ToolContext(services=services, registry=registry, tool=name, session_id=session_id,
                              request_id=request_id, **({"progress": progress} if progress else {}))
            result = await _run(spec, ctx, params)
        except CodePlaneError as exc:
            error = exc
        except Exception as exc:
            log.exception("tool call raised", tool=name)
            error = _internal(exc, name)
        except anyio.get_cancelled_exc_class():
            cut = CallOutcome(info=info, duration_ms=(time.perf_counter() - began) * 1000.0, ok=False,
                              error_name="CANCELLED")
            _observe(services, cut)
            raise
        record: dict[str, Any] = {}
        rendered = ""
        size = 0
        # Everything after the handler that can fail runs before the call is recorded, and a failure becomes the
        # call's 9001: the record was encoded after the try above, and a file name that is not UTF-8 broke the
        # transport with a bare "Internal server error" and left no ledger row (qa58 F0).
        try:
            if result is not None and spec is not None:
                record, rendered, size = _encoded(spec, result)
            outcome = _outcome(info, began, result, size, error)
        except Exception as exc:
            log.exception("encoding a tool answer failed", tool=name)
            error, result = _internal(exc, name), None
            outcome = _outcome(info, began, None, 0, error)
        notes = _observe(services, outcome)
        if error is not None:  # after the ledger write, so the line names the row ``cpl status`` shows
            op_id = next((n.op_id for n in notes if n.op_id is not None), None)
            log.info("tool call failed", code=error.code, error=error.error.name,
                     **({"op_id": op_id} if op_id is not None else {}))
        try:
            meta = _meta(services, session_id, notes, explicit=explicit_session is not None)
        except Exception:  # the answer still goes out, without its task line
            log.exception("building an answer's meta failed", tool=name)
            meta = ResponseMeta()
        if error is None and result is not None and spec is not None:
            try:
                return _success_result(rendered, record, meta, request_id)
            except Exception as exc:  # only meta's text is left to fail here: the call itself succeeded
                log.exception("rendering a tool answer failed", tool=name)
                error = _internal(exc, name)
        try:
            return _error_result(error or CodePlaneError(ErrorCode.INTERNAL_ERROR), meta, request_id)
        except Exception as exc:
            log.exception("rendering an error answer failed", tool=name)
            return _error_result(_internal(exc, name), ResponseMeta(), request_id)


def record_refused(services: Services, registry: ToolRegistry, name: str, *, explicit_session: str | None,
                   default_session: str, error: CodePlaneError) -> None:
    """Account for a tool call the transport refused before its arguments could be read (a body over the request
    limit: ``mcp_endpoint._typed_413``) as the dispatch accounts for invalid arguments: admitted as the kind the tool
    is without arguments, counted, and one ledger row with ``error`` (or the budget's refusal that came first)."""
    spec = registry.get(name)
    tool = name if spec is not None else bounded_tool_name(name)
    valid = explicit_session is not None and _session_problem(explicit_session) is None
    session_id = explicit_session if valid and explicit_session else default_session
    info = CallInfo(tool=tool, kind=_kind(spec, None, {}) if spec is not None else "meta", session_id=session_id,
                    request_id=new_request_id(), started_ms=now_ms())
    began = time.perf_counter()
    with bind_correlation(request_id=info.request_id, tool=tool):
        try:
            for observer in services.observers:
                observer.before_call(info)
        except CodePlaneError as exc:
            error = exc
        _observe(services, _outcome(info, began, None, 0, error))


def _observe(services: Services, outcome: CallOutcome) -> list[CallNotes]:
    """Each observer's ``after_call``; one that fails is logged and skipped (the answer must still go out)."""
    notes: list[CallNotes] = []
    for observer in services.observers:
        try:
            note = observer.after_call(outcome)
        except Exception:
            log.exception("call observer failed", tool=outcome.info.tool)
            continue
        if note is not None:
            notes.append(note)
    return notes


_KINDS: frozenset[str] = frozenset({"read", "mutation", "test", "meta"})


def _kind(spec: ToolSpec, params: Any, args: dict[str, Any]) -> ToolKind:
    """The call's kind; for arguments that failed validation (``params`` None) the kind they ask for where it can be
    read from them (a mis-shaped ``write_source`` dry run is a read), else the tool's declared kind."""
    if spec.kind_for is None:
        return spec.kind
    if params is not None:
        return spec.kind_for(params)
    try:
        known = {key: value for key, value in args.items() if key in spec.params.model_fields}
        kind = spec.kind_for(spec.params.model_construct(**known))
    except (AttributeError, TypeError, ValueError, LookupError):  # what it reads may be missing or of any type
        return spec.kind
    return kind if kind in _KINDS else spec.kind


@cache
def _reports(result_type: type[ToolResult]) -> tuple[bool, bool]:
    """Whether a result type reports a mutation, a test run. ``isinstance`` against a runtime-checkable protocol
    inspects the protocol's members on every call (~25 µs each, twice a call); the answer is the type's."""
    return issubclass(result_type, ReportsMutation), issubclass(result_type, ReportsTestRun)


def _outcome(info: CallInfo, began: float, result: ToolResult | None, size: int,
             error: CodePlaneError | None) -> CallOutcome:
    mutation = failure = None
    if result is not None:
        reports_mutation, reports_test_run = _reports(type(result))
        if reports_mutation:
            mutation = cast(ReportsMutation, result).mutation_report()
        if reports_test_run:
            failure = cast(ReportsTestRun, result).test_run_report()
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
