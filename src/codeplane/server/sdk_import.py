"""Importing the MCP SDK with its pydantic models' validators left for their first use (issue 19's warm restart).

The SDK defines ~550 pydantic models (both protocol versions' wire types, the version-free ones, auth, resources,
prompts); building every model's validator and serializer is about a fifth of the SDK's import (~0.1 s of CPU on
Django's warm restart, measured under load), yet a server validates a handful of them (JSON-RPC envelopes,
initialize, tools/list, tools/call). Imported here, each of those models is created with pydantic's
``defer_build``: the same model, whose core schema, validator and serializer pydantic builds the first time it
validates, serialises or renders a schema. What ``/ready`` promises is unchanged (the first call of a kind pays a
few milliseconds more; ``McpStack``'s warm-up thread sends a sample of the first calls' messages through the
models right after the boot, so that is usually done before a client asks). Only the SDK's models are affected:
the base config is restored before anything else is imported.

The SDK's package ``__init__`` modules (``mcp``, ``mcp.server``, ``mcp.client``) re-export everything, so importing
any server module ran the whole client, the high-level ``MCPServer`` and httpx2 too (~0.1 s of CPU, a quarter of the
SDK's import, none of it used by a server). :func:`_lazy_package` registers each such package with its
``__init__`` not yet run: its submodules import as usual, and the first attribute asked of the package itself
(``from mcp import Client``) runs the real ``__init__`` into it, so every name it exports is still there.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic.version import VERSION as PYDANTIC_VERSION

_lock = threading.Lock()


def _rebuilds_are_locked() -> bool:
    """Whether pydantic serialises a deferred model's build (2.14 on): the warm-up thread and a request may race."""
    major, minor = (int(part) for part in PYDANTIC_VERSION.split(".")[:2])
    return (major, minor) >= (2, 14)


#: The SDK packages whose ``__init__`` only re-exports; parents first.
_LAZY_PACKAGES = ("mcp", "mcp.server", "mcp.client")
_init_lock = threading.RLock()


def _lazy_package(name: str) -> None:
    """Register package ``name`` with its ``__init__`` deferred to the first attribute asked of it (not imported)."""
    spec = importlib.util.find_spec(name)  # its parent is registered already: this does not run an __init__
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    loader = spec.loader
    module = importlib.util.module_from_spec(spec)
    pending = [True]

    def __getattr__(attr: str) -> object:  # the module-level hook of PEP 562
        # A lock held by one thread, re-entered by the __init__ it runs: a name asked while the __init__ is still
        # running is missing, as in any package being imported.
        with _init_lock:
            if pending:
                pending.clear()
                loader.exec_module(module)
        try:
            return module.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


def import_mcp_sdk() -> None:
    """Import the SDK modules the server uses, their models' builds deferred (idempotent)."""
    with _init_lock:
        for name in _LAZY_PACKAGES:
            if name not in sys.modules:  # a process that imported the SDK already (a test's client) keeps it whole
                _lazy_package(name)
    if not _rebuilds_are_locked():
        import mcp.server.lowlevel.server  # built at once: concurrent first builds of a deferred model could race
        return
    with _lock:
        config = BaseModel.model_config
        previous = config.get("defer_build")
        config["defer_build"] = True
        try:
            with _sdk_builds_deferred():
                import mcp.server.lowlevel.server  # for the side effect: its models exist, unbuilt
                import mcp.server.streamable_http
                import mcp.server.transport_security  # noqa: F401
                import mcp_types  # noqa: F401
        finally:
            if previous is None:
                del config["defer_build"]
            else:
                config["defer_build"] = previous


#: The modules whose import-time builds :func:`_sdk_builds_deferred` leaves for first use.
_SDK_MODULES = ("mcp_types", "mcp.")
#: What it left unbuilt; :func:`warm_mcp_sdk` builds them after ``/ready``.
_left_unbuilt: list[type[BaseModel] | TypeAdapter[Any]] = []


@contextmanager
def _sdk_builds_deferred() -> Iterator[None]:
    """While the SDK imports on this thread, its explicit builds are left for first use too.

    ``defer_build`` covers the models' class creation, but ``mcp_types`` also builds at import what it could leave:
    ``model_rebuild()`` of four request-parameter models (their forward references resolve from the module at first
    use just as well) and a ``TypeAdapter`` per message union, which pydantic builds at once for a union (no config
    of its own to defer by): about half of the SDK's import CPU (~50 ms, issue 19's warm restart). Here a rebuild an
    SDK module's own top level asks for is skipped and the SDK's adapters are created deferred: each is built by its
    first use (or ``warm_mcp_sdk`` after ``/ready``), as a deferred model is. Only such calls on this thread are
    affected; any other (pydantic's own rebuild at a model's first use included) is passed through unchanged.
    """
    importer = threading.get_ident()
    original = BaseModel.__dict__["model_rebuild"]
    rebuild = original.__func__
    defer_property = TypeAdapter.__dict__["_defer_build"]

    def model_rebuild(cls: type[BaseModel], *, force: bool = False, raise_errors: bool = True,
                      _parent_namespace_depth: int = 2, _types_namespace: Any = None) -> bool | None:
        caller = sys._getframe(1)
        if (not force and threading.get_ident() == importer and caller.f_code.co_name == "<module>"
                and str(caller.f_globals.get("__name__", "")).startswith(_SDK_MODULES)):
            _left_unbuilt.append(cls)
            return None  # a module-level rebuild in the SDK: left for the model's first use
        return rebuild(cls, force=force, raise_errors=raise_errors,  # type: ignore[no-any-return]
                       _parent_namespace_depth=_parent_namespace_depth + 1, _types_namespace=_types_namespace)

    def defer_build(adapter: TypeAdapter[Any]) -> bool:
        if threading.get_ident() == importer and adapter._module_name.startswith(_SDK_MODULES):
            _left_unbuilt.append(adapter)
            return True
        return defer_property.__get__(adapter)  # type: ignore[no-any-return]

    BaseModel.model_rebuild = classmethod(model_rebuild)  # type: ignore[assignment, method-assign]
    TypeAdapter._defer_build = property(defer_build)  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        BaseModel.model_rebuild = original  # type: ignore[method-assign]
        TypeAdapter._defer_build = defer_property  # type: ignore[method-assign]


#: The messages a client's first exchange consists of, per protocol era: the handshake (2025-11-25) and a
#: stateless call (2026-07-28). Each is parsed, and each answer's shape serialised, as the SDK does per request.
_FIRST_REQUESTS: tuple[tuple[str, dict[str, object]], ...] = (
    ("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "w", "version": "0"}}),
    ("tools/list", {}),
    ("tools/call", {"name": "describe", "arguments": {}}),
)
_FIRST_RESULTS: tuple[tuple[str, dict[str, object]], ...] = (
    ("initialize", {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "w", "version": "0"}}),
    ("tools/list", {"tools": [{"name": "w", "inputSchema": {"type": "object"}}]}),
    ("tools/call", {"content": [{"type": "text", "text": "w"}], "structuredContent": {}}),
)


def warm_mcp_sdk() -> None:
    """Build, off the boot's critical path, the deferred models a client's first messages go through.

    Run on the warm-up thread once the server serves; a request that comes first builds what it needs itself.
    A sample that no version accepts still built the models it reached, so failures are ignored.
    """
    from mcp_types import jsonrpc_message_adapter
    from mcp_types.methods import parse_client_notification, parse_client_request, serialize_server_result
    from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

    versions = sorted({"2025-11-25", KNOWN_PROTOCOL_VERSIONS[-1]})
    attempts: list[tuple[object, ...]] = [(jsonrpc_message_adapter.validate_python, {
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "w"}})]
    for version in versions:
        attempts += [(parse_client_request, method, version, params) for method, params in _FIRST_REQUESTS]
        attempts += [(serialize_server_result, method, version, data) for method, data in _FIRST_RESULTS]
        attempts.append((parse_client_notification, "notifications/initialized", version, None))
    for function, *args in attempts:
        try:
            function(*args)  # type: ignore[operator]
        except Exception:  # noqa: BLE001 - a sample a version rejects still built its models
            continue
    # The answer of a tool call as dispatch builds it: the samples above validate the versions' own result models,
    # not these (the first tool call built them, ~10-40 ms inside its answer).
    import mcp_types as types

    with suppress(Exception):
        types.CallToolResult(content=[types.TextContent(type="text", text="w")], structured_content={},
                             is_error=False)
    # What the SDK would have built as it imported (_sdk_builds_deferred) and the samples above did not reach.
    for unbuilt in _left_unbuilt:
        if isinstance(unbuilt, TypeAdapter):
            if not unbuilt.pydantic_complete:
                unbuilt.rebuild(raise_errors=False, _parent_namespace_depth=0)
        elif not unbuilt.__pydantic_complete__:
            unbuilt.model_rebuild(raise_errors=False, _parent_namespace_depth=0)
