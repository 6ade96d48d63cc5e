"""Python, pass 2: resolve every name occurrence to its binding scope, exactly as the compiler's symbol table
does, and turn pass-1 records into fact rows.

A reference is PROVEN when its binding is CERTAIN: one ``(scope, name)`` binding found by static scoping.
The only uncertainty Python leaves at this level is a module with ``from x import *`` (any module name may
be rebound by it), so module bindings there are UNCERTAIN and their references stay UNKNOWN. A binding's
target is a definition only when every binding site agrees (one ``def``/``class``/import, or only plain
assignments of a module/class variable); otherwise the binding is still certain but points at nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from codeplane.index.structural.adapters.python_defs import IMPORT_CTX
from codeplane.index.structural.adapters.python_walk import (
    EXPORTED,
    IMPORTED,
    KWARG,
    MEMBER,
    STORE,
    PendingDef,
    Scope,
    Site,
    Walk,
)
from codeplane.index.structural.facts import (
    ANCHORED,
    CERTAIN,
    DEF_IN_SCOPE,
    DEFINITION,
    EXPORT,
    IMPORT,
    IMPORT_ALIAS,
    LOCAL_ASSIGN,
    PARAM,
    PROVEN,
    REFERENCE,
    TARGET_DEF,
    TARGET_IMPORT,
    TARGET_UNKNOWN,
    UNCERTAIN,
    UNKNOWN,
    BindRow,
    DefRow,
    ExportRow,
    RefRow,
    ThunkRow,
)

_new_row = tuple.__new__
_REASONS = {"def": DEF_IN_SCOPE, "class": DEF_IN_SCOPE, "import": IMPORT_ALIAS, "param": PARAM}


class Resolver:
    """Static scoping over pass-1 scopes (language reference 4.2.2)."""

    def __init__(self, walk: Walk) -> None:
        self.scopes = walk.scopes
        self.local: list[set[str]] = [
            {n for n in s.sites if n not in s.globals and n not in s.nonlocals} for s in walk.scopes]
        self.effective: list[dict[str, list[Site]]] = [{} for _ in walk.scopes]
        for index, scope in enumerate(walk.scopes):
            for name, sites in scope.sites.items():
                target = self._declared_target(index, name)
                if target is not None:
                    self.effective[target].setdefault(name, []).extend(sites)
        for table in self.effective:
            for sites in table.values():
                sites.sort(key=lambda s: (s.line, s.col))
        self._memo: dict[tuple[int, str], int | None] = {}

    def _declared_target(self, scope: int, name: str) -> int | None:
        current = self.scopes[scope]
        if name in current.globals:
            return 0
        if name in current.nonlocals:
            return self._enclosing_function_binding(scope, name)
        return scope

    def _global(self, name: str) -> int | None:
        return 0 if name in self.effective[0] else None

    def _enclosing_function_binding(self, scope: int, name: str) -> int | None:
        parent = self.scopes[scope].parent
        while parent >= 0:
            outer = self.scopes[parent]
            if outer.kind == "class":
                parent = outer.parent
                continue
            if outer.kind == "file":
                return None
            if name in outer.nonlocals:
                return self._enclosing_function_binding(parent, name)
            if name in outer.globals:
                return None
            if name in self.local[parent]:
                return parent
            parent = outer.parent
        return None

    def resolve(self, scope: int, name: str) -> int | None:
        """The scope whose binding of ``name`` an occurrence in ``scope`` denotes (None: builtin/undefined)."""
        key = (scope, name)
        if key in self._memo:
            return self._memo[key]
        current = self.scopes[scope]
        result: int | None
        if name in current.globals or scope == 0:
            result = self._global(name)
        elif name in current.nonlocals:
            result = self._enclosing_function_binding(scope, name)
        elif name in self.local[scope]:
            result = scope
        else:
            result = self._free(scope, name)
        self._memo[key] = result
        return result

    def _free(self, scope: int, name: str) -> int | None:
        # Class scopes are invisible to the scopes nested in them.
        parent = self.scopes[scope].parent
        while parent >= 0:
            outer = self.scopes[parent]
            if outer.kind == "class":
                parent = outer.parent
                continue
            if outer.kind == "file" or name in outer.globals:
                return self._global(name)
            if name in outer.nonlocals:
                return self._enclosing_function_binding(parent, name)
            if name in self.local[parent]:
                return parent
            parent = outer.parent
        return None


def build_rows(walk: Walk) -> tuple[list[DefRow], list[BindRow], list[RefRow], list[ExportRow], list[ThunkRow]]:
    resolver = Resolver(walk)
    defs = list(walk.defs)
    bind_index: dict[tuple[int, str], int] = {}
    binds: list[BindRow] = []
    star = walk.scopes[0].star_import
    for scope_index, table in enumerate(resolver.effective):
        for name in sorted(table):
            sites = table[name]
            target_kind, target_uid = _target(walk, defs, scope_index, name, sites)
            certainty = UNCERTAIN if scope_index == 0 and star else CERTAIN
            bind_index[(scope_index, name)] = len(binds)
            binds.append(_new_row(BindRow, (scope_index, name, target_kind, target_uid, certainty,
                                            _REASONS.get(sites[0].kind, LOCAL_ASSIGN))))
    refs = _refs(walk, resolver, binds, bind_index)
    exports = _exports(walk, resolver, binds, bind_index)
    thunks = [ThunkRow("REEXPORT_ALL", row.import_uid, row.source_literal or "", (), (), "python_star_import")
              for row in walk.star_imports if row.scope == 0]
    rows = [DefRow(d.uid, d.kind, d.name, d.lexical_path, *d.span, d.name_line, d.name_col, d.signature,
                   d.display_name, d.parent_uid, d.scope) for d in defs]
    rows.sort(key=lambda d: (d.start_line, d.start_col, d.kind))
    return rows, binds, refs, exports, thunks


def _target(walk: Walk, defs: list[PendingDef], scope: int, name: str, sites: list[Site]) -> tuple[str, str | None]:
    if len(sites) == 1 and sites[0].kind in ("def", "class"):
        return TARGET_DEF, sites[0].uid
    if len(sites) == 1 and sites[0].kind == "import":
        return TARGET_IMPORT, sites[0].uid
    if len(sites) > 1 and all(s.kind == "def" for s in sites) and all(s.uid in walk.overloads for s in sites[:-1]):
        # ``@overload`` signatures, then the implementation (in a stub, one more signature): one function.
        return TARGET_DEF, sites[-1].uid
    owner = walk.scopes[scope]
    first = sites[0]
    if owner.kind in ("file", "class") and first.stmt is not None and all(s.kind == "assign" for s in sites):
        # A module or class variable: one DefFact stands for the name, at its first assignment.
        lexical = f"{owner.prefix}.{name}" if owner.prefix else name
        uid = walk.uids.def_uid("variable", lexical, "")
        defs.append(PendingDef("variable", name, lexical, first.stmt, first.line, first.col, "", name,
                               owner.def_uid, scope, uid))
        return TARGET_DEF, uid
    return TARGET_UNKNOWN, None


def _bound(bind: BindRow, index: int) -> tuple[str, str, int, str | None, str | None]:
    """(tier, certainty, bind, target_uid, via_import_uid) of a reference to ``bind``."""
    if bind.certainty != CERTAIN:
        return UNKNOWN, UNCERTAIN, index, None, None
    via = bind.target_uid if bind.target_kind == TARGET_IMPORT else None
    return PROVEN, CERTAIN, index, bind.target_uid, via


def _refs(walk: Walk, resolver: Resolver, binds: list[BindRow], bind_index: dict[tuple[int, str], int],
          ) -> list[RefRow]:
    # One row per occurrence (most of a file's facts): rows are built with ``tuple.__new__``, skipping the
    # NamedTuple's Python-level ``__new__``, and attribute lookups are hoisted out of the loop. What a name
    # resolves to depends only on its scope and spelling, so it is worked out once per pair (``_resolver``).
    refs: list[RefRow] = []
    append = refs.append
    resolved_via: list[str | None] = []
    scopes = walk.scopes
    memo: dict[tuple[int, str], _Bound | None] = {}
    resolved = _resolver(scopes, resolver, binds, bind_index)
    for scope, name, span, kind, ctx, receiver, shape, import_uid in walk.occurrences:
        via: str | None = None
        if kind == MEMBER:
            receiver_via = resolved_via[receiver] if receiver >= 0 else None
            role = DEFINITION if ctx == STORE else REFERENCE
            append(_new_row(RefRow, (scope, name, *span, role, ANCHORED, UNCERTAIN, -1, None, receiver_via, True,
                                     shape)))
        elif kind == KWARG:
            append(_new_row(RefRow, (scope, name, *span, REFERENCE, UNKNOWN, UNCERTAIN, -1, None, None, False,
                                     shape)))
        elif kind == IMPORTED:
            append(_new_row(RefRow, (scope, name, *span, IMPORT, UNKNOWN, UNCERTAIN, -1, None, import_uid, False,
                                     None)))
        else:
            if kind == EXPORTED:
                role = EXPORT
                memo_key = (-1, name)
            else:
                role = (DEFINITION if ctx == STORE else IMPORT if ctx == IMPORT_CTX else REFERENCE)
                memo_key = (scope, name)
            if memo_key in memo:
                bound = memo[memo_key]
            else:
                bound = memo[memo_key] = resolved(scope, name, kind)
            if bound is None:
                append(_new_row(RefRow, (scope, name, *span, role, UNKNOWN, UNCERTAIN, -1, None, None, False, None)))
            else:
                tier, certainty, bind, target_uid, via = bound
                append(_new_row(RefRow, (scope, name, *span, role, tier, certainty, bind, target_uid, via, False,
                                         None)))
        resolved_via.append(via)
    return refs


_Bound = tuple[str, str, int, str | None, str | None]


def _resolver(scopes: list[Scope], resolver: Resolver, binds: list[BindRow], bind_index: dict[tuple[int, str], int],
              ) -> Callable[[int, str, int], _Bound | None]:
    def resolved(scope: int, name: str, kind: int) -> _Bound | None:
        """What a name occurrence of ``kind`` in ``scope`` is bound to (``_bound``), None when nothing binds it."""
        if kind == EXPORTED:
            key = name
            target = resolver.resolve(0, key)
        else:
            owner = scopes[scope]
            key = owner.key(name) if owner.mangle else name
            target = resolver.resolve(scope, key)
        index = bind_index.get((target, key), -1) if target is not None else -1
        return _bound(binds[index], index) if index >= 0 else None

    return resolved


def _exports(walk: Walk, resolver: Resolver, binds: list[BindRow], bind_index: dict[tuple[int, str], int],
             ) -> list[ExportRow]:
    listed = set(walk.all_names) if walk.all_seen and walk.all_literal else set()
    rows: list[ExportRow] = []
    for name in sorted(resolver.effective[0]):
        bind = binds[bind_index[(0, name)]]
        evidence = ("__all__literal" if name in listed else "default_module" if not name.startswith("_")
                    else "module_private")
        known = bind.target_kind != TARGET_UNKNOWN and bind.certainty == CERTAIN
        rows.append(ExportRow(name, bind.target_uid if bind.target_kind == TARGET_DEF else None,
                              bind.target_uid if bind.target_kind == TARGET_IMPORT else None,
                              CERTAIN if known else UNCERTAIN, evidence))
    for name in sorted(listed - set(resolver.effective[0])):
        rows.append(ExportRow(name, None, None, UNCERTAIN, "__all__literal"))
    return rows
