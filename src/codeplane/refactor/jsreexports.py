"""Whether a name a JavaScript/TypeScript module exports is the target's own name or an alias a barrel gave it.

``export { default as Badge } from './PriceTag'`` makes ``Badge`` a public name of the barrel that only happens to
spell the default-exported function's own name: renaming the function leaves it (the barrel says ``default``), so
its importers (``import { Badge } from '@components'``) must keep it too. The index links them to the function all
the same (the chase goes through ``default``), so a rename asks here before carrying the name into an importer.
"""

from __future__ import annotations

from codeplane.refactor.facts import FactReader, Import

_LIMIT = 100_000
_MAX_HOPS = 8


def aliased_on_the_way(reader: FactReader, imported: Import, name: str, target_path: str) -> bool:
    """``imported`` binds ``name`` from a module that re-exports, under ``name``, something named otherwise
    (``default as name``, ``other as name``), possibly through more barrels on the way to ``target_path``."""
    if imported.imported_name != name or imported.resolved_path is None:
        return False  # the importer's own alias or a whole module: its local name is its own business
    return _aliased(reader, imported.resolved_path, name, target_path, 0, seen=set())


def _aliased(reader: FactReader, path: str, name: str, target_path: str, depth: int, *, seen: set[str]) -> bool:
    if path == target_path or depth > _MAX_HOPS or path in seen:
        return False
    seen.add(path)
    imports = reader.imports_in_file(path, _LIMIT)
    named = [i for i in imports if i.imported_name != "*" and (i.alias or i.imported_name) == name]
    if named:
        hop = named[0]
        if hop.imported_name != name:
            return True
        return hop.resolved_path is not None and _aliased(reader, hop.resolved_path, name, target_path, depth + 1,
                                                          seen=seen)
    return any(_aliased(reader, i.resolved_path, name, target_path, depth + 1, seen=seen) for i in imports
               if i.kind == "js_reexport" and i.imported_name == "*" and i.alias is None
               and i.resolved_path is not None)
