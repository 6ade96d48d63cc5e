"""The runtime definition a ``.pyi`` stub's class member describes, when its module re-exports the class.

``attr/__init__.pyi`` declares ``class Attribute`` with ``evolve``; ``attr/__init__.py`` has no such class, it
imports ``Attribute`` from ``attr._make``. Type checkers read the stub's ``attr.Attribute.evolve`` for the runtime
``attr._make.Attribute.evolve``: one method, two index rows under different qualified names. Resolving a rename
target maps the stub's row to the runtime one (:func:`runtime_member`), so the two are one candidate and choosing
either plans the same edits: the runtime plan already renames the stub declaration with its class
(``members.member_family`` takes a stub class named like a family class as the family's description).

Only class members are mapped, and only when the runtime class keeps the stub class's name: that is the case the
runtime plan carries back to the stub. A stub member the chain does not reach stays its own candidate.
"""

from __future__ import annotations

from codeplane.refactor.facts import Def, FactReader

_LIMIT = 100_000
#: Re-export hops followed (``pkg/__init__`` → ``pkg/_impl`` → ...), as ``rename.reexports`` bounds them.
_HOPS = 4
_CLASS_KINDS = frozenset({"class"})


def _top_level(reader: FactReader, path: str, name: str, hops: int) -> Def | None:
    """The module-level definition ``name`` in ``path``, following ``from m import name`` re-exports."""
    own = [d for d in reader.defs_in_file(path, _LIMIT) if d.name == name and d.parent_uid is None]
    if own:
        return own[-1]  # a conditional redefinition: the last one is what the module ends up with
    if hops >= _HOPS:
        return None
    for fact in reader.imports_in_file(path, _LIMIT):
        scope = reader.scope(fact.scope_id) if fact.scope_id is not None else None
        if scope is not None and scope.kind != "file":
            continue  # an import inside a function binds nothing at module level
        # Not aliased: the runtime plan finds the stub class by the runtime class's name.
        if fact.imported_name == name and fact.alias in (None, name) and fact.resolved_path \
                and fact.resolved_path != path:
            found = _top_level(reader, fact.resolved_path, name, hops + 1)
            if found is not None:
                return found
    return None


def runtime_member(reader: FactReader, stub: Def) -> Def | None:
    """The runtime method (or attribute) of the class the stub's module re-exports, which ``stub`` declares."""
    if not stub.path.endswith(".pyi") or stub.parent_uid is None:
        return None
    owner = reader.get_def(stub.parent_uid)
    if owner is None or owner.kind not in _CLASS_KINDS or owner.parent_uid is not None:
        return None
    runtime_path = stub.path[:-1]
    runtime_class = _top_level(reader, runtime_path, owner.name, 0)
    if runtime_class is None or runtime_class.kind not in _CLASS_KINDS or runtime_class.path.endswith(".pyi"):
        return None
    members = [d for d in reader.defs_in_file(runtime_class.path, _LIMIT)
               if d.parent_uid == runtime_class.def_uid and d.name == stub.name]
    return members[-1] if members else None


def reexported_stubs(reader: FactReader, target: Def) -> list[Def]:
    """The module-level ``.pyi`` declarations of ``target`` in other packages' stubs whose runtime module re-exports
    it: ``attr/__init__.pyi``'s ``def assoc`` for ``attr._funcs.assoc``, which ``attr/__init__.py`` imports. Type
    checkers read the stub instead of the runtime module, so the declaration is renamed with the definition (left
    behind, ``attrs/__init__.pyi``'s renamed ``from attr import assoc_changes`` named nothing)."""
    if target.path.endswith(".pyi") or target.parent_uid is not None or not target.path.endswith(".py"):
        return []
    found = []
    for d in reader.defs_named(target.name, _LIMIT):
        if not d.path.endswith(".pyi") or d.parent_uid is not None or d.path[:-1] == target.path:
            continue
        runtime = _top_level(reader, d.path[:-1], target.name, 0)
        if runtime is not None and runtime.def_uid == target.def_uid:
            found.append(d)
    return found
