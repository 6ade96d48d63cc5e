"""What an answer costs the agent: lean structured records and text written for a model.

Clients show the model the *text* content of a tool result; ``structuredContent`` is for programs. So
each answer has two faces, built here from one result model:

- **structured** (``{"result", "meta"}``): the typed record of the tool's output schema, *lean*: no null,
  no empty list/object, no field equal to its declared default. Absence means "the default"; the output
  schemas say so by never listing such fields as required (``schema.py``).
- **text**: the tool's :data:`Renderer` (``search`` hits as ``line:text`` under their path, a read as its
  content under a one-line header, …) or, for a tool without one, the lean record as compact JSON. Every id,
  cursor, hash and fingerprint of the record must appear in the text, because the next call needs them
  and the model sees only the text (a test checks this for every tool). A file's SHA-256 appears as its
  first 12 hex digits, which ``write_source`` accepts as a precondition like git accepts a short id; a
  fingerprint as its kind and 12 digits (``ff_1eae1951321c``): no call takes it back, it is only compared.
  Then one ``meta:`` line of ``key=value`` pairs, only when meta has something the text does not say.

Errors render as ``error <code> <NAME> (retryable): message`` plus a line of the details as ``key=value``
pairs (values the message already names, ``(state: none)`` as much as a path, ``(497 lines)`` as much as
``line_count=497``, the machine-readable ``reason`` and the caller's own precondition, query and cursor left out:
the record keeps them), and a list of objects as its key and one
line of pairs per object. A refused edit's current text (``details.current``, see
``mutation/refusals.py``) follows as ``line:text`` lines, like a search hit, so the retry needs no re-read.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from codeplane.repo.universe import quoted_path

if TYPE_CHECKING:
    from codeplane.mutation import Delta

#: Compact text for the model from the result model. Pure; must carry every id, cursor and hash.
Renderer = Callable[[Any], str]


#: Hex digits of a SHA-256 shown in text; ``expected_file_sha256`` accepts such a prefix (like a short git id).
SHORT_SHA = 12


#: Affected tests named in a text, at most. A few can be run by name (run_test_targets(targets=...)); a
#: longer list, or its count, helps no next call: run_test_targets(affected_by=...) runs them, and the
#: record names them (by their files when many) with the exact ``affected_by`` that selects them.
TESTS_SHOWN = 3


def short_sha(value: str) -> str:
    return value[:SHORT_SHA]


def short_fingerprint(value: str) -> str:
    """``ff_`` and the first :data:`SHORT_SHA` hex digits: a fingerprint is compared by eye with another one
    (has this failure been seen?), and no call takes one back."""
    kind, sep, digits = value.partition("_")
    return f"{kind}{sep}{digits[:SHORT_SHA]}" if sep else value[:SHORT_SHA]


def tests_affected_line(delta: Delta) -> str | None:
    """``tests affected: a b`` for a few; for more than :data:`TESTS_SHOWN`, how many (``tests affected: 41 in 9
    files``: "none" and "many" read alike when the line was left out); nothing for none."""
    tests = delta.tests_affected
    if not tests:
        return None
    if len(tests) <= TESTS_SHOWN and not delta.tests_affected_total:
        return "tests affected: " + " ".join(quoted_path(t) for t in tests)  # a test id is a path
    total = delta.tests_affected_total or len(tests)
    files = delta.tests_affected_files or len({t.split("::", 1)[0] for t in tests})
    plural = "s" if files != 1 else ""
    # ``affected_by`` (the tool's description says so) runs them; whole files are counted as files alone.
    return f"tests affected: {files} file{plural}" if total == files else \
        f"tests affected: {total} in {files} file{plural}"


def in_repo(path: str, root: str, cwd: str = ".") -> str:
    """``path`` as a text shows it: an absolute path inside the repository ``root`` relative to ``cwd`` (repo-relative;
    ``.venv/bin/python`` for ``/home/me/proj/.venv/bin/python``), anything else as it is (a tool outside the
    repository says where it was found). The record keeps the absolute path."""
    if not root or not path.startswith(root.rstrip("/") + "/"):
        return path
    return os.path.relpath(path, os.path.join(root, cwd))


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def lean(value: Any) -> Any:
    """Drop ``None``, empty lists and empty objects from every object, recursively (list items stay)."""
    if isinstance(value, dict):
        return _lean_dict(value)
    if isinstance(value, list):
        return _lean_list(value)
    return value


# Every answer passes through here (a search's 20 hits are ~200 values): recursing only into containers, not into
# each scalar, is most of its cost.
def _lean_dict(value: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, raw in value.items():
        if raw is None:
            continue
        item = raw
        if isinstance(raw, dict):
            item = _lean_dict(raw)
            if not item:
                continue
        elif isinstance(raw, list):
            if not raw:
                continue
            item = _lean_list(raw)
        out[key] = item
    return out


def _lean_list(value: list[Any]) -> list[Any]:
    return [_lean_dict(item) if isinstance(item, dict) else _lean_list(item) if isinstance(item, list) else item
            for item in value]


def lean_dump(model: BaseModel) -> dict[str, Any]:
    """The structured face of a result: JSON-ready, without null, empty or default-valued fields."""
    dumped: dict[str, Any] = lean(model.model_dump(mode="json", exclude_none=True, exclude_defaults=True))
    return dumped


#: A string this long found in the text already is the same value, not a coincidence of a few letters.
_SEEN_MIN_CHARS = 6


def pairs(values: dict[str, Any], *, seen: str = "", message: bool = False) -> str:
    """``key=value`` pairs (nested values as compact JSON), leaving out every string value ``seen`` already
    contains: the model reads each value once."""
    shown = []
    for key, raw in values.items():
        value = short_fingerprint(raw) if isinstance(raw, str) and key.endswith("fingerprint") else raw
        if _said(key, value, seen, message=message):
            continue
        plain = isinstance(value, str) and value and not any(c.isspace() for c in value)
        text = value if plain else compact_json(value)
        shown.append(f"{key}={text}")
    return " ".join(shown)


def _said(key: str, value: Any, seen: str, *, message: bool = False) -> bool:
    """Whether ``seen`` says ``value`` already: a long string anywhere in it, a short one named with its key (a
    message's ``(state: none)`` and then ``state=none``). ``message``: ``seen`` is an error's message, which names
    values in prose, so also a commit id by the 12 digits it shows, a word as a word of it (``field=ref`` after
    "ref 'x' does not name…"), a value after its key as the caller spelt it (``start_line 900``) and a number
    followed by a word of its key (``(497 lines)`` for ``line_count=497``). An answer's text, which the ``meta:``
    line is compared with, holds file content: a word or number there is no such mention."""
    if not isinstance(value, str | int | float) or isinstance(value, bool) or value == "":
        return False
    text = str(value)
    if message and isinstance(value, str) and _HEX_ID.fullmatch(text):
        return text[:SHORT_SHA] in seen
    if isinstance(value, str) and len(text) >= _SEEN_MIN_CHARS:
        return text in seen
    names = {key.replace("_", " ")} | ({key} if message else set())
    if any(f"{name}{sep}{text}" in seen for name in names for sep in (": ", "=", " ")):
        return True
    if not message:
        return False
    if isinstance(value, str):
        return _WORD.fullmatch(text) is not None and \
            re.search(rf"(?<![\w/.-]){re.escape(text)}(?![\w/.-])", seen) is not None
    words = "|".join(re.escape(w) for w in key.split("_") if w)
    return bool(words) and re.search(rf"(?<![\w.]){re.escape(text)} (?:{words})s?\b", seen) is not None


#: A commit or object id (a text names it by its first :data:`SHORT_SHA` digits).
_HEX_ID = re.compile(rf"[0-9a-f]{{{SHORT_SHA},64}}")
#: A value a message names as a word: a field, a state, a branch (letters first; numbers need their key).
_WORD = re.compile(r"[A-Za-z][\w-]+")


def text_of(rendered: str, meta: dict[str, Any]) -> str:
    """The rendering, then one ``meta:`` line when meta says something the rendering does not. The task id
    is left to the record while its task is OPEN: get_task and every other call default to the current
    task, so no next call needs it."""
    said = {k: v for k, v in meta.items() if k != "task_id" or "task_state" in meta}
    line = pairs(said, seen=rendered)
    if not line:
        return rendered
    return f"{rendered}\nmeta: {line}" if rendered else f"meta: {line}"


#: Details an error's text leaves to the record: ``reason`` is the message's machine-readable form,
#: ``expected_file_sha256`` the caller's own precondition, ``query`` and ``cursor`` its own arguments sent back.
_RESTATED_DETAILS = frozenset({"reason", "expected_file_sha256", "query", "cursor"})


#: Characters of one value an error repeats back: enough to recognise it. A 100 KB ``ref`` or tool name came back
#: whole in the message and again in the details (200 KB, past the 16 KB every answer keeps to).
ECHO_CHARS = 200
#: A detail string's limit is higher: a refused edit's ``current`` lines are already cut at 400 characters
#: (``mutation/refusals.py``) and must stay exact for the retry.
_DETAIL_CHARS = 400
_DETAIL_ITEMS = 50
_MESSAGE_CHARS = 2000
_LONG_WORD = re.compile(rf"\S{{{ECHO_CHARS + 1},}}")


def clipped(value: str, limit: int = ECHO_CHARS) -> str:
    """``value``, or its first ``limit`` characters and how long it was."""
    return value if len(value) <= limit else f"{value[:limit]}… ({len(value):,} characters)"


def shown_id(value: str, limit: int = ECHO_CHARS) -> str:
    """A caller-chosen id (a session's) as a text line may carry it: bounded, and quoted with escapes when it holds
    what would break the line (a newline forged a line of another session's ``describe``)."""
    return value if value.isprintable() and len(value) <= limit else repr(clipped(value, limit))


def bounded_error(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with every echoed value cut: each long word of the message to :data:`ECHO_CHARS`, the message to
    :data:`_MESSAGE_CHARS`, each detail string to :data:`_DETAIL_CHARS` (a program's output: its long words) and
    each detail list to :data:`_DETAIL_ITEMS` items. Done once, here, for every error of every tool (the raisers
    need not each remember; a path echo included, ``core/paths.py``)."""
    message = payload.get("message")
    out = dict(payload)
    if isinstance(message, str):
        out["message"] = clipped(_cut_words(message), _MESSAGE_CHARS)
    if "details" in payload:
        out["details"] = _bounded(payload["details"])
    return out


#: Details holding a program's own output, already cut to their *tail* where they are made (``git/cli.py``,
#: ``git/hooks.py``): the end of a failing hook's output is what the agent fixes, so only the long words in them
#: (a ref git repeats back) are cut here.
_OUTPUT_KEYS = frozenset({"stdout", "stderr"})


def _cut_words(text: str) -> str:
    return _LONG_WORD.sub(lambda m: clipped(m.group()), text)


def _bounded(value: Any, key: str = "") -> Any:
    if isinstance(value, str):
        return _cut_words(value) if key in _OUTPUT_KEYS else clipped(value, _DETAIL_CHARS)
    if isinstance(value, dict):
        return {clipped(str(k)): _bounded(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [_bounded(v, key) for v in value[:_DETAIL_ITEMS]]
        return items + ([f"… {len(value) - _DETAIL_ITEMS} more"] if len(value) > _DETAIL_ITEMS else [])
    return value


def error_text(payload: dict[str, Any]) -> str:
    head = f"error {payload['code']} {payload['error']}"
    if payload.get("retryable"):
        head += " (retryable)"
    text = f"{head}: {payload.get('message', '')}"
    raw = payload.get("details") or {}
    lines = _source_lines(raw.get("current"))
    shown = {k: v for k, v in raw.items() if k not in _RESTATED_DETAILS and not (lines and k == "current")
             and not (k == "problems" and _all_said(v, text))}
    return "\n".join([text, *_detail_lines(_short_hashes(lean(shown)), text), *lines])


def _detail_lines(details: dict[str, Any], text: str) -> list[str]:
    """The details as ``key=value`` pairs on one line, a list of objects as ``key:`` and one line of pairs per
    object (a JSON array of them was a line of braces and quotes), each leaving out what ``text`` says; a list
    of strings without the items ``text`` names."""
    flat: dict[str, Any] = {}
    listed: list[str] = []
    for key, value in details.items():
        if isinstance(value, list) and isinstance(value[0] if value else None, dict):
            # A list cut by :func:`bounded_error` ends in its "… N more" string.
            rows = [row for row in (pairs(v, seen=text, message=True) if isinstance(v, dict) else str(v)
                                    for v in value) if row]
            listed += [f"{key}:", *(f"  {row}" for row in rows)] if rows else []
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            left = [v for v in value if not _said(key, v, text, message=True)]
            if left:
                flat[key] = left
        else:
            flat[key] = value
    line = pairs(flat, seen=text, message=True)
    return [*([line] if line else []), *listed]


def _all_said(problems: Any, text: str) -> bool:
    """Whether the message already says each ``{field, problem}`` of a 1003 (it names up to five)."""
    return isinstance(problems, list) and all(
        isinstance(p, dict) and f"{p.get('field')}: {p.get('problem')}" in text for p in problems)


def _source_lines(value: Any) -> list[str]:
    """A refused edit's ``current`` excerpt (``[{"line", "text"}]``) as ``line:text`` lines; else nothing."""
    if not isinstance(value, list) or not all(isinstance(v, dict) and {"line", "text"} <= v.keys() for v in value):
        return []
    return [f"{v['line']}:{v['text']}" for v in value]


def _short_hashes(value: Any, key: str = "") -> Any:
    """File hashes in a text as their accepted 12-digit prefix (a 5002 names the current one this way)."""
    if isinstance(value, dict):
        return {k: _short_hashes(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_short_hashes(v, key) for v in value]
    if isinstance(value, str) and "sha256" in key and len(value) == 64:
        return short_sha(value)
    return value
