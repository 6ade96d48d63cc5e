"""JSON schemas the agent sees for each tool: input (plus ``session_id``) and the flat envelope output.

Flat means one object schema with ``result`` and ``meta`` properties and no ``oneOf`` anywhere:
several clients reject or mishandle ``oneOf`` in output schemas, so unions are emitted as ``anyOf``.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from codeplane.server.dispatch import SESSION_ARG, SESSION_ID_MAX
from codeplane.server.tooling import ToolRegistry, ToolSpec

_PRIMITIVES = {"string", "integer", "number", "boolean"}
#: Documents the envelope once per tool in two words; what meta may carry is in ``describe``.
_META_SCHEMA = {"type": "object", "description": "Only what is new or needs attention: ids, budget, signals."}
_ERROR_SCHEMA = {"type": "object"}


def _lean_schema(node: Any, *, output: bool) -> Any:
    """A schema without noise: no titles, no ``oneOf`` (some clients reject it), no nullable unions
    (lean answers never carry null, and an optional argument is simply left out), no null defaults,
    and, for outputs, no defaults or descriptions and only never-dropped fields ``required``."""
    if isinstance(node, list):
        return [_lean_schema(item, output=output) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "discriminator") and not isinstance(value, dict | list):
            continue
        if output and ((key == "description" and isinstance(value, str)) or key == "additionalProperties"):
            continue  # the model reads the rendered text, not the output schema; programs need the shape
        if key == "default" and (output or value is None):
            if output:
                out["nullable_"] = True  # dropped when equal to it, so never required
            continue
        if key in ("properties", "$defs", "patternProperties"):
            out[key] = {name: _lean_schema(sub, output=output) for name, sub in value.items()}
        else:
            out["anyOf" if key == "oneOf" else key] = _lean_schema(value, output=output)
    branches = out.get("anyOf")
    if isinstance(branches, list):
        concrete = [b for b in branches if b != {"type": "null"}]
        if len(concrete) < len(branches):
            out.pop("anyOf")
            out.update(concrete[0] if len(concrete) == 1 else {"anyOf": concrete})
            out["nullable_"] = True
    if output and "properties" in out:
        required = [name for name in out.get("required", []) if _never_dropped(out["properties"].get(name, {}))]
        out.pop("required", None)
        if required:
            out["required"] = required
    return out


def _never_dropped(prop: dict[str, Any]) -> bool:
    """A lean dump keeps a field unless it is null, empty or equal to its default (answers.lean_dump)."""
    if prop.get("nullable_"):
        return False
    kind = prop.get("type")
    return kind in _PRIMITIVES or ("enum" in prop and kind is None) or ("const" in prop and kind is None)


def _finish(node: Any) -> Any:
    if isinstance(node, list):
        return [_finish(item) for item in node]
    if isinstance(node, dict):
        return {k: _finish(v) for k, v in node.items() if k != "nullable_"}
    return node


#: ``session_id`` as ``describe(action='tool')`` documents it. ``tools/list`` lists it bare: every tool accepts
#: it (spec §23.3, D11), so strict clients must see it, but explaining it in each of ~40 schemas cost ~1k
#: tokens of every ``tools/list`` for an argument most sessions never pass (the MCP session id is the default).
SESSION_PROPERTY = {"type": "string", "maxLength": SESSION_ID_MAX,
                    "description": "Run in this explicit session (its task and budgets); printable characters."}


def input_schema(spec: ToolSpec, *, documented: bool = False) -> dict[str, Any]:
    """The tool's input schema; ``documented`` adds what ``tools/list`` leaves to ``describe``."""
    schema = _finish(_lean_schema(spec.params.model_json_schema(), output=False))
    props = schema.setdefault("properties", {})
    props[SESSION_ARG] = dict(SESSION_PROPERTY) if documented else {"type": "string"}
    schema["additionalProperties"] = False
    return dict(schema)


#: Object levels an output schema spells out: the result's own fields; records nested in them are just
#: ``object`` (``describe`` and the answers show them). Full depth cost 90k characters over 41 tools, in
#: every ``tools/list``, for what no model reads (it reads the text) and no program needs to parse JSON.
OUTPUT_SCHEMA_DEPTH = 1


def _inline(node: Any, defs: dict[str, Any], depth: int) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, depth) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        return _inline(target, defs, depth)
    if "properties" in node:
        if depth <= 0:
            return {"type": "object"}
        props = {name: _inline(sub, defs, depth - 1) for name, sub in node["properties"].items()}
        return {**{k: v for k, v in node.items() if k != "properties"}, "properties": props}
    return {k: _inline(v, defs, depth) for k, v in node.items()}


def output_schema(spec: ToolSpec) -> dict[str, Any]:
    result = _finish(_lean_schema(spec.result.model_json_schema(ref_template="#/$defs/{model}"), output=True))
    defs: dict[str, Any] = result.pop("$defs", {})
    # An error answer (isError) carries ``error`` where a success carries ``result``, and the schema must admit
    # both: the TypeScript SDK (Claude Code's client) validates an error's structuredContent too, and against
    # ``required: [result, meta]`` it threw -32602 instead of showing the model the error (no ``oneOf``: see above).
    return {
        "type": "object",
        "properties": {"result": _inline(result, defs, OUTPUT_SCHEMA_DEPTH), "error": _ERROR_SCHEMA,
                       "meta": _META_SCHEMA},
        "required": ["meta"],
    }


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
