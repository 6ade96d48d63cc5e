"""Members reached through a namespace a barrel re-exports (``export * as ns from "./m"``), for a rename.

``import * as core from "./math"`` then ``core.sum()``: the index links ``sum`` through the namespace import. A
barrel's ``export * as moneyNs from "./money/math"``, imported by name (``import { moneyNs } from "./index"``), is the
same namespace object, but the index leaves ``moneyNs.sum`` unresolved: the barrel's export row has no definition to
point to, so the sweep listed it ``low`` and the applied rename failed tsc (TS2339, QA59 F5). Here the imported name
is followed through the barrels (named re-exports, ``export *``, an ``import * as ns`` the barrel exports) to the
namespace's module; where that module binds the target (its own file, or one re-exporting it by name or through
``export *``), the member is the target: ``high``, as through ``import * as``.
"""

from __future__ import annotations

from codeplane.refactor.facts import Def, FactReader, Import, Ref
from codeplane.refactor.jsimports import is_js

_LIMIT = 100_000
_MAX_HOPS = 8
#: Imports whose ``*`` binds a module's namespace object (``js_require`` binds CommonJS ``exports``, not followed).
_NAMESPACE_KINDS = frozenset({"js_import", "ts_import_type", "js_reexport"})
NAMESPACE_MEMBER = "namespace_member"


def namespace_member_uses(reader: FactReader, target: Def, binders: set[str]) -> list[tuple[Ref, str]]:
    """``ns.name`` where ``ns`` is imported by name from a barrel that re-exports a module binding ``target`` as a
    namespace. ``binders``: the files whose module scope binds the target (its own, re-exporting barrels)."""
    if "." in target.lexical_path or not is_js(target.path):
        return []
    modules: dict[str, str | None] = {}
    found: list[tuple[Ref, str]] = []
    for ref in reader.refs_named(target.name, None, _LIMIT):
        uid = ref.via_import_uid
        if not ref.is_member or ref.target_uid is not None or uid is None or ref.receiver_shape != "obj." \
                or not is_js(ref.path):
            continue
        if uid not in modules:
            fact = next(iter(reader.imports_of([uid])), None)
            modules[uid] = _namespace_of(reader, fact, 0, set()) if fact is not None else None
        module = modules[uid]
        if module is not None and _binds(reader, module, binders, 0, set()):
            found.append((ref, NAMESPACE_MEMBER))
    return found


def _namespace_of(reader: FactReader, fact: Import, depth: int, seen: set[str]) -> str | None:
    """The module whose namespace object the import ``fact`` binds, if it binds one."""
    if fact.imported_name == "*":
        return fact.resolved_path if fact.alias and fact.kind in _NAMESPACE_KINDS else None
    if fact.resolved_path is None or fact.imported_name == "default":
        return None
    return _exported(reader, fact.resolved_path, fact.imported_name, depth + 1, seen)


def _exported(reader: FactReader, path: str, name: str, depth: int, seen: set[str]) -> str | None:
    """The namespace's module that ``path`` exports as ``name``, through its imports and ``export *``."""
    if depth > _MAX_HOPS or path in seen:
        return None
    seen.add(path)
    imports = reader.imports_in_file(path, _LIMIT)
    named = next((i for i in imports if (i.alias if i.imported_name == "*" else i.alias or i.imported_name) == name),
                 None)
    if named is not None:
        return _namespace_of(reader, named, depth, seen)
    for star in imports:
        if star.kind == "js_reexport" and star.imported_name == "*" and star.alias is None \
                and star.resolved_path is not None:
            module = _exported(reader, star.resolved_path, name, depth + 1, seen)
            if module is not None:
                return module
    return None


def _binds(reader: FactReader, path: str, binders: set[str], depth: int, seen: set[str]) -> bool:
    """``path`` binds the target: a binder, or a module that ``export *``s one."""
    if path in binders:
        return True
    if depth > _MAX_HOPS or path in seen:
        return False
    seen.add(path)
    return any(i.kind == "js_reexport" and i.imported_name == "*" and i.alias is None and i.resolved_path is not None
               and _binds(reader, i.resolved_path, binders, depth + 1, seen)
               for i in reader.imports_in_file(path, _LIMIT))
