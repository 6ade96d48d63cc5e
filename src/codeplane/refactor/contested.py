"""Imports of a renamed definition whose local name something else binds too.

``try: from ._speedups import loads`` / ``except ImportError: from ._pure import loads`` binds ``loads`` twice
in one scope, so the index binds neither import nor any use of ``loads`` to a definition: the uses are
``other_binding`` candidates, and so is the import itself. Renaming ``_speedups.loads`` by those candidates
goes wrong both ways: renaming the uses breaks the fallback's binding, leaving the import makes it an
``ImportError`` that the ``except`` swallows, a silent switch to the fallback.

The import statement itself is not in doubt (its module resolved to the target's file and it names the
target), so it is rewritten to keep its local name, ``from ._speedups import new as loads``, and every use bound
to that contested local name is accounted as kept (a no-op edit: planned, never written, not a candidate).
Rust's ``use`` under opposite ``#[cfg]``s is the same case: ``use semver::VersionReq`` becomes
``use semver::Requirement as VersionReq`` and code compiled under either ``cfg`` keeps its meaning.
"""

from __future__ import annotations

from collections.abc import Sequence

from codeplane.refactor.facts import Def, FactReader, Import, Ref
from codeplane.refactor.spans import SpanEdit

_LIMIT = 100_000


def _local_name(fact: Import) -> str:
    return fact.alias or fact.imported_name


def contested_imports(reader: FactReader, target: Def, new_name: str,
                      planned: set[tuple[str, int, int]]) -> list[SpanEdit]:
    """The aliased imports and the kept uses for each contested import of ``target`` (see the module); they
    replace whatever the plan had at those positions."""
    if "." in target.lexical_path or target.language not in ("python", "rust"):
        return []
    name = target.name
    out: list[SpanEdit] = []
    for path, fact, token in _imports_of(reader, target, planned):
        if fact.alias is not None or not _contested(reader, fact, path, name):
            continue
        out.append(SpanEdit(path, token.line, token.column, token.end_line, token.end_column, name,
                            f"{new_name} as {name}", "import_keeps_local_name"))
        out += _kept_uses(reader.refs_named(name, [path], _LIMIT), token)
    return out


def _imports_of(reader: FactReader, target: Def, planned: set[tuple[str, int, int]]) -> list[tuple[str, Import, Ref]]:
    """(file, import fact, its token) for the target's imports: Rust's are linked (their token names its
    ``use`` even where the name is bound twice); Python's resolve a module to the target's file, their token
    unlinked because the name is bound twice."""
    name = target.name
    if target.language == "rust":
        tokens = [r for r in reader.refs_to(target.def_uid, _LIMIT)
                  if r.role == "IMPORT" and r.token == name and r.via_import_uid is not None]
        uses = {f.import_uid: f for f in reader.imports_of(sorted({r.via_import_uid or "" for r in tokens}))
                if f.kind == "rust_use"}
        return [(r.path, uses[r.via_import_uid or ""], r) for r in tokens if (r.via_import_uid or "") in uses]
    found: list[tuple[str, Import, Ref]] = []
    by_path: dict[str, list[Ref]] = {}
    for ref in reader.import_refs_named(name, _LIMIT):  # sorted by (path, line, column)
        by_path.setdefault(ref.path, []).append(ref)
    for path, tokens in sorted(by_path.items()):
        facts = sorted((f for f in reader.imports_in_file(path, _LIMIT)
                        if f.kind == "python_from" and f.imported_name == name), key=lambda f: (f.line, f.column))
        if len(tokens) != len(facts):
            continue  # the facts and their tokens do not pair up one to one: leave it to the sweep
        found += [(path, fact, token) for fact, token in zip(facts, tokens, strict=True)
                  if fact.resolved_path == target.path and token.target_uid is None
                  and (path, token.line, token.column) not in planned]
    return found


def _contested(reader: FactReader, fact: Import, path: str, name: str) -> bool:
    """Whether ``name`` has another binding in the import's scope (another import, or a definition)."""
    rivals = sum(1 for f in reader.imports_in_file(path, _LIMIT)
                 if f.scope_id == fact.scope_id and _local_name(f) == name)
    rivals += sum(1 for d in reader.defs_in_file(path, _LIMIT) if d.name == name and d.scope_id == fact.scope_id)
    return rivals >= 2


def _kept_uses(refs: Sequence[Ref], token: Ref) -> list[SpanEdit]:
    """Uses the contested name binds: Python binds them to its ambiguous binding, Rust to nothing."""
    return [SpanEdit(use.path, use.line, use.column, use.end_line, use.end_column, use.token, use.token,
                     "kept_by_alias") for use in refs
            if use.token == token.token and use.role not in ("IMPORT", "DEFINITION") and not use.is_member
            and use.target_uid is None and use.bind_id == token.bind_id]
