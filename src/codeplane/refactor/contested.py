"""Imports of a renamed definition whose local name something else binds too.

``try: from ._speedups import loads`` / ``except ImportError: from ._pure import loads`` binds ``loads`` twice
in one scope, so the index binds neither import nor any use of ``loads`` to a definition: the uses are
``other_binding`` candidates, and so is the import itself. Renaming ``_speedups.loads`` by those candidates
goes wrong both ways: renaming the uses breaks the fallback's binding, leaving the import makes it an
``ImportError`` that the ``except`` swallows, a silent switch to the fallback.

The import statement itself is not in doubt (its module resolved to the target's file and it names the
target), so it is rewritten to keep its local name, ``from ._speedups import new as loads``, and every use bound
to that contested local name is accounted as kept (a no-op edit: planned, never written, not a candidate).
Python only: other languages' import facts do not carry the resolved file this check needs.
"""

from __future__ import annotations

from collections.abc import Callable

from codeplane.refactor.facts import Def, FactReader, Import, Ref
from codeplane.refactor.models import Certainty
from codeplane.refactor.spans import SpanEdit

_LIMIT = 100_000

#: ``add(edit, certainty)``: the collector of the structural plan (a kept use is a no-op edit).
AddEdit = Callable[[SpanEdit, Certainty], None]


def _local_name(fact: Import) -> str:
    return fact.alias or fact.imported_name


def contested_imports(reader: FactReader, target: Def, new_name: str, planned: set[tuple[str, int, int]],
                      add: AddEdit) -> None:
    """Plan the aliased import and the kept uses for each contested import of ``target`` (see the module)."""
    if target.language != "python" or "." in target.lexical_path:
        return
    name = target.name
    files = sorted({r.path for r in reader.refs_named(name, None, _LIMIT) if r.role == "IMPORT"})
    for path in files:
        facts = sorted((f for f in reader.imports_in_file(path, _LIMIT)
                        if f.kind == "python_from" and f.imported_name == name), key=lambda f: (f.line, f.column))
        refs = list(reader.refs_in_file(path, _LIMIT))
        tokens = [r for r in refs if r.role == "IMPORT" and r.token == name]
        if len(tokens) != len(facts):
            continue  # the facts and their tokens do not pair up one to one: leave it to the sweep
        for fact, token in zip(facts, tokens, strict=True):
            if fact.alias is not None or fact.resolved_path != target.path or token.target_uid is not None:
                continue
            if (path, token.line, token.column) in planned or not _contested(reader, fact, path, name):
                continue
            add(SpanEdit(path, token.line, token.column, token.end_line, token.end_column, name,
                         f"{new_name} as {name}", "import_keeps_local_name"), "high")
            if token.bind_id is not None:
                _keep_uses(refs, token, add)


def _contested(reader: FactReader, fact: Import, path: str, name: str) -> bool:
    """Whether ``name`` has another binding in the import's scope (another import, or a definition)."""
    rivals = sum(1 for f in reader.imports_in_file(path, _LIMIT)
                 if f.scope_id == fact.scope_id and _local_name(f) == name)
    rivals += sum(1 for d in reader.defs_in_file(path, _LIMIT) if d.name == name and d.scope_id == fact.scope_id)
    return rivals >= 2


def _keep_uses(refs: list[Ref], token: Ref, add: AddEdit) -> None:
    for use in refs:
        if (use.bind_id == token.bind_id and use.token == token.token and use.role not in ("IMPORT", "DEFINITION")
                and not use.is_member):
            add(SpanEdit(use.path, use.line, use.column, use.end_line, use.end_column, use.token, use.token,
                         "kept_by_alias"), "high")
