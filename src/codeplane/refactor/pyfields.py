"""A Python record class's field is also a keyword of its constructor: ``P(name="x")`` for ``name: str`` in a
``@dataclass``, an attrs class, a ``NamedTuple``, a ``TypedDict`` or a pydantic model.

A rename of the field that kept the keyword broke every such call (``TypeError: unexpected keyword argument``), and
the sweep had set the keyword aside as "never a member" (a bare name outside a class body). Here each keyword named
like the field, in a call whose callee is the class itself (a name the index links to the class definition), is a
``medium`` edit: the class's own ``__init__`` or ``__new__`` could take other keywords, which the syntax does not say.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from codeplane.refactor.facts import Def, FactReader, Ref
from codeplane.refactor.spans import SourceText

_LIMIT = 100_000
#: Decorators and bases that make a class's annotated body names its constructor's keywords.
_RECORD_DECORATOR = re.compile(
    r"^\s*@\s*(?:dataclasses\s*\.\s*)?(?:dataclass|pydantic\.dataclasses\.dataclass)\b"
    r"|^\s*@\s*(?P<attrs>(?:attr|attrs)\s*\.\s*(?:s|attrs|define|frozen|mutable|dataclass)\b"
    r"|(?:define|frozen|mutable)\b"
    r"|attrs\b(?!\s*\.))")  # attrs' own ``from ._make import attrs``
#: An attrs field's explicit constructor keyword (``attr.ib(alias="x")``): a rename of the field keeps it.
_ALIAS = re.compile(r"\balias\s*=")
_RECORD_BASE = re.compile(r"\b(?:NamedTuple|TypedDict|BaseModel|BaseSettings)\b")
#: Functions and methods that copy a record with changed fields, by keyword.
_COPIERS = frozenset({"replace", "evolve", "_replace", "copy_with"})
#: The callee right before a call's ``(``: ``P`` or ``mod.P``.
_CALLEE = re.compile(r"([A-Za-z_][\w.]*)\s*\($")


def record_kind(src: SourceText, owner: Def) -> str | None:
    """``"attrs"`` for an attrs class, ``"record"`` for another record class (its annotated fields are constructor
    keywords), ``None`` for a plain class."""
    header = src.line_text(owner.line)
    if "(" in header and _RECORD_BASE.search(header[header.find("("):]):
        return "record"
    indent = len(header) - len(header.lstrip())
    line = owner.line - 1
    while line >= 1:
        text = src.line_text(line)
        stripped = text.strip()
        level = len(text) - len(text.lstrip())
        if level == indent and stripped.startswith("@"):
            match = _RECORD_DECORATOR.match(text)
            if match is not None:
                return "attrs" if match.group("attrs") else "record"
        elif not stripped or not (level > indent or stripped.startswith((")", "]", "#"))):
            break  # above the decorators (a decorator's arguments are deeper, or close its bracket)
        line -= 1
    return None


def is_record_class(src: SourceText, owner: Def) -> bool:
    """Whether ``owner``'s decorators or bases make its annotated fields constructor keywords."""
    return record_kind(src, owner) is not None


def init_keyword(src: SourceText, owner: Def, field: Def, name: str) -> str | None:
    """The constructor keyword of ``owner``'s field ``field`` when it is called ``name``: attrs strips leading
    underscores (``_balance = attr.ib()`` is ``Account(balance=...)``); ``None`` when an ``alias=`` fixes it."""
    if record_kind(src, owner) != "attrs":
        return name
    if _ALIAS.search(src.line_text(field.line)):
        return None
    return name.lstrip("_") or name


def _call_open(text: str, offset: int) -> int | None:
    """The offset of the ``(`` of the call whose argument list holds ``offset`` (None when none does)."""
    depth = 0
    for index in range(offset - 1, max(-1, offset - 4000), -1):
        char = text[index]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            if depth == 0:
                return index if char == "(" else None
            depth -= 1
    return None


def constructor_keywords(reader: FactReader, text_of: Callable[[str], SourceText | None], target: Def,
                         classes: Mapping[str, Def] | None = None,
                         enclosing_class: Callable[[str, int, int], Def | None] | None = None,
                         ) -> list[tuple[Ref, bool]]:
    """Keywords ``target.name=`` (an attrs field's: :func:`init_keyword`) in calls of ``target``'s record class
    (``P(name=...)``, ``mod.P(name=...)``; of a subclass among ``classes``; ``cls(name=...)`` in a method of one of
    them), with True; and in calls of a record copier (``replace(p, name=...)``, ``attr.evolve``, ``p._replace``),
    whose instance's class the syntax does not say, with False."""
    owner = reader.get_def(target.parent_uid) if target.parent_uid else None
    if owner is None or owner.kind != "class" or not target.path.endswith((".py", ".pyi")):
        return []
    own = text_of(owner.path)
    keyword = init_keyword(own, owner, target, target.name) if own is not None else None
    if own is None or keyword is None or not is_record_class(own, owner):
        return []
    classes = classes or {owner.def_uid: owner}
    names = {c.name for c in classes.values()}
    found = []
    for ref in reader.refs_named(keyword, None, _LIMIT):
        src = text_of(ref.path) if ref.receiver_shape == "kwarg=" else None
        opening = _call_open(src.text, src.offset(ref.line, ref.column)) if src is not None else None
        if src is None or opening is None:
            continue
        match = _CALLEE.search(src.text[max(0, opening - 200):opening + 1])
        called = match.group(1).rsplit(".", 1)[-1] if match is not None else ""
        if called in _COPIERS:
            found.append((ref, False))
        if match is not None and match.group(1) == "cls" and enclosing_class is not None:
            # A classmethod's ``cls(...)``: the class itself, or a subclass, which takes the same keywords.
            holder = enclosing_class(ref.path, ref.line, ref.column)
            if holder is not None and holder.def_uid in classes:
                found.append((ref, True))
            continue
        if called not in names:
            continue
        callee_line = src.text.count("\n", 0, opening) + 1
        callee = [r for r in reader.refs_on_line(ref.path, callee_line) if r.token == called]
        if any(r.target_uid in classes for r in callee):  # the class itself, not a same-named one
            found.append((ref, True))
    return found


def renamed_keyword(reader: FactReader, text_of: Callable[[str], SourceText | None], target: Def,
                    new_name: str) -> str:
    """The constructor keyword of ``target``'s field once it is called ``new_name`` (``_funds`` → ``funds`` in an
    attrs class)."""
    owner = reader.get_def(target.parent_uid) if target.parent_uid else None
    src = text_of(owner.path) if owner is not None else None
    keyword = init_keyword(src, owner, target, new_name) if src is not None and owner is not None else None
    return keyword or new_name
