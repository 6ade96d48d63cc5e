"""``with Cls(...) as x:``: the class of ``x``, from syntax, when ``Cls.__enter__`` gives the instance back.

``x`` is what ``__enter__`` returns, not the object constructed: most context managers return ``self``
(``requests.Session``, files, locks), but some return something else (a connection's cursor). So the class is
claimed only when every ``__enter__`` (``__aenter__`` for ``async with``) on the class's repository chain is
``return self``, or none is defined there and no base from outside the repository could define one; anything
else leaves ``x`` untyped. Only a statement written on one line is read (``with a() as x, B() as y:``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from codeplane.refactor.facts import Def, FactReader
from codeplane.refactor.spans import SourceText

_LIMIT = 1_000
#: The end of the text before a ``with`` target: the context expression's closing ``)`` and ``as``.
_AS = re.compile(r"\)\s*as\s+$")
_WITH = re.compile(r"\s*(async\s+)?with\b")
_CALLEE = re.compile(r"([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*$")
_RETURN = re.compile(r"^\s*return\b\s*(.*?)\s*(?:#.*)?$")
#: Bases that define no ``__enter__`` or one returning ``self`` (``contextlib.AbstractContextManager``).
_HARMLESS_BASES = frozenset({"object", "ABC", "Generic", "Protocol", "AbstractContextManager",
                             "AbstractAsyncContextManager", "ContextDecorator", "AsyncContextDecorator"})


@dataclass(frozen=True)
class EnteredCall:
    """The call before ``as``: its callee as written (``mod.Cls``) at (line, column), and whether it is the whole
    context expression (``with Cls() as x``, not ``with a or Cls() as x``)."""

    line: int
    column: int
    dotted: str
    whole: bool
    is_async: bool


def entered_call(src: SourceText, line: int, column: int) -> EnteredCall | None:
    """The call whose result a ``with`` statement binds to the name at (line, column), if that is one."""
    text = src.line_text(line)
    statement = _WITH.match(text)
    before = text[:column]
    end = _AS.search(before)
    if statement is None or end is None:
        return None
    depth = 0
    for index in range(end.start(), statement.end() - 1, -1):
        depth += before[index] == ")"
        depth -= before[index] == "("
        if depth == 0:
            callee = _CALLEE.search(before[statement.end():index])
            if callee is None:
                return None
            start = statement.end() + callee.start(1)
            lead = before[statement.end():start].strip()
            return EnteredCall(line, start, callee.group(1), lead in ("", ",") or lead.endswith(","),
                               statement.group(1) is not None)
    return None


def enters_itself(reader: FactReader, text: Callable[[str], SourceText | None],
                  ancestors: Callable[[Def], list[Def]], bases: Callable[[Def], list[Def]], cls: Def,
                  *, is_async: bool) -> bool | None:
    """Whether ``with cls(...) as x`` binds the instance: True when every ``__enter__`` of the class's chain
    returns ``self``, False when none is defined there (nor can a base outside the repository define one), None
    when one may return something else (the binding's class is then unknown)."""
    chain = [cls, *ancestors(cls)]
    if any(_outside_bases(text, c, bases(c)) for c in chain):
        return None
    ids = {c.def_uid for c in chain}
    name = "__aenter__" if is_async else "__enter__"
    enters = [d for d in reader.defs_named(name, _LIMIT) if d.parent_uid in ids]
    if not enters:
        return False
    return True if all(_returns_self(text, d) for d in enters) else None


def _returns_self(text: Callable[[str], SourceText | None], method: Def) -> bool:
    src = text(method.path)
    if src is None:
        return False
    returns = [m.group(1) for number in range(method.line, method.end_line + 1)
               if (m := _RETURN.match(src.line_text(number)))]
    return bool(returns) and all(r == "self" for r in returns)


def _outside_bases(text: Callable[[str], SourceText | None], cls: Def, known: list[Def]) -> bool:
    """``cls``'s header names a base that is not a repository class the index linked (nor a harmless one)."""
    src = text(cls.path)
    if src is None:
        return True
    header = " ".join(src.line_text(n) for n in range(cls.name_line, min(cls.end_line, cls.name_line + 8) + 1))
    header = header[header.find(cls.name) + len(cls.name):] if cls.name in header else header
    if not header.lstrip().startswith("("):
        return False
    written, depth = [""], 0
    for char in header[header.find("(") + 1:]:
        if char == ")" and depth == 0:
            break
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            written.append("")
        else:
            written[-1] += char
    names = {k.name for k in known}
    for base in (w.strip() for w in written):
        if not base or "=" in base or base.startswith("*"):
            continue
        last = base.split("[", 1)[0].rsplit(".", 1)[-1].strip()
        if last not in _HARMLESS_BASES and last not in names:
            return True
    return False
