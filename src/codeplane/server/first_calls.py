"""What the first calls after ``/ready`` would otherwise pay for, done by the warm-up instead (S54 §2).

A first ``map_repo`` on Django cost ~6x a warm one (53 ms against 8), a first ``search`` 2-3x: each left work
for whoever came first.

- ``map_repo``'s sections (the folded tree, languages, entry points, test layout, dependencies, public API, in
  ``index/structural/map_cache.py``): computed once per index epoch, by the first call; the warm-up only read
  the file table.
- A tool's result model and its serializer: created unbuilt (``defer_build``), built by the tool's first call;
  likewise the SDK's ``CallToolResult`` and ``TextContent`` every answer is made of (now built by
  ``sdk_import.warm_mcp_sdk``).
- The ledger's first commit after the server opened it: SQLite restarts ``ledger.db-wal`` (writes and syncs its
  header) at the first write after an open, ~2-20 ms, paid inside the first call's answer.
- Tantivy's first search of a reader (its segment files' pages) and the lexical path's first compiled patterns.

Once the server serves (``McpStack.running``; ``/ready`` waits for none of it), the models
(:func:`build_result_models`, with the SDK's and tools/list's) are built on one thread while
:func:`warm_first_calls` does the rest on the warm-up thread as soon as the index is ready, before the deferred
services. It runs the read handlers of ``map_repo`` and ``search`` themselves, as a call would, but outside the
dispatch: nothing is recorded in the ledger or counted against a budget. Best effort: a failure only leaves that
work to the first call (which, if it comes at once, waits for the map being built rather than building it too).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

from codeplane.core.logging import get_logger
from codeplane.server.answers import lean_dump
from codeplane.server.tooling import ToolContext, ToolRegistry, ToolResult, ToolSpec

if TYPE_CHECKING:
    from codeplane.server.services import Services

log = get_logger(__name__)

#: The reads warmed, with arguments a first call would plausibly pass: ``map_repo``'s defaults (the map an agent
#: asks for first), and a lexical ``search`` (the query's words do not matter: the reader and the path do).
WARMED_READS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("map_repo", {}),
    ("search", {"query": "main", "limit": 1}),
)
#: How long the warm-up waits for the index before leaving this work to the first calls (a cold build: minutes).
INDEX_WAIT_SEC = 600.0
_SESSION = "cpl-warm-up"


def warm_first_calls(services: Services, registry: ToolRegistry, *, wait: bool) -> bool:
    """Do the first calls' one-time work (see the module docstring) once the index is ready; whether it was done.
    Without ``wait``, only if the index is ready now. Returns early when the server stops."""
    if not _index_ready(services, INDEX_WAIT_SEC if wait else 0.0):
        return False
    began = time.perf_counter()
    tasks = getattr(services, "tasks", None)
    if tasks is not None:
        with contextlib.suppress(Exception):  # a ledger that cannot be written: the first call says so itself
            tasks.ledger.prime()
    for name, arguments in WARMED_READS:
        if services.stopping.is_set():
            break
        spec = registry.get(name)
        if spec is None:  # not served in this profile
            continue
        try:
            params = spec.params.model_validate(arguments)
            ctx = ToolContext(services=services, registry=registry, tool=name, session_id=_SESSION,
                              request_id=f"{_SESSION}-{name}")
            result = asyncio.run(_answer(spec, ctx, params))
            if spec.render is not None:
                spec.render(result)
            lean_dump(result)
        except Exception:  # the call that comes first does the work, and answers its own error
            log.debug("warming a first call failed", tool=name, exc_info=True)
    log.debug("first calls warmed", ms=round((time.perf_counter() - began) * 1000, 1))
    return True


def build_result_models(registry: ToolRegistry) -> None:
    """Every served tool's answer model (a few ms; ``McpStack._warm_protocol``): the first call of each builds none.
    Only the served tools': all ~100 would compete with the first calls themselves."""
    for spec in registry:
        if not spec.result.__pydantic_complete__:
            spec.result.model_rebuild(raise_errors=False, _parent_namespace_depth=0)


async def _answer(spec: ToolSpec, ctx: ToolContext, params: Any) -> ToolResult:
    return await spec.handler(ctx, params)


def _index_ready(services: Services, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not services.stopping.is_set():
        if services.index.ready and not services.index.first_build_writing:
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        services.index.wait_ready(min(left, 0.1))
    return False
