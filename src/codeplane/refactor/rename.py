"""Plan a rename of one definition (issue 9 item 1, §8.5, D7).

Only the target definition and what the index binds to it are edited, each at its exact token span:

- the definition site, PROVEN/STRONG references and imports → ``high``; ANCHORED → ``medium``;
- a name imported without alias carries the rename into the importing file (the import's own token and
  every use bound to that import); an aliased import keeps its local name (``from m import old as x``
  becomes ``from m import new as x``, uses of ``x`` are untouched);
- ``__all__`` entries naming the target are export references and move with it; so is ``ns.name`` through a
  barrel's ``export * as ns`` (:mod:`jsnamespaces`), as through ``import * as ns``;
- for a class member, overrides in subclasses are renamed with it and attribute references are judged
  by :mod:`members`; a Java method is one overload, whose calls are told from its overloads' by their argument
  count (:func:`_overload_split`);
- an import of the target whose local name is bound twice (``try``/``except ImportError`` fallbacks, Rust's
  ``use`` under opposite ``#[cfg]``s) keeps it with an alias (:mod:`contested`);
- everything else that spells the old name is left to the sweep (``low`` or a doc edit, with a reason).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from codeplane.refactor import jsstatic, memberkinds, rustimpls
from codeplane.refactor.assemble import Draft
from codeplane.refactor.contested import contested_imports
from codeplane.refactor.facts import Def, FactReader, Ref
from codeplane.refactor.jscommonjs import destructured_keys
from codeplane.refactor.jsimports import is_js
from codeplane.refactor.jsnamespaces import namespace_member_uses
from codeplane.refactor.jsreexports import aliased_on_the_way
from codeplane.refactor.jsshorthand import REQUIRE_KEY
from codeplane.refactor.jsstatements import fragment
from codeplane.refactor.lexical import syntax_root
from codeplane.refactor.members import (
    ClassGraph,
    MemberFamily,
    apart_by_kind,
    classify_member_ref,
    is_stub,
    member_family,
)
from codeplane.refactor.models import Certainty
from codeplane.refactor.modreceivers import receiver_module
from codeplane.refactor.pyfields import constructor_keywords, renamed_keyword
from codeplane.refactor.spans import SpanEdit
from codeplane.refactor.stubtwins import reexported_stubs
from codeplane.refactor.targets import accepts, call_arity, java_overloaded, java_signature, stub_base

_LIMIT = 100_000
_TYPE_KINDS = frozenset({"class", "interface", "enum", "record", "struct"})
_TIER_CERTAINTY: dict[str, Certainty] = {"PROVEN": "high", "STRONG": "high", "ANCHORED": "medium",
                                         "UNKNOWN": "medium"}


@dataclass
class StructuralPlan:
    draft: Draft
    family: MemberFamily | None
    #: Every edit with the scope of the reference it renames (for the shadowing check).
    ref_scopes: list[tuple[SpanEdit, int | None]]
    #: For a Rust or Java field or method: which uses of its name are certainly the other kind (for the sweep).
    other_kind: memberkinds.OtherKind | None = None


def _span(ref: Ref, new_name: str, reason: str) -> SpanEdit:
    return SpanEdit(ref.path, ref.line, ref.column, ref.end_line, ref.end_column, ref.token, new_name, reason)


def _def_site(d: Def, new_name: str, reason: str) -> SpanEdit:
    return SpanEdit(d.path, d.name_line, d.name_column, d.name_line, d.name_column + len(d.name), d.name,
                    new_name, reason)


class _Collector:
    def __init__(self, new_name: str) -> None:
        self.new_name = new_name
        self.edits: dict[tuple[str, int, int], tuple[SpanEdit, Certainty]] = {}
        self.scopes: dict[tuple[str, int, int], int | None] = {}

    def add(self, edit: SpanEdit, certainty: Certainty, scope_id: int | None = None) -> None:
        key = (edit.path, edit.line, edit.column)
        rank = {"high": 2, "medium": 1, "low": 0}
        current = self.edits.get(key)
        if current is None or rank[certainty] > rank[current[1]]:
            self.edits[key] = (edit, certainty)
            self.scopes[key] = scope_id

    def put(self, edit: SpanEdit, certainty: Certainty) -> None:
        """Plan ``edit`` in place of whatever the position had (no scope: it binds nothing new)."""
        key = (edit.path, edit.line, edit.column)
        self.edits[key] = (edit, certainty)
        self.scopes[key] = None

    def add_ref(self, ref: Ref, certainty: Certainty, reason: str) -> None:
        self.add(_span(ref, self.new_name, reason), certainty, ref.scope_id)


def _ref_reason(ref: Ref) -> str:
    if ref.role == "IMPORT":
        return "import"
    if ref.role == "EXPORT":
        return "export"
    return ref.tier.lower()


def _bound_refs(reader: FactReader, targets: Sequence[str], name: str, out: _Collector,
                independent: Callable[[str], bool]) -> list[str]:
    """Add the references bound to ``targets`` (defs or imports) that spell ``name``; return import uids.
    ``independent(import_uid)``: the import binds a name that only spells the target's (a barrel's alias)."""
    imports: list[str] = []
    for uid in targets:
        for ref in reader.refs_to(uid, _LIMIT):
            if ref.token != name:
                continue  # an alias keeps its own name
            if ref.via_import_uid and independent(ref.via_import_uid):
                continue
            if ref.is_member and ref.tier == "ANCHORED":
                out.add_ref(ref, "medium", "anchored")
                continue
            out.add_ref(ref, "high" if ref.role in ("IMPORT", "EXPORT") else _TIER_CERTAINTY.get(ref.tier, "medium"),
                        _ref_reason(ref))
            if ref.role == "IMPORT" and ref.via_import_uid:
                imports.append(ref.via_import_uid)
    return imports


def _import_uses(reader: FactReader, import_uids: Sequence[str], name: str, out: _Collector, *,
                 seen: set[str], independent: Callable[[str], bool]) -> None:
    """Uses of names bound by the given imports, followed through re-exports (bounded)."""
    frontier = [u for u in import_uids if u not in seen]
    hops = 0
    while frontier and hops < 8:
        hops += 1
        seen.update(frontier)
        facts = {i.import_uid: i for i in reader.imports_of(frontier)}
        next_frontier: list[str] = []
        for uid in frontier:
            fact = facts.get(uid)
            if fact is not None and fact.alias not in (None, name):
                continue  # ``import old as x``: the local name stays
            next_frontier += [u for u in _bound_refs(reader, [uid], name, out, independent) if u not in seen]
        frontier = next_frontier


def _independent_aliases(reader: FactReader, target: Def) -> Callable[[str], bool]:
    """Which imports bind a barrel's alias that merely spells ``target``'s name (:mod:`jsreexports`), cached."""
    answers: dict[str, bool] = {}

    def independent(import_uid: str) -> bool:
        if not is_js(target.path):
            return False
        if import_uid not in answers:
            fact = next(iter(reader.imports_of([import_uid])), None)
            answers[import_uid] = fact is not None and aliased_on_the_way(reader, fact, target.name, target.path)
        return answers[import_uid]
    return independent


def _module_receiver_refs(reader: FactReader, graph: ClassGraph, target: Def,
                          binders: set[str]) -> list[tuple[Ref, str]]:
    """``mod.name`` / ``pkg.mod.name`` where the receiver is a module that binds the target (``modreceivers.py``).

    ``binders`` are the files whose module scope binds the target (its own file, re-exporting packages).
    """
    if "." in target.lexical_path:
        return []
    found: list[tuple[Ref, str]] = []
    for ref in reader.refs_named(target.name, None, _LIMIT):
        if not ref.is_member or ref.target_uid is not None:
            continue
        module = receiver_module(reader, graph, ref)
        path = reader.module_file(module) if module else None
        if path is not None and reexports(reader, path, binders, 0):
            found.append((ref, "module_attribute"))
    return found


#: What ends the text before a use of a CommonJS module's own export: ``exports.`` or ``module.exports.``.
_OWN_EXPORTS = re.compile(r"(?<![\w.$])(?:module\s*\.\s*)?exports\s*\.\s*$")


def _commonjs_export_uses(reader: FactReader, graph: ClassGraph, target: Def) -> list[tuple[Ref, str]]:
    """Uses of a CommonJS export defined in place (``exports.f = function ...``, ``module.exports = { f: ... }``).

    Its name is the export's key, so the rename changes the key and every use through the module object goes with
    it: ``util.f`` where ``util`` is the module required (or star-imported) whole, ``exports.f`` in the module
    itself. An export of a declared function (``function f`` … ``{ f: f }``) keeps its key in a rename
    (``jsshorthand.py``): its definition binds a name, and these uses stay as they are."""
    if not _exported_in_place(graph, target):
        return []
    members = [r for r in reader.refs_named(target.name, None, _LIMIT) if r.is_member and r.target_uid is None]
    modules = {i.import_uid for path in sorted({r.path for r in members if r.via_import_uid})
               for i in reader.imports_in_file(path, _LIMIT)
               if i.imported_name == "*" and i.resolved_path == target.path}
    found: list[tuple[Ref, str]] = []
    for ref in members:
        src = graph.text(ref.path) if ref.path == target.path else None
        before = src.line_text(ref.line)[: ref.column] if src is not None else ""  # (columns count from 0)
        if ref.via_import_uid in modules or _OWN_EXPORTS.search(before):
            found.append((ref, "module_member"))
    return found


def _exported_in_place(graph: ClassGraph, target: Def) -> bool:
    """``target`` is a CommonJS export defined in place: its name is the key, it binds no variable."""
    if not is_js(target.path) or "." in target.lexical_path:
        return False
    own = next((r for r in graph.refs_on(target.path, target.name_line)
                if r.role == "DEFINITION" and r.column == target.name_column), None)
    return own is not None and own.bind_id is None


def require_keys(reader: FactReader, graph: ClassGraph, target: Def, new_name: str,
                 paths: Iterable[str]) -> list[SpanEdit]:
    """Keys of ``const { f, f: g } = require('./m')`` in ``paths`` for a CommonJS export ``f`` of ``m`` defined in
    place: the key names the export, so it follows the rename, or ``f`` is undefined at run time. A shorthand
    keeps its local (``{ new: f }``): the file's uses of ``f`` are bound to that local, not to the target."""
    if not _exported_in_place(graph, target):
        return []
    edits: list[SpanEdit] = []
    for path in sorted(p for p in paths if is_js(p)):
        specs = {i.source_literal for i in reader.imports_in_file(path, _LIMIT)
                 if i.kind == "js_require" and i.imported_name == "*" and i.resolved_path == target.path}
        src = graph.text(path) if specs else None
        root = syntax_root(src.data, path) if src is not None else None
        if src is None or root is None:
            continue
        for key, spec in destructured_keys(root, target.name):
            if fragment(spec) not in specs:
                continue
            row, byte_column = key.start_point
            column = src.char_column(row, byte_column)
            new_text = f"{new_name}: {target.name}" if key.type == "shorthand_property_identifier_pattern" \
                else new_name
            edits.append(SpanEdit(path, row + 1, column, row + 1, column + len(target.name), target.name, new_text,
                                  REQUIRE_KEY))
    return edits


def _star_imported_uses(reader: FactReader, target: Def, binders: set[str]) -> list[Ref]:
    """Bare uses of a Python module-level name that nothing in their file binds, in a file that star-imports a
    module binding the target (``from .shapes import *`` then ``Box(4)``): the star import is what binds it.
    ``medium``: whether the star exports it (``__all__``, another star binding the same name) is not checked."""
    if "." in target.lexical_path or not target.path.endswith((".py", ".pyi")):
        return []
    found = []
    stars: dict[str, bool] = {}
    for ref in reader.refs_named(target.name, None, _LIMIT):
        if ref.is_member or ref.target_uid is not None or ref.bind_id is not None or ref.role != "REFERENCE" \
                or ref.path in binders or not ref.path.endswith((".py", ".pyi")):
            continue
        if ref.path not in stars:
            stars[ref.path] = reexports(reader, ref.path, binders, 0)
        if stars[ref.path]:
            found.append(ref)
    return found


def reexports(reader: FactReader, path: str, binders: set[str], depth: int) -> bool:
    """``path`` binds the target: it is a binder, or star-imports (``from m import *``) one (bounded)."""
    if path in binders:
        return True
    if depth >= 4:
        return False
    return any(fact.imported_name == "*" and fact.resolved_path is not None
               and reexports(reader, fact.resolved_path, binders, depth + 1)
               for fact in reader.imports_in_file(path, _LIMIT))


def _same_type(reader: FactReader, target: Def, owners: Sequence[Def]) -> list[Def]:
    """What is named after a Java/C# type besides its declaration: the other ``partial`` declarations of a C#
    type (one qualified name in several files) and every declaration's constructors."""
    if target.kind not in _TYPE_KINDS or not target.path.endswith((".java", ".cs")):
        return []
    named = list(reader.defs_named(target.name, _LIMIT))
    parts = [d for d in named if target.path.endswith(".cs") and d.path.endswith(".cs") and d.kind == target.kind
             and d.qualified_name == target.qualified_name and d not in owners]
    types = {d.def_uid for d in (*owners, *parts)}
    return parts + [d for d in named if d.kind == "constructor" and d.parent_uid in types and d not in owners]


def _shorthand_keys(reader: FactReader, target: Def, new_name: str) -> list[SpanEdit]:
    """A Rust field's shorthand keys (``Version { major }`` in a literal or a pattern) become ``new: major``: the
    token is also a variable, which keeps its name. Only where the literal names the field's own struct, a name
    the repository declares once as a type."""
    owner = reader.get_def(target.parent_uid) if target.kind == "field" and target.parent_uid else None
    if owner is None or not target.path.endswith(".rs"):
        return []
    types = [d for d in reader.defs_named(owner.name, _LIMIT)
             if d.path.endswith(".rs") and d.kind in ("struct", "enum", "union", "type", "trait")]
    if [d.def_uid for d in types] != [owner.def_uid]:
        return []
    edits = []
    for ref in reader.refs_named(target.name, None, _LIMIT):
        shape = ref.receiver_shape or ""
        if not ref.is_member and shape.startswith("short:") and shape[6:].rsplit("::", 1)[-1] == owner.name:
            edits.append(SpanEdit(ref.path, ref.line, ref.column, ref.line, ref.end_column, ref.token,
                                  f"{new_name}: {ref.token}", "shorthand_field"))
    return edits


def _class_body_uses(reader: FactReader, owners: Sequence[Def]) -> list[Ref]:
    """Bare uses of a Python method's name in its own class body (``@width.setter``, ``area = width``): the class
    body is one namespace, so the name there is the member being renamed. A property's ``@width.setter`` left behind
    raises NameError when the class is built, while its ``def`` is renamed."""
    found: list[Ref] = []
    for d in owners:
        if not d.path.endswith((".py", ".pyw")) or d.scope_id is None or d.parent_uid is None:
            continue
        found += [r for r in reader.refs_named(d.name, [d.path], _LIMIT) if not r.is_member
                  and r.role == "REFERENCE" and r.scope_id == d.scope_id and r.bind_id is not None]
    return found


#: Receivers whose declared type the index would have linked the call through, had the overloads not left it open
#: (an unknown receiver, or a class name the index could not settle, stays medium whatever the arity says).
_TYPED_RECEIVERS = frozenset({"declared_receiver", "assigned_receiver", "annotated_receiver"})


def _or_other_overload(other_kind: memberkinds.OtherKind | None,
                       not_ours: set[tuple[str, int, int]]) -> memberkinds.OtherKind | None:
    """``other_kind`` widened to the uses of another Java overload, which the sweep sets aside likewise."""
    if not not_ours:
        return other_kind
    return lambda path, line, column, ref: (path, line, column) in not_ours or (
        other_kind is not None and other_kind(path, line, column, ref))


def _overload_split(reader: FactReader, graph: ClassGraph, family: MemberFamily, owners: Sequence[Def],
                    ) -> tuple[Callable[[Ref], Certainty | None], list[Def]] | None:
    """For a Java method with overloads in its class hierarchy, which the index leaves its calls unbound to: a call
    whose argument count only the target's signature accepts is the target's (``high``), one only another overload
    accepts is not (``None``), and one both may take (or unreadable: ``Cart::add``) is ``low`` (``overload``)."""
    target = family.target
    if not java_overloaded(target):
        return None
    owner = reader.get_def(target.parent_uid) if target.parent_uid else None
    hierarchy = set(family.classes) | ({a.def_uid for a in graph.ancestors(owner)} if owner is not None else set())
    own = {d.def_uid for d in owners}
    others = [d for d in reader.defs_named(target.name, _LIMIT)
              if java_overloaded(d) and d.parent_uid in hierarchy and d.def_uid not in own]
    if not others:
        return None
    mine = java_signature(graph.text(target.path), target)
    theirs = [java_signature(graph.text(d.path), d) for d in others]

    def split(ref: Ref) -> Certainty | None:
        arity = call_arity(graph.text(ref.path), ref)
        if arity is None or mine is None or None in theirs:
            return "low"
        ours, other = accepts(mine, arity), any(s is not None and accepts(s, arity) for s in theirs)
        if ours and not other:
            return "high"
        return "low" if ours else None
    return split, others


def plan_structural(reader: FactReader, graph: ClassGraph, target: Def, new_name: str) -> StructuralPlan:
    """The edits the index can justify for renaming ``target`` (no sweep, no collisions yet)."""
    out = _Collector(new_name)
    out.add(_def_site(target, new_name, "definition"), "high", target.scope_id)
    family = member_family(graph, target)
    not_ours: set[tuple[str, int, int]] = set()  # uses of another Java overload (``_overload_split``)
    # A Java method's overloads share its qualified name but are other methods (``targets.py``).
    siblings = [] if java_overloaded(target) else [
        d for d in reader.defs_named(target.name, _LIMIT) if stub_base(d.path) == stub_base(target.path)
        and d.qualified_name == target.qualified_name and d.def_uid != target.def_uid
        and not apart_by_kind(d, target) and not jsstatic.apart(graph.text, d, target)]
    siblings += [d for d in reexported_stubs(reader, target) if d not in siblings]
    owners = [target, *siblings] + [d for d in (family.overrides if family else []) if d not in siblings]
    owners += _same_type(reader, target, owners)
    for d in owners[1:]:
        reason = ("stub" if is_stub(d.path) else "overload" if d in siblings else "constructor"
                  if d.kind == "constructor" else "partial" if d.qualified_name == target.qualified_name
                  else "override")
        out.add(_def_site(d, new_name, reason), "high", d.scope_id)
    independent = _independent_aliases(reader, target)
    imports = _bound_refs(reader, [d.def_uid for d in owners], target.name, out, independent)
    _import_uses(reader, imports, target.name, out, seen=set(), independent=independent)
    for edit in contested_imports(reader, target, new_name, set(out.edits)):
        out.put(edit, "high")
    if family is None:
        binders = {target.path} | {p for (p, _, _), (e, _) in out.edits.items() if e.reason == "import"}
        for ref, reason in [*_module_receiver_refs(reader, graph, target, binders),
                            *_commonjs_export_uses(reader, graph, target),
                            *namespace_member_uses(reader, target, binders)]:
            if (ref.path, ref.line, ref.column) not in out.edits:
                out.add_ref(ref, "high", reason)
        for ref in _star_imported_uses(reader, target, binders):
            if (ref.path, ref.line, ref.column) not in out.edits:
                out.add_ref(ref, "medium", "star_import")
    else:
        by_arity, others = _overload_split(reader, graph, family, owners) or (None, [])
        not_ours |= {(d.path, d.name_line, d.name_column) for d in others}
        for ref in reader.refs_named(target.name, None, _LIMIT):
            if not ref.is_member or (ref.path, ref.line, ref.column) in out.edits:
                continue
            certainty, reason = classify_member_ref(graph, family, ref)
            if by_arity is not None and reason != "proven":
                split = by_arity(ref)
                if split is None:  # a call of another overload: not the target's (nor the sweep's to propose)
                    not_ours.add((ref.path, ref.line, ref.column))
                    continue
                if split == "low" and certainty != "low":
                    certainty, reason = "low", "overload"
                elif certainty == "medium" and reason in _TYPED_RECEIVERS:
                    certainty = "high"
            out.add_ref(ref, certainty, reason)
        for ref in _class_body_uses(reader, owners):
            out.add_ref(ref, "high", "class_body")
        trait = reader.get_def(target.parent_uid) if target.parent_uid and target.path.endswith(".rs") else None
        if trait is not None and trait.kind == "trait":
            # ``Vec::from_hex`` in a macro's tokens, ``Vec`` an implementor from outside (``std``): medium, as the
            # same path outside a macro is (an inherent ``Vec`` method of the name would win; none is known).
            for ref in rustimpls.implementor_calls(reader, graph.text, trait, target.name):
                out.add_ref(ref, "medium", "implementor_path")
        # ``P(name=...)`` for a dataclass field (medium); ``replace(p, name=...)`` proposed (low: whose ``p``?)
        keyword = renamed_keyword(reader, graph.text, target, new_name)
        for ref, constructed in constructor_keywords(reader, graph.text, target, family.classes,
                                                     graph.enclosing_class):
            if (ref.path, ref.line, ref.column) not in out.edits and ref.token != keyword:
                out.add(_span(ref, keyword, "field_keyword" if constructed else "copy_keyword"),
                        "medium" if constructed else "low", ref.scope_id)
    for edit in _shorthand_keys(reader, target, new_name):
        out.put(edit, "high")
    other_kind = _or_other_overload(memberkinds.other_kind(graph.refs_on, target), not_ours)
    if other_kind is not None:
        # ``b.len()`` when renaming the field ``len`` (or ``b.len`` when renaming the method): the syntax says it is
        # the other member, whatever the index guessed of ``b``; left to the sweep, which sets it aside.
        for key in [k for k in out.edits if other_kind(*k, None)]:
            del out.edits[key], out.scopes[key]
    draft = Draft(symbol=None)
    for key in sorted(out.edits):
        edit, certainty = out.edits[key]
        draft.code.append((edit, certainty))
    ref_scopes = [(out.edits[k][0], out.scopes[k]) for k in sorted(out.edits) if out.edits[k][1] != "low"]
    if family is not None and family.overridden:
        draft.warnings.append(
            f"{target.qualified_name} overrides {', '.join(sorted(d.qualified_name for d in family.overridden))}; "
            "renaming it alone breaks the override")
    return StructuralPlan(draft, family, ref_scopes, other_kind)
