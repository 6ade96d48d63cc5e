"""A Python parameter is also the keyword its callers pass: renaming ``nl`` in ``def echo(msg, nl=True)`` must
rename ``echo("x", nl=False)``, or every such call raises ``TypeError: unexpected keyword argument``.

The index binds the parameter's uses inside the function (a local), not the keywords at call sites: a keyword
belongs to the call's callee. So a keyword named like the parameter is planned with the certainty the index gives
the callee as a use of the function — what renaming the function itself would plan at the callee's token
(``f(...)`` bound to it, ``mod.f(...)``, ``obj.m(...)`` through a typed receiver, ``super().m(...)``, a name
imported under an alias); for ``__init__``, ``Cls(...)`` of its class or of a subclass inheriting it, and
``cls(...)`` in their methods. A call of something spelled like the function that the index does not resolve to
it is a ``low`` candidate; a call the index resolves to another definition is not this parameter's.
Positional-only and ``*``/``**`` parameters take no keyword.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from codeplane.refactor.facts import Def, FactReader, Ref
from codeplane.refactor.lexical import syntax_root
from codeplane.refactor.members import ClassGraph, member_family
from codeplane.refactor.models import Certainty
from codeplane.refactor.rename import plan_structural
from codeplane.refactor.spans import SourceText, SpanEdit

_LIMIT = 100_000
_NAMED = frozenset({"default_parameter", "typed_default_parameter"})
_RANK = {"high": 2, "medium": 1, "low": 0}


def _node_at(root: Any, src: SourceText, line: int, column: int, end_column: int) -> Any:
    text = src.line_text(line)
    start = len(text[:column].encode("utf-8"))
    end = start + len(text[column:end_column].encode("utf-8"))
    return root.descendant_for_point_range((line - 1, start), (line - 1, end))


def keyword_parameter(reader: FactReader, src: SourceText, definition: Ref) -> Def | None:
    """The function whose keyword-passable parameter ``definition`` declares (None for any other local)."""
    root = syntax_root(src.data, src.path)
    node = _node_at(root, src, definition.line, definition.column, definition.end_column) if root else None
    if node is None or node.type != "identifier":
        return None
    holder = node.parent
    if holder is not None and ((holder.type in _NAMED and holder.child_by_field_name("name") == node)
                               or (holder.type == "typed_parameter" and holder.named_children[0] == node)):
        node, holder = holder, holder.parent
    function = holder.parent if holder is not None and holder.type == "parameters" else None
    if function is None or function.type != "function_definition":
        return None
    params = holder.named_children
    if any(p.type == "positional_separator" for p in params[params.index(node) + 1:]):
        return None  # before ``/``: positional only
    name = function.child_by_field_name("name")
    line, column, _, _ = src.node_span(name)
    return next((d for d in reader.defs_at(src.path, line) if d.name_line == line and d.name_column == column
                 and d.kind in ("function", "method")), None)


def _callee(root: Any, src: SourceText, ref: Ref) -> tuple[int, int, str] | None:
    """The callee's own token (``f`` of ``f(...)``, ``m`` of ``a.b.m(...)``) of the call a keyword is passed to."""
    node = _node_at(root, src, ref.line, ref.column, ref.end_column)
    keyword = node.parent if node is not None else None
    args = keyword.parent if keyword is not None and keyword.type == "keyword_argument" else None
    call = args.parent if args is not None and args.type == "argument_list" else None
    function = call.child_by_field_name("function") if call is not None and call.type == "call" else None
    if function is not None and function.type == "attribute":
        function = function.child_by_field_name("attribute")
    if function is None or function.type != "identifier":
        return None
    line, column, end_line, end_column = src.node_span(function)
    return line, column, src.slice(line, column, end_line, end_column)


def _callee_certainties(reader: FactReader, graph: ClassGraph, function: Def,
                        classes: list[Def]) -> dict[tuple[str, int, int], Certainty]:
    """Where the function is used, and how surely: the rename of the function itself (of its classes for
    ``__init__``, whose calls are ``Cls(...)``), planned but never applied. A subclass's construction is at most
    ``medium``: another base of it may come first in its MRO."""
    found: dict[tuple[str, int, int], Certainty] = {}
    for index, callee in enumerate([function, *classes]):
        for edit, planned in plan_structural(reader, graph, callee, callee.name + "_").draft.code:
            key = (edit.path, edit.line, edit.column)
            certainty: Certainty = "medium" if index > 1 and planned == "high" else planned
            if edit.reason != "definition" and _RANK[certainty] > _RANK[found.get(key, "low")]:
                found[key] = certainty
    return found


def _constructed_by(reader: FactReader, graph: ClassGraph, owner: Def) -> list[Def]:
    """``owner`` and the subclasses whose construction runs its ``__init__`` (none defines one in between)."""
    initialised = {d.parent_uid for d in reader.defs_named("__init__", _LIMIT)}
    below = [d for d in graph.descendants(owner) if d.def_uid != owner.def_uid]
    between = {d.def_uid for d in below}
    return [owner] + [d for d in below if d.def_uid not in initialised and not any(
        a.def_uid in initialised and a.def_uid in between for a in graph.ancestors(d))]


def keyword_edits(reader: FactReader, graph: ClassGraph, function: Def, name: str, new_name: str, *,
                  planned: Iterable[tuple[str, int, int]]) -> tuple[list[tuple[SpanEdit, Certainty]], list[str]]:
    """The keywords ``name=`` at calls of ``function``, each with its certainty, and the plan's warnings."""
    keywords = [r for r in reader.refs_named(name, None, _LIMIT) if r.receiver_shape == "kwarg="]
    if not keywords:
        return [], []
    parent = reader.get_def(function.parent_uid) if function.parent_uid else None
    owner = parent if parent is not None and parent.kind == "class" and function.name == "__init__" else None
    classes = _constructed_by(reader, graph, owner) if owner is not None else []
    resolved = {function.def_uid} | {c.def_uid for c in classes}
    overridden = owner is not None and any(d.def_uid != function.def_uid and d.parent_uid in {
        c.def_uid for c in graph.descendants(owner)} for d in reader.defs_named("__init__", _LIMIT))
    calls = _Callees(_callee_certainties(reader, graph, function, classes),
                     {function.name} | {c.name for c in classes} | ({"cls"} if classes else set()), resolved,
                     resolved if classes else None, overridden)
    # Files that call it under another name (``from m import f as g``) hold a reference the index links to it.
    linked = {r.path for uid in resolved for r in reader.refs_to(uid, _LIMIT)} | {c.path for c in classes}
    skip = set(planned)
    edits: list[tuple[SpanEdit, Certainty]] = []
    for path in sorted({r.path for r in keywords}):
        src = graph.text(path)
        if src is None or (path not in linked and not any(c in src.text for c in calls.names - {"cls"})):
            continue  # parsing every file that passes ``name=`` to anything would cost seconds on a big tree
        root = syntax_root(src.data, path)
        for ref in (r for r in keywords if r.path == path and (r.path, r.line, r.column) not in skip):
            callee = _callee(root, src, ref) if root is not None else None
            certainty = _keyword_certainty(graph, callee, ref, calls)
            if callee is None or certainty is None or (owner is None and _runs_override(graph, function, path,
                                                                                          callee)):
                continue
            edit = SpanEdit(path, ref.line, ref.column, ref.end_line, ref.end_column, ref.token, new_name,
                            "keyword_argument" if certainty == "low" else "call_keyword")
            edits.append((edit, certainty))
    return _overridden(graph, function, owner, name, edits)


@dataclass(frozen=True)
class _Callees:
    #: Where the function (or its class, for ``__init__``) is used, and how surely (``_callee_certainties``).
    certainties: dict[tuple[str, int, int], Certainty]
    #: The names a call of it is spelled with (``cls`` for ``__init__``).
    names: set[str]
    #: The definitions a call of it is linked to: the function, and its class for ``__init__``.
    resolved: set[str]
    #: For ``__init__``: the classes whose construction runs it, whose ``cls(...)`` construct one.
    family: set[str] | None
    #: For ``__init__`` overridden in a subclass: ``super().__init__(...)`` there may reach another override.
    overridden_init: bool = False


def _keyword_certainty(graph: ClassGraph, callee: tuple[int, int, str] | None, ref: Ref,
                       calls: _Callees) -> Certainty | None:
    """How surely the keyword ``ref`` passed to ``callee`` is the parameter's (None: it is not)."""
    if callee is None:
        return None
    line, column, token = callee
    if token == "cls" and calls.family is not None:
        holder = graph.enclosing_class(ref.path, ref.line, ref.column)
        # A subclass may run an ``__init__`` of its own: ``medium``; another class's ``cls`` is not ours at all.
        return "medium" if holder is not None and holder.def_uid in calls.family else None
    certainty = calls.certainties.get((ref.path, line, column))
    if certainty == "high" and token == "__init__" and calls.overridden_init:
        return "medium"
    if certainty in ("high", "medium"):
        return certainty
    spelled = [r for r in graph.refs_on(ref.path, line) if r.column == column and r.token == token]
    linked = [r for r in spelled if r.target_uid in calls.resolved]
    if linked:  # a local name for it (an aliased import)
        return "high" if all(r.tier in ("PROVEN", "STRONG") for r in linked) else "medium"
    if token not in calls.names or any(r.target_uid is not None for r in spelled):
        return None  # another function's keyword, or a call the index resolves to another definition
    return "low"


def _runs_override(graph: ClassGraph, function: Def, path: str, callee: tuple[int, int, str]) -> bool:
    """The call runs an override of ``function`` for certain: its receiver is exactly a subclass that overrides it
    (``LoudJob().run(...)``, ``LoudJob.run(job, ...)``, ``self.run(...)`` in LoudJob, ``super().run(...)`` in its
    subclass), whose parameter keeps its name.
    An override below the function's class comes before it in any subclass's MRO."""
    owner = graph.reader.get_def(function.parent_uid) if function.parent_uid else None
    line, column, token = callee
    member = next((r for r in graph.refs_on(path, line) if r.column == column and r.token == token and r.is_member),
                  None)
    if owner is None or member is None:
        return False
    shape = member.receiver_shape or ""
    after_super = any(r.token == "super" and r.end_column == member.column - 3 for r in graph.refs_on(path, line))
    if shape in ("self.", "cls.") or after_super:
        cls = graph.enclosing_class(path, member.line, member.column)
    else:
        typed = graph.receivers.of(member, graph.receiver(member))
        exact = typed is not None and (typed.evidence in ("class", "constructed") or typed.exact)
        cls = typed.cls if typed is not None and exact else None
    if cls is None:
        return False
    below = {d.def_uid for d in graph.descendants(owner)} - {owner.def_uid}
    overriders = {d.parent_uid for d in graph.reader.defs_named(function.name, _LIMIT) if d.parent_uid in below}
    # ``super().run(...)`` starts the lookup after the enclosing class
    return any(c.def_uid in overriders for c in [*([] if after_super else [cls]), *graph.ancestors(cls)])


def _overridden(graph: ClassGraph, function: Def, owner: Def | None, name: str,
                edits: list[tuple[SpanEdit, Certainty]]) -> tuple[list[tuple[SpanEdit, Certainty]], list[str]]:
    """A method with overrides (or overriding another): a call may run another definition, whose parameter keeps
    its name, so no keyword is certain."""
    family = member_family(graph, function) if owner is None else None
    others = sorted({d.qualified_name for d in (family.overrides + family.overridden)} if family else set())
    if not others:
        return edits, []
    capped: list[tuple[SpanEdit, Certainty]] = [(e, "medium" if c == "high" else c) for e, c in edits]
    return capped, [f"{function.qualified_name} overrides or is overridden by {', '.join(others[:5])}: their "
                    f"parameter {name!r} keeps its name, and a call reaching them with {name}= would break"]


def parameter_keywords(reader: FactReader, graph: ClassGraph, local: Def, group: list[Ref],
                       new_name: str) -> tuple[list[tuple[SpanEdit, Certainty]], list[str]]:
    """For a local renamed by position (``localnames.py``) that is a Python function's parameter: its keywords
    at the function's calls, and warnings."""
    src = graph.text(local.path) if local.path.endswith((".py", ".pyi")) else None
    first = next((r for r in group if r.role == "DEFINITION" and (r.line, r.column) == (local.name_line,
                                                                                     local.name_column)), None)
    function = keyword_parameter(reader, src, first) if src is not None and first is not None else None
    if function is None:
        return [], []
    return keyword_edits(reader, graph, function, local.name, new_name,
                         planned={(r.path, r.line, r.column) for r in group})
