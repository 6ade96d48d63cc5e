"""Arguments a tool's input model refused, as one 1003 INVALID_ARGUMENTS that shows the way to the right call.

An argument the tool does not take gets the close spelling it meant, or else the names it takes there. One that is
a field of a nested object of the schema (``read_source {"path": ..}`` for ``targets[].path``, ``search
{"paths": ..}`` for ``scope.paths``: other tools take them flat) gets the call rewritten in the right shape, with the
values it was given: ``targets: [{"path": "a.py", "start_line": 3}]``. The required field it leaves missing is not
reported apart (it is the same mistake).
"""

from __future__ import annotations

import difflib
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.server.answers import compact_json

#: Arguments every tool takes besides its model's fields (dispatch removes it before validation).
_SESSION_ARG = "session_id"
#: How deep nested objects are searched for an argument given at the top (targets[].path is one level).
_NESTING = 3
#: A value quoted in the rewritten call at most this long (longer ones are ``…``): the error stays bounded.
_VALUE_CHARS = 80


def validation_error(tool: str, exc: ValidationError, params: type[BaseModel]) -> CodePlaneError:
    """``exc`` as 1003: a line per problem (at most five in the message, twenty in details); top-level arguments
    that belong in a nested object first, as the call that puts them there."""
    errors = exc.errors()
    misplaced: dict[str, dict[str, Any]] = {}  # home (``targets``) → {argument: value}
    homes: dict[str, tuple[str, bool]] = {}  # home → (its dotted path, whether it is a list of objects)
    for err in errors:
        if err["type"] == "extra_forbidden" and len(err["loc"]) == 1:
            found = nested_home(params, str(err["loc"][0]))
            if found is not None:
                path, is_list = found
                home = path.split(".", 1)[0]
                misplaced.setdefault(home, {})[str(err["loc"][0])] = err.get("input")
                homes[home] = (path.rsplit(".", 1)[0], is_list)
    problems = [_placed(home, args, *homes[home]) for home, args in misplaced.items()]
    for err in errors:
        loc = err["loc"]
        if err["type"] == "extra_forbidden" and len(loc) == 1 and nested_home(params, str(loc[0])) is not None:
            continue
        if err["type"] == "missing" and len(loc) == 1 and str(loc[0]) in misplaced:
            continue  # ``targets: Field required`` is the same mistake as the misplaced ``path``
        field = ".".join(str(p) for p in loc) or "(root)"
        problems.append({"field": field, "problem": err["msg"] + (
            _known_fields(params, loc) if err["type"] == "extra_forbidden" else "")})
    summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems[:5])
    return CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"invalid arguments for {tool}: {summary}",
                          details={"tool": tool, "problems": problems[:20]})


def nested_home(params: type[BaseModel], name: str) -> tuple[str, bool] | None:
    """Where ``name``, not a top-level field of ``params``, is a field of a nested object: its dotted path
    (``targets.path``, ``scope.paths``; the shallowest, then the first in field order) and whether the object at
    the top is a list of them. ``None`` when it is nowhere, or a top-level field."""
    if name in params.model_fields:
        return None
    level: list[tuple[str, type[BaseModel], bool]] = []
    for field, info in params.model_fields.items():
        model = _model_in(info.annotation)
        if model is not None:
            level.append((field, model, _is_list(info.annotation)))
    for _ in range(_NESTING):
        for path, model, is_list in level:
            if name in model.model_fields and name != _SESSION_ARG:
                return f"{path}.{name}", is_list
        level = [(f"{path}.{field}", sub, is_list) for path, model, is_list in level
                 for field, info in model.model_fields.items() if (sub := _model_in(info.annotation)) is not None]
    return None


def _placed(home: str, args: dict[str, Any], path: str, is_list: bool) -> dict[str, str]:
    """The problem of arguments given at the top that belong under ``path``: the call in the right shape."""
    inner = "{" + ", ".join(f"{compact_json(k)}: {_value(v)}" for k, v in args.items()) + "}"
    for part in reversed(path.split(".")[1:]):
        inner = "{" + f"{compact_json(part)}: {inner}" + "}"
    shape = f"[{inner}]" if is_list else inner
    where = ", ".join(f"{home}[]{path[len(home):]}.{name}" if is_list else f"{path}.{name}" for name in args)
    said = "not top-level arguments" if len(args) > 1 else "not a top-level argument"
    return {"field": ", ".join(args), "problem": f"{said} ({where}): pass {home}: {shape}"}


def _value(value: Any) -> str:
    text = compact_json(value)
    return text if len(text) <= _VALUE_CHARS else "…"


#: Names one tool (or the spec, §23.7) gives what another takes under another name: no spelling is close, the
#: meaning is (``inspect_affected_tests(affected_by=…)`` as ``discover_test_targets`` takes it; QA s55).
_SYNONYMS = {"affected_by": ("changed_files",), "changed_files": ("affected_by",), "path": ("name",)}


def _known_fields(params: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """For an argument the tool does not take: the close spelling it meant, or else the ones it takes there (an
    agent guessing ``max_tool_calls`` learns ``max_mutations``... in the same answer, without a describe call)."""
    model: type[BaseModel] | None = params
    for part in loc[:-1]:
        if isinstance(part, int) or model is None:
            continue  # an item of a list: the list's model is already in hand
        field = model.model_fields.get(part)
        model = _model_in(field.annotation) if field is not None else None
    if model is None:
        return ""
    known = sorted(n for n in model.model_fields if n != _SESSION_ARG)
    close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6) if loc else []
    close = close or [n for n in _SYNONYMS.get(str(loc[-1]) if loc else "", ()) if n in known][:1]
    return f"; did you mean {close[0]!r}?" if close else f" (takes: {', '.join(known)})"


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model an annotation holds (``Limits``, ``list[Edit]``, ``Limits | None``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _is_list(annotation: Any) -> bool:
    """Whether the annotation is a list (or tuple) of models, ``None`` aside."""
    if get_origin(annotation) in (list, tuple):
        return True
    return any(_is_list(arg) for arg in get_args(annotation) if arg is not type(None))
