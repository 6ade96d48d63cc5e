"""What an answer costs the agent: lean structured records and text written for a model.

Clients show the model the *text* content of a tool result; ``structuredContent`` is for programs. So
each answer has two faces, built here from one result model:

- **structured** (``{"result", "meta"}``): the typed record of the tool's output schema, *lean*: no null,
  no empty list/object, no field equal to its declared default. Absence means "the default"; the output
  schemas say so by never listing such fields as required (``schema.py``).
- **text**: the tool's :data:`Renderer` (``search`` hits as ``path:line:col: text``, a read as its content
  under a one-line header, …) or, for a tool without one, the lean record as compact JSON. Every id,
  cursor, hash and fingerprint of the record must appear in the text, because the next call needs them
  and the model sees only the text (a test checks this for every tool). A file's SHA-256 appears as its
  first 16 hex digits, which ``write_source`` accepts as a precondition like git accepts a short id.
  Then one ``meta:`` line, only when meta has something to say.

Errors render as ``error <code> <NAME> (retryable): message`` plus the details as compact JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

#: Compact text for the model from the result model. Pure; must carry every id, cursor and hash.
Renderer = Callable[[Any], str]


#: Hex digits of a SHA-256 shown in text; ``expected_file_sha256`` accepts such a prefix (like a short git id).
SHORT_SHA = 16


#: Affected tests named in a text; the record has them all and run_test_targets(affected_by=...) runs them.
TESTS_SHOWN = 3


def short_sha(value: str) -> str:
    return value[:SHORT_SHA]


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def lean(value: Any) -> Any:
    """Drop ``None``, empty lists and empty objects from every object, recursively (list items stay)."""
    if isinstance(value, dict):
        out = {}
        for key, raw in value.items():
            item = lean(raw)
            if item is None or (isinstance(item, list | dict) and not item):
                continue
            out[key] = item
        return out
    if isinstance(value, list):
        return [lean(item) for item in value]
    return value


def lean_dump(model: BaseModel) -> dict[str, Any]:
    """The structured face of a result: JSON-ready, without null, empty or default-valued fields."""
    dumped: dict[str, Any] = lean(model.model_dump(mode="json", exclude_none=True, exclude_defaults=True))
    return dumped


def text_of(rendered: str, meta: dict[str, Any]) -> str:
    if not meta:
        return rendered
    return f"{rendered}\nmeta: {compact_json(meta)}" if rendered else f"meta: {compact_json(meta)}"


def error_text(payload: dict[str, Any]) -> str:
    head = f"error {payload['code']} {payload['error']}"
    if payload.get("retryable"):
        head += " (retryable)"
    text = f"{head}: {payload.get('message', '')}"
    details = _short_hashes(lean(payload.get("details") or {}))
    return f"{text}\ndetails: {compact_json(details)}" if details else text


def _short_hashes(value: Any, key: str = "") -> Any:
    """File hashes in a text as their accepted 16-digit prefix (a 5002 names the current one this way)."""
    if isinstance(value, dict):
        return {k: _short_hashes(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_short_hashes(v, key) for v in value]
    if isinstance(value, str) and "sha256" in key and len(value) == 64:
        return short_sha(value)
    return value
