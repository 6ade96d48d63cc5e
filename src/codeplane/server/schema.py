"""JSON schemas the agent sees for each tool: input (plus ``session_id``) and the flat envelope output.

Flat means one object schema with ``result`` and ``meta`` properties and no ``oneOf`` anywhere:
several clients reject or mishandle ``oneOf`` in output schemas, so unions are emitted as ``anyOf``.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import mcp_types as types

from codeplane.server.dispatch import SESSION_ARG, ResponseMeta
from codeplane.server.tooling import ToolRegistry, ToolSpec


def _no_one_of(node: Any) -> Any:
    if isinstance(node, dict):
        return {("anyOf" if k == "oneOf" else k): _no_one_of(v) for k, v in node.items()
                if k != "discriminator"}
    if isinstance(node, list):
        return [_no_one_of(v) for v in node]
    return node


def input_schema(spec: ToolSpec) -> dict[str, Any]:
    schema = _no_one_of(spec.params.model_json_schema())
    schema.pop("title", None)
    props = schema.setdefault("properties", {})
    props[SESSION_ARG] = {
        "type": "string",
        "description": "Optional explicit session to run in (joins that session's task and budgets).",
    }
    schema["additionalProperties"] = False
    return dict(schema)


@functools.cache
def _meta_schema() -> str:
    # The same for every tool; generating it 41 times was a tenth of the server's boot.
    return json.dumps(_no_one_of(ResponseMeta.model_json_schema(ref_template="#/$defs/{model}")))


def output_schema(spec: ToolSpec) -> dict[str, Any]:
    result = _no_one_of(spec.result.model_json_schema(ref_template="#/$defs/{model}"))
    meta: dict[str, Any] = json.loads(_meta_schema())
    defs: dict[str, Any] = {}
    defs.update(result.pop("$defs", {}))
    defs.update(meta.pop("$defs", {}))
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"result": result, "meta": meta},
        "required": ["result", "meta"],
    }
    if defs:
        schema["$defs"] = dict(sorted(defs.items()))
    return schema


def mcp_tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description(),
        input_schema=input_schema(spec),
        output_schema=output_schema(spec),
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=False,
        ),
    )


def list_tools(registry: ToolRegistry) -> list[types.Tool]:
    return [mcp_tool(spec) for spec in registry]
