"""Which part of a signature changed: the parameter list, what follows it (return type), or something else.

Works on the one-line header every extractor stores as ``display_name`` (``def f(a, b) -> int``,
``func (s *S) Run(ctx context.Context) error``, ``export function f<T>(x: T): T``): the parameter list is
the first balanced ``(...)`` after the name (skipping a ``<...>``/``[...]`` type-parameter list).
"""

from __future__ import annotations

from typing import NamedTuple

PARAMETERS_CHANGED = "parameters_changed"
RETURN_TYPE_CHANGED = "return_type_changed"
SIGNATURE_CHANGED = "signature_changed"

_CLOSE = {"(": ")", "<": ">", "[": "]"}


class Parts(NamedTuple):
    before: str
    parameters: str
    after: str


def _balanced(text: str, start: int) -> int:
    """Index just past the group opened at ``start``, or -1 if it never closes."""
    opener = text[start]
    closer = _CLOSE[opener]
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def split(display: str, name: str) -> Parts | None:
    """(text before the parameters, the parameter list, what follows) or None when there is no list."""
    at = display.find(name) if name else -1
    i = at + len(name) if at >= 0 else 0
    while i < len(display) and display[i] == " ":
        i += 1
    if i < len(display) and display[i] in "<[":
        end = _balanced(display, i)
        if end < 0:
            return None
        i = end
        while i < len(display) and display[i] == " ":
            i += 1
    if i >= len(display) or display[i] != "(":
        return None
    end = _balanced(display, i)
    if end < 0:
        return None
    norm = " ".join
    return Parts(norm(display[:i].split()), norm(display[i:end].split()), norm(display[end:].split()))


#: Kinds whose parenthesised header part is a base list, not parameters.
TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "record", "type", "object", "module",
                        "protocol", "union", "namespace", "impl"})


def tags(old_display: str, new_display: str, old_name: str, new_name: str, kind: str = "") -> tuple[str, ...]:
    """The §23.7 signature tags for a header that changed."""
    if kind in TYPE_KINDS:
        return (SIGNATURE_CHANGED,)
    old, new = split(old_display, old_name), split(new_display, new_name)
    if old is None or new is None:
        return (SIGNATURE_CHANGED,)
    out = []
    if old.parameters != new.parameters:
        out.append(PARAMETERS_CHANGED)
    if old.after != new.after:
        out.append(RETURN_TYPE_CHANGED)
    if old.before != new.before and not out:
        out.append(SIGNATURE_CHANGED)
    return tuple(out) or (SIGNATURE_CHANGED,)


def short(display: str, name: str, qualified: str) -> str:
    """``Cart.add(self, item)``: the header from the name on, with the name replaced by ``qualified``."""
    at = display.find(name) if name else -1
    if at < 0:
        return qualified
    return qualified + display[at + len(name):]
