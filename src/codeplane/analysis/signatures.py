"""Which part of a signature changed: the parameter list, what follows it (return type), or something else.

Works on the one-line header every extractor stores as ``display_name`` (``def f(a, b) -> int``,
``func (s *S) Run(ctx context.Context) error``, ``export function f<T>(x: T): T``): the parameter list is
the first balanced ``(...)`` after the name (skipping a ``<...>``/``[...]`` type-parameter list).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple

PARAMETERS_CHANGED = "parameters_changed"
RETURN_TYPE_CHANGED = "return_type_changed"
SIGNATURE_CHANGED = "signature_changed"
#: A Python signature whose annotations spell the same types otherwise (``Optional[X]`` → ``X | None``).
ANNOTATION_SPELLING = "annotation_spelling"

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


def _tidy(params: str) -> str:
    """Formatting that never changes a parameter list: spaces inside the parentheses, a trailing comma."""
    text = " ".join(params.split())
    text = re.sub(r"\(\s+", "(", text)
    text = re.sub(r",?\s*\)$", ")", text)
    return text


def _find_name(text: str, name: str) -> int:
    """Where ``name`` occurs as a whole word (``f`` is not the f of ``def`` or ``function``), or -1."""
    if not name:
        return -1
    found = re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text)
    return found.start() if found else -1


def split(display: str, name: str) -> Parts | None:
    """(text before the parameters, the parameter list, what follows) or None when there is no list."""
    at = _find_name(display, name)
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
    return Parts(norm(display[:i].split()), _tidy(display[i:end]), norm(display[end:].split()))


#: Kinds whose parenthesised header part is a base list, not parameters.
TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "record", "type", "object", "module",
                        "protocol", "union", "namespace", "impl"})


def tags(old_display: str, new_display: str, old_name: str, new_name: str, kind: str = "") -> tuple[str, ...]:
    """The §23.7 signature tags for two headers; () when they differ in the name alone (a rename)."""
    if kind in TYPE_KINDS:
        return () if unnamed(old_display, old_name) == unnamed(new_display, new_name) else (SIGNATURE_CHANGED,)
    old, new = split(old_display, old_name), split(new_display, new_name)
    if old is None or new is None:
        return () if unnamed(old_display, old_name) == unnamed(new_display, new_name) else (SIGNATURE_CHANGED,)
    out = []
    if old.parameters != new.parameters:
        out.append(PARAMETERS_CHANGED)
    if old.after != new.after:
        out.append(RETURN_TYPE_CHANGED)
    if not out and unnamed(old.before, old_name) != unnamed(new.before, new_name):
        out.append(SIGNATURE_CHANGED)
    return tuple(out)


#: Kinds that name a value: what a user of one relies on is its name and declared type, not its initializer.
VALUE_KINDS = frozenset({"variable", "constant", "field", "static", "property"})
#: An initializer that is itself the value's type: a function literal (Go's ``var F = func(x int) int {...}``).
_FUNCTION_VALUE = re.compile(r"^(?:async\s+)?(?:func|function)\b")
#: A composite literal spelling its type, the value's type when none is declared (``V = map[string]int{...}``).
_TYPED_LITERAL = re.compile(r"^&?[\w.$\[\]*]+\s*\{")


def declared(display: str, name: str) -> str:
    """A value's declaration without its initializer (``const X: usize = 4`` -> ``const X: usize``,
    ``LIMIT = 12`` -> ``LIMIT``): a new initializer of the same declared type breaks no user, as a Python
    constant's does not. When the initializer gives the type (a function literal, or a typed composite literal
    when no type is declared), that type is kept: ``F = func(x int) int``, ``V = map[string]int``."""
    for i in _outside_brackets(display):
        if (display[i] == "=" and display[i + 1:i + 2] not in ("=", ">")
                and display[i - 1:i] not in ("!", "<", ">", "=", ":", "+", "-", "*", "/", "%", "&", "|", "^")):
            head, value = display[:i].strip(), display[i + 1:].strip()
            if _FUNCTION_VALUE.match(value) or (head == name and _TYPED_LITERAL.match(value)):
                return f"{head} = {value.split('{', 1)[0].rstrip()}"  # the type, without the body or elements
            return head
    return display


def unnamed(text: str, name: str) -> str:
    at = _find_name(text, name)
    flat = text if at < 0 else text[:at] + "\0" + text[at + len(name):]
    return " ".join(flat.split())


#: Header text read from the source: at most this many lines of a definition.
HEADER_LINES = 200


def _strip_hash_comment(line: str) -> str:
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return line[:i]
    return line


def header(lines: Sequence[str], start_line: int, start_col: int, end_line: int, *, python: bool) -> str:
    """A definition's header from its source, up to its body: the Python ``:`` at bracket depth 0, else the
    first ``{``, ``;`` or ``=>`` at depth 0. Python comments are dropped. Untruncated, unlike
    ``display_name`` (200 characters), so long parameter lists still split into their parts."""
    parts = []
    for n in range(start_line, min(end_line, start_line + HEADER_LINES - 1, len(lines)) + 1):
        text = lines[n - 1][start_col:] if n == start_line else lines[n - 1]
        parts.append(_strip_hash_comment(text) if python else text)
    text = " ".join(" ".join(parts).split())
    depth = 0
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch in "([<" and not (ch == "<" and python):
            depth += 1
        elif ch in ")]>" and not (ch == ">" and (python or text[i - 1:i] == "=" or text[i - 1:i] == "-")):
            depth = max(depth - 1, 0)
        elif depth == 0 and ((python and ch == ":") or (not python and (ch in "{;" or text[i:i + 2] == "=>"))):
            return text[:i].rstrip()
    return text


def short(display: str, name: str, qualified: str) -> str:
    """``Cart.add(self, item)``: the header from the name on, with the name replaced by ``qualified``."""
    at = _find_name(display, name)
    if at < 0:
        return qualified
    opened = display[:at]
    if opened and not opened.strip("["):
        # A TOML table: its header is ``[name]`` (the display runs on into its values, which are no signature).
        rest = display[at + len(name):]
        return opened + qualified + rest[:len(rest) - len(rest.lstrip("]"))]
    return qualified + display[at + len(name):]


def _python_parameters(display: str, name: str) -> ast.arguments | None:
    parts = split(display, name)
    if parts is None:
        return None
    try:
        tree = ast.parse(f"def _{parts.parameters}: pass")
    except (SyntaxError, ValueError, RecursionError):
        return None
    node = tree.body[0]
    return node.args if isinstance(node, ast.FunctionDef) else None


def python_call_compatible(old_display: str, new_display: str, old_name: str, new_name: str) -> bool:
    """Whether every call the old Python parameter list accepts binds the same way under the new one: the
    positional parameters keep their names and places (a positional-only one may become positional-or-keyword),
    a parameter with a default keeps one (its value may change: behaviour, not the call), and whatever is new
    has a default or is ``*args``/``**kwargs``. Annotations are not looked at (they do not change a call). An
    unreadable list is not compatible (the cautious answer)."""
    old, new = _python_parameters(old_display, old_name), _python_parameters(new_display, new_name)
    if old is None or new is None:
        return False
    old_pos, new_pos = [*old.posonlyargs, *old.args], [*new.posonlyargs, *new.args]
    if len(new_pos) < len(old_pos):
        return False
    old_required = len(old_pos) - len(old.defaults)
    new_required = len(new_pos) - len(new.defaults)
    for index, param in enumerate(old_pos):
        mate = new_pos[index]
        keyword_before = index >= len(old.posonlyargs)
        if mate.arg != param.arg and keyword_before:
            return False  # a keyword call by the old name no longer binds
        if keyword_before and index < len(new.posonlyargs):
            return False  # positional-only now: a keyword call breaks
        if index >= old_required and index < new_required:
            return False  # its default is gone
    if new_required > len(old_pos) or (len(new_pos) > len(old_pos) and old.vararg is not None):
        return False  # a new required positional, or extra positionals that went to *args bind to it now
    if (old.vararg is not None and new.vararg is None) or (old.kwarg is not None and new.kwarg is None):
        return False
    old_kw = {a.arg: d is not None for a, d in zip(old.kwonlyargs, old.kw_defaults, strict=True)}
    new_kw = {a.arg: d is not None for a, d in zip(new.kwonlyargs, new.kw_defaults, strict=True)}
    new_names = {p.arg for p in new_pos[len(new.posonlyargs):]}
    for kw, had_default in old_kw.items():
        if kw in new_kw:
            if had_default and not new_kw[kw]:
                return False
        elif kw not in new_names:
            return False
    return all(has_default for kw, has_default in new_kw.items() if kw not in old_kw)


def _top_level(params: str) -> list[str]:
    """A parameter list's parameters (the text inside its parentheses, split at depth-0 commas, tidied)."""
    inner = params.strip()[1:-1]
    out: list[str] = []
    start = 0
    for i in _outside_brackets(inner):
        if inner[i] == ",":
            out.append(" ".join(inner[start:i].split()))
            start = i + 1
    last = " ".join(inner[start:].split())
    return [*out, last] if last else out


def _outside_brackets(text: str) -> Iterator[int]:
    """The positions of ``text``'s characters outside brackets, generics and quotes (brackets themselves not)."""
    depth = 0
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>" and not (ch == ">" and text[i - 1:i] == "="):
            depth = max(depth - 1, 0)
        elif depth == 0:
            yield i


def _ts_optional(param: str) -> bool:
    """``b?: number``, ``b = 1``, ``...rest``: a parameter a call may leave out."""
    name = re.match(r"^(?:(?:public|private|protected|readonly|override)\s+)*([\w$]+)\s*(\?)?", param)
    if param.startswith("..."):
        return True
    if name is None:
        return False  # a destructured parameter: whether it has a default is read no further (cautious)
    if name.group(2):
        return True
    rest = param[name.end():]
    depth = 0
    for i, ch in enumerate(rest):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>" and not (ch == ">" and rest[i - 1:i] == "="):
            depth -= 1
        elif ch == "=" and depth == 0 and rest[i + 1:i + 2] != ">":
            return True
    return False


def ts_call_compatible(old_display: str, new_display: str, old_name: str, new_name: str) -> bool:
    """Whether every call the old TypeScript/JavaScript parameter list accepts still compiles: the old parameters
    are kept as they were, in order, and each new one after them may be left out (``?``, a default, a rest
    parameter). Anything else (a type changed, a parameter removed or made required) is not (the cautious answer)."""
    old, new = split(old_display, old_name), split(new_display, new_name)
    if old is None or new is None or old.after != new.after:
        return False
    before, after = _top_level(old.parameters), _top_level(new.parameters)
    if len(after) <= len(before) or after[:len(before)] != before:
        return False
    return all(_ts_optional(p) for p in after[len(before):])
