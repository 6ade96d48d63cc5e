"""A Java method's parameter types, erased to simple names, to tell an overload from an override.

Counting parameters (``targets.java_signature``) took ``B.f(String)`` for an override of ``A.f(int)`` when ``B``
extends ``A``: renaming ``A.f`` renamed ``B.f`` and its calls as certain, though Java resolves them apart (QA s55).
Two methods of one name and count are different signatures when, at some position, both parameter types are
known and differ after erasure (``List<String>`` is ``List``, ``String...`` is ``String[]``, ``java.util.Map.Entry``
is ``Entry``). A type variable is never known: ``f(T x)`` in ``G<T>`` is overridden by ``f(String x)`` in
``H extends G<String>``, so a name declared as a type parameter anywhere in the method's file (or any single capital
letter) compares equal to anything, and an unreadable declaration makes no claim at all: both keep the method in
the family, as before.
"""

from __future__ import annotations

import re

from codeplane.refactor.facts import Def
from codeplane.refactor.spans import SourceText

_WINDOW = 4000
_OPEN, _CLOSE = "(<[{", ")>]}"
_ANNOTATION = re.compile(r"@\s*[\w.]+(\s*\((?:[^()]|\([^()]*\))*\))?")
_GENERIC = re.compile(r"<[^<>]*>")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
#: Where a type-parameter list opens: after ``class|interface|record Name``, or before a generic method's or
#: constructor's return type (after a modifier, or where a member starts).
_CLASS_PARAMS = re.compile(r"\b(?:class|interface|record)\s+\w+\s*<")
_METHOD_PARAMS = re.compile(r"(?:\b(?:public|private|protected|static|final|abstract|synchronized|native|default|"
                            r"strictfp)\s+|(?:^|[;{}])\s*)<", re.MULTILINE)
_VARIABLE_LIKE = re.compile(r"[A-Z][0-9]*\Z")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def parameter_types(text: SourceText | None, method: Def) -> tuple[str | None, ...] | None:
    """Each parameter's erased simple type, ``None`` for a type variable; ``None`` when unreadable."""
    if text is None or not 0 < method.name_line <= len(text.lines):
        return None
    start = text.offset(method.name_line, method.name_column + len(method.name))
    inner = _parenthesised(_COMMENT.sub(" ", text.text[start:start + _WINDOW]))
    if inner is None:
        return None
    variables = _type_variables(text.text)
    types: list[str | None] = []
    for part in _top_level(inner):
        erased = _erased(part)
        if erased is None:
            return None
        base = erased.rstrip("[]")
        types.append(None if base in variables or _VARIABLE_LIKE.match(base) else erased)
    return tuple(types)


def different_signatures(mine: tuple[str | None, ...] | None, theirs: tuple[str | None, ...] | None) -> bool:
    """Whether two same-count parameter lists are surely different signatures (a known type differs)."""
    if mine is None or theirs is None or len(mine) != len(theirs):
        return False
    return any(a is not None and b is not None and a != b for a, b in zip(mine, theirs, strict=True))


def _parenthesised(src: str) -> str | None:
    """The text inside the parentheses ``src`` opens with (after blanks), quotes and nesting respected."""
    at = len(src) - len(src.lstrip())
    if src[at:at + 1] != "(":
        return None
    depth, begin = 0, at + 1
    while at < len(src):
        ch = src[at]
        if ch in "\"'":
            end = src.find(ch, at + 1)
            if end < 0:
                return None
            at = end + 1
            continue
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
            if depth == 0:
                return src[begin:at]
        at += 1
    return None


def _top_level(inner: str) -> list[str]:
    """``inner`` split at the commas outside any brackets (``Map<K, V> m, int n`` is two parameters)."""
    if not inner.strip():
        return []
    parts, depth, begin = [], 0, 0
    for at, ch in enumerate(inner):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(inner[begin:at])
            begin = at + 1
    parts.append(inner[begin:])
    return parts


def _erased(parameter: str) -> str | None:
    """``final @NonNull java.util.List<String> items[]`` -> ``List[]``; ``None`` if it is not ``type name``."""
    text = _ANNOTATION.sub(" ", parameter)
    while _GENERIC.search(text):
        text = _GENERIC.sub("", text)
    text = re.sub(r"\s*\.\s*", ".", re.sub(r"\s*\[\s*\]", "[]", text.replace("...", "[]")))
    words = [w for w in text.split() if w != "final"]
    if len(words) != 2:
        return None
    kind, name = words
    dims = name[len(name.rstrip("[]")):]
    simple = kind.rstrip("[]").rsplit(".", 1)[-1]
    if not _IDENTIFIER.fullmatch(simple):
        return None
    return simple + kind[len(kind.rstrip("[]")):] + dims


def _type_variables(source: str) -> set[str]:
    """Every name the file declares as a type parameter (of a class, interface, record, method or constructor)."""
    names: set[str] = set()
    for pattern in (_CLASS_PARAMS, _METHOD_PARAMS):
        for match in pattern.finditer(source):
            params = _angled(source, match.end())
            if params is None:
                continue
            for part in _top_level(params):
                found = _IDENTIFIER.search(_ANNOTATION.sub(" ", part))
                if found is not None:
                    names.add(found.group())
    return names


def _angled(source: str, at: int) -> str | None:
    """The text up to the ``>`` closing the ``<`` just before ``at`` (nested ``<>`` respected; short lists only)."""
    depth = 1
    for end in range(at, min(len(source), at + 400)):
        ch = source[end]
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
            if depth == 0:
                return source[at:end]
        elif ch in ";{(=":
            return None
    return None
