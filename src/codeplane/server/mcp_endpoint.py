"""The MCP endpoint: a low-level ``mcp`` Server whose list/call handlers delegate to our registry.

We use the low-level server rather than ``MCPServer``'s decorators because the envelope, the flat
output schema and catalog errors (D14) need control over the exact ``CallToolResult``.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server._streamable_http_modern import handle_modern_request
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.inbound import MCP_METHOD_HEADER, MCP_NAME_HEADER, X_MCP_HEADER_KEY, decode_header_value
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from codeplane import __version__
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.server.answers import error_text, text_of
from codeplane.server.dispatch import REQUEST_ID_META_KEY, SESSION_ARG, dispatch, new_request_id
from codeplane.server.drain import Drain, replay_body, shutting_down_error
from codeplane.server.schema import input_schema, list_tools
from codeplane.server.services import Services
from codeplane.server.tooling import ToolRegistry

log = get_logger(__name__)

INSTRUCTIONS = (
    "CodePlane serves this repository's index and exact operations. Prefer its tools over shell "
    "commands: search (not grep), read_source (not cat), write_source (not editors), git_* (not git), "
    "run_test_targets (not pytest). Answers are short text; errors start with 'error <code> <NAME>' and "
    "say whether a retry can help. A file's sha256 may be given by its first 12 hex digits. Git operations "
    "that would discard work need confirm: true and first save a recovery point (undo: git_reset "
    "recovery_point=...; the answer that saved it names it). Every tool takes session_id to run in "
    "a session of your own (its task and budgets). describe(action='tool', name=...) documents a tool fully."
)


def _default_session(ctx: ServerRequestContext[Any, Any]) -> str:
    """Session identity when the call names none (D11).

    The 2025-11-25 revision carries an MCP session header: that is the session. The stateless
    2026-07-28 revision has none, and a TCP connection is too short-lived to stand in for one (HTTP
    clients drop idle keep-alive connections after seconds, which would silently hand the agent a fresh
    task and fresh budgets). So the default is one session per client program on this host, keyed by the
    ``clientInfo`` every modern request carries; concurrent instances of one program should pass
    ``session_id`` to keep separate budgets.
    """
    request = ctx.request
    headers = getattr(request, "headers", None)
    client = getattr(request, "client", None)
    return _session_key(headers.get(MCP_SESSION_ID_HEADER) if headers is not None else None,
                        client.host if client is not None else None, (ctx.meta or {}).get(types.CLIENT_INFO_META_KEY),
                        headers.get("user-agent", "") if headers is not None else "")


def _session_key(mcp_session: str | None, host: str | None, client_info: Any, user_agent: str) -> str:
    """``_default_session`` from its parts (``_typed_413`` has a raw request, no SDK context)."""
    if mcp_session:
        return f"mcp_{mcp_session}"
    if isinstance(client_info, dict):
        identity = f"{host or 'local'}|{client_info.get('name', '')}|{client_info.get('version', '')}"
    else:
        identity = f"{host or 'local'}|{user_agent}"
    return "client_" + hashlib.sha256(identity.encode()).hexdigest()[:16]


class ToolCatalogue:
    """What ``tools/list`` answers, built on first need rather than at boot.

    Generating every served tool's input and output schema with pydantic costs ~50 ms (the core profile), which
    the boot used to spend before the server was ready. The server builds it on a daemon thread once it serves
    (``McpStack.running``); a ``tools/list`` that comes first builds it itself (the lock makes one build). The schemas
    are fixed once the registry is built, so the answer is the same whenever it is built.
    """

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._lock = threading.Lock()
        self._tools: list[types.Tool] | None = None
        self._header_schemas: dict[str, dict[str, Any] | None] = {}

    def tools(self) -> list[types.Tool]:
        with self._lock:
            if self._tools is None:
                self._tools = list_tools(self._registry)
            return self._tools

    def header_schema(self, name: str) -> dict[str, Any] | None:
        """The input schema the SDK checks ``Mcp-Param-*`` headers against, or ``None`` when there is none.

        The SDK asks on every 2026-07-28 ``tools/call`` with arguments, to check the headers its
        ``x-mcp-header`` annotations declare. A schema without such annotations declares no header, so it can
        fail no check: ``None`` (skip) is the same verdict without the SDK walking the schema on every call.
        Only the called tool's input schema is generated (and kept), not the whole catalogue.
        """
        if name not in self._header_schemas:
            spec = self._registry.get(name)
            # The catalogue the warm-up built has it: generating it again with pydantic cost a tool's first call
            # tens of milliseconds.
            built = next((tool.input_schema for tool in self._tools or () if tool.name == name), None)
            schema = built if built is not None else input_schema(spec) if spec is not None else None
            self._header_schemas[name] = schema if schema and X_MCP_HEADER_KEY in json.dumps(schema) else None
        return self._header_schemas[name]


def _cut_short(name: str, *, write: bool) -> types.CallToolResult:
    """The answer of a call the stop cut short (server/drain.py): an ordinary catalog error envelope. A ``write``
    is only cut when the stop gives up, and then what it applied is not known."""
    payload = shutting_down_error(tool=name, cut_short=True, write=write).to_payload()
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text_of(error_text(payload), {}))],
        structured_content={"error": payload, "meta": {}}, is_error=True,
        _meta={REQUEST_ID_META_KEY: new_request_id()})


def _finishes(registry: ToolRegistry, name: str, arguments: dict[str, Any] | None) -> bool:
    """Whether a stop must let this call finish: it changes the repository, and a batch is all-or-nothing in a
    thread cancelling cannot stop. A tool whose kind depends on its arguments is asked with them (``lint_check``
    writes only with ``fix``: a plain check kept a stop waiting for a hung linter); arguments it would refuse
    change nothing, so when they cannot be read the call is let finish (the dispatch refuses it at once). The
    arguments are read as the dispatch reads them, without ``session_id``: with it they never validated, and a
    write naming its session was cut by a stop or a client's cancel, answered "nothing was applied" though its
    batch went on and landed (QA s55)."""
    spec = registry.get(name)
    if spec is None:
        return False
    if spec.kind_for is None:
        return spec.kind == "mutation"
    args = {k: v for k, v in (arguments or {}).items() if k != SESSION_ARG}
    try:
        return spec.kind_for(spec.params.model_validate(args)) == "mutation"
    except Exception:  # noqa: BLE001 - the dispatch refuses them with its own error, quickly
        return True


def build_mcp_server(services: Services, registry: ToolRegistry, catalogue: ToolCatalogue,
                     drain: Drain | None = None) -> Server[Any]:
    stop = drain or Drain()

    async def on_list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=catalogue.tools())

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(done, total, message)

        finishes = _finishes(registry, params.name, params.arguments)
        answer = await stop.run(lambda: dispatch(
            services, registry, params.name, params.arguments,
            default_session=_default_session(ctx), progress=progress,
        ), finishes=finishes)
        return answer if answer is not None else _cut_short(params.name, write=finishes)

    server: Server[Any] = Server(
        "codeplane",
        version=__version__,
        instructions=INSTRUCTIONS,
        get_tool_input_schema=catalogue.header_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
    # The SDK wraps every message in an OpenTelemetry span (context extraction, attributes, ~5 % of a call's
    # CPU). Nothing installs a tracer provider for it: those spans went to the no-op tracer. Our own telemetry
    # (observability/, exported over OTLP when configured) traces every call.
    server.middleware[:] = [m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)]
    return server


#: Largest body the fast path reads itself; a larger (or chunked) one takes the SDK's path unchanged.
_FAST_BODY_MAX = 256 * 1024
_PROTOCOL_HEADER = b"mcp-protocol-version"


class McpFastPath:
    """``/mcp`` straight to the SDK's streamable-HTTP handler; every other path to ``routes`` (Starlette).

    Two per-call costs go (issue 19 item 3), the answer bytes stay the same:

    - Starlette's error and exception middleware, router and route, for the one path that is always ``/mcp``
      (an exception still becomes uvicorn's 500, as Starlette's would).
    - For a stateless (2026-07-28) request that cannot stream, the SDK's SSE set-up: a task group, a
      disconnect watcher, a zero-size stream and a 15 s timer per call, cancelled again when the handler
      answers without emitting (then the answer is the same ``application/json`` body the JSON mode
      writes). A request cannot stream when its body carries no ``progressToken`` (our handlers emit
      only progress) and names no long-running tool (``test`` kind: a client that disconnects still cancels
      it, which needs the watcher; the test is on the body's bytes, so a mere mention also keeps the SDK
      path). Such a request is handed to the SDK's own modern handler in JSON mode, which runs the same
      security check, header/body validation and handler.

    Anything else (legacy sessions, GET/DELETE, big or chunked bodies, a manager not yet running) takes the
    SDK's full path unchanged.
    """

    def __init__(self, routes: ASGIApp, server: Server[Any], manager: StreamableHTTPSessionManager, *,
                 security: TransportSecuritySettings, registry: ToolRegistry, path: str = "/mcp",
                 session_ended: Callable[[str], None] | None = None,
                 refused: Callable[[str, str | None, str, CodePlaneError], None] | None = None) -> None:
        self._routes = routes
        #: Told (tool, session_id argument, default session, error) of a tool call refused before its body was read
        #: (``_typed_413``).
        self._refused = refused
        #: Told the CodePlane session of an MCP session its client DELETEd (``_default_session``'s key).
        self._session_ended = session_ended
        self._server = server
        self._manager = manager
        self._security = security
        self._path = path
        self._streaming_tools = tuple(f'"{spec.name}"'.encode() for spec in registry if spec.kind == "test")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self._path:
            await self._routes(scope, receive, send)
            return
        if not self._may_shortcut(scope):
            if scope["method"] == "DELETE" and self._session_ended is not None:
                await self._delete(scope, receive, send, self._session_ended)
                return
            await self._manager.asgi_app(scope, *_typed_413(scope, receive, send, self._manager.max_request_body_size,
                                                            self._refused))
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away before its body arrived: no answer
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replay = replay_body(body, receive)
        if (b"progressToken" in body or any(name in body for name in self._streaming_tools)
                or self._manager._task_group is None):  # the SDK's own "not running" guard answers that case
            await self._manager.asgi_app(scope, replay, send)
            return
        await handle_modern_request(self._server, self._security, True,
                                    self._manager._lifespan_state,  # entered once by the manager's run()
                                    scope, replay, send)

    async def _delete(self, scope: Scope, receive: Receive, send: Send, ended: Callable[[str], None]) -> None:
        """The SDK ends the MCP session; once it said so (2xx), the session's task closes too: it stayed listed OPEN
        to every client for the idle timeout (QA54)."""
        status = 0

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        await self._manager.asgi_app(scope, receive, watched)
        session = next((v.decode("latin-1") for k, v in scope["headers"] if k == MCP_SESSION_ID_HEADER.encode()),
                       None)
        if session and 200 <= status < 300:
            await anyio.to_thread.run_sync(ended, f"mcp_{session}")

    @staticmethod
    def _may_shortcut(scope: Scope) -> bool:
        """A modern-era POST with a short declared body (nothing is read to decide)."""
        if scope["method"] != "POST":
            return False
        version = length = None
        accept = b""
        for key, value in scope["headers"]:
            if key == _PROTOCOL_HEADER:
                version = value
            elif key == b"content-length":
                length = value
            elif key == b"accept":
                accept += value
        # The SDK's own era routing (streamable_http_manager): a handshake version means a legacy session.
        if version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS:
            return False
        # JSON mode would also serve a client that does not accept SSE, which the SDK's mode answers 406: such a
        # request (or any unusual Accept) keeps the SDK's path and its answer.
        if b"application/json" not in accept or b"text/event-stream" not in accept:
            return False
        return length is not None and length.isdigit() and int(length) <= _FAST_BODY_MAX


def _typed_413(scope: Scope, receive: Receive, send: Send, limit: int,
               refused: Callable[[str, str | None, str, CodePlaneError], None] | None) -> tuple[Receive, Send]:
    """``receive``/``send`` with the SDK's body-limit refusal (HTTP 413, plain text ``Request body too large``: the
    official client saw only "Server returned an error response") answered as a JSON-RPC error carrying catalog 1003
    and the limit instead. A client reads a JSON-RPC error from a non-2xx answer whose type is JSON.

    A refused ``tools/call`` whose tool and session the headers and the body's first :data:`_HEAD_BYTES` tell
    (``_oversized_call``; the rest of the body is never read) is also accounted for as a call with invalid arguments
    (README: every call is a row, and invalid ones count): a loop of oversized writes ends by its budget and shows
    in the ledger (QA56 #2)."""
    replaced = False
    head = bytearray()
    complete = False

    async def watched() -> Message:
        nonlocal complete
        message = await receive()
        if message["type"] == "http.request":
            head.extend(message.get("body", b"")[:max(0, _HEAD_BYTES - len(head))])
            complete = not message.get("more_body", False)
        return message

    async def typed(message: Message) -> None:
        nonlocal replaced
        if message["type"] == "http.response.start" and message.get("status") == 413:
            replaced = True
            error = CodePlaneError(
                ErrorCode.INVALID_ARGUMENTS,
                f"the request body is over {limit:,} bytes, the most one MCP request may carry; split the call "
                "(write a large file in several edits)",
                details={"field": "(request body)", "limit_bytes": limit})
            if refused is not None:
                # A declared Content-Length is refused before any byte is read: read the head now, before the
                # answer (the server reads no request body once it answered), waiting briefly for it.
                with anyio.move_on_after(_HEAD_WAIT_SEC):
                    while not complete and len(head) < _HEAD_BYTES:
                        if (await watched())["type"] != "http.request":
                            break
                call = _oversized_call(scope, bytes(head))
                if call is not None:
                    try:  # on the loop, as the dispatch calls the observers (one SQLite transaction)
                        refused(*call, error)
                    except Exception:  # the answer must still go out
                        log.exception("recording an oversized call failed", tool=call[0])
            body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                "code": types.INVALID_REQUEST, "message": error.message, "data": error.to_payload()}}).encode()
            await send({"type": "http.response.start", "status": 413, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        if replaced and message["type"] == "http.response.body":
            return  # the SDK's plain-text body: ours went out instead
        await send(message)

    return watched, typed


#: How much of an oversized body is read to name its call, and how long that may wait.
_HEAD_BYTES = 4096
_HEAD_WAIT_SEC = 1.0
_ARGUMENTS = re.compile(rb'"arguments"\s*:\s*\{')
_FIRST_SESSION = re.compile(rb'\s*"session_id"\s*:\s*"((?:[^"\\]|\\.){1,256})"')


def _oversized_call(scope: Scope, head: bytes) -> tuple[str, str | None, str] | None:
    """(tool, ``session_id`` argument, default session) of a ``tools/call`` whose body starts with ``head``, or
    ``None`` when the head and headers do not tell both the tool and the session.

    The tool: the ``Mcp-Name`` header (2026-07-28), else the body's ``params.name`` ahead of its arguments. The
    session: a ``session_id`` that is the arguments' first key, else the ``Mcp-Session-Id`` header (a legacy
    session), else the ``clientInfo`` of a ``_meta`` ahead of the arguments. The official client adds ``_meta``
    after them, at the end of the body: a stateless call without a leading ``session_id`` is not accounted for
    rather than charged to a session of nobody's."""
    headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
    found = _ARGUMENTS.search(head)
    request: Any = None
    if found is not None:
        prefix = head[:found.start()].rstrip().rstrip(b",")
        for closing in (b"}}", b"}"):  # the head without its arguments, closed: ``params`` then the request
            try:
                request = json.loads(prefix + closing)
                break
            except ValueError:
                continue
    params = request.get("params") if isinstance(request, dict) else None
    params = params if isinstance(params, dict) else {}
    method = headers.get(MCP_METHOD_HEADER) or (request.get("method") if isinstance(request, dict) else None)
    name = decode_header_value(headers.get(MCP_NAME_HEADER)) or params.get("name")
    if method != "tools/call" or not isinstance(name, str) or not name:
        return None
    first = _FIRST_SESSION.match(head, found.end()) if found is not None else None
    explicit: Any = None
    if first is not None:
        try:
            explicit = json.loads(b'"' + first.group(1) + b'"')
        except ValueError:
            explicit = None
    meta = params.get("_meta")
    client_info = meta.get(types.CLIENT_INFO_META_KEY) if isinstance(meta, dict) else None
    mcp_session = headers.get(MCP_SESSION_ID_HEADER.lower())
    if not isinstance(explicit, str) and not mcp_session and not isinstance(client_info, dict):
        return None
    client = scope.get("client")
    default = _session_key(mcp_session, client[0] if client else None, client_info, headers.get("user-agent", ""))
    return name, explicit if isinstance(explicit, str) else None, default
