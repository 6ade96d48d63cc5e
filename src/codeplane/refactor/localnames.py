"""Renaming a local variable or parameter picked by position (no definition fact exists for locals).

The index binds every occurrence of a local to one ``LocalBindFact`` (PROVEN, same file), so the plan is
exactly the references sharing that binding — all ``high``. Keyword arguments naming a parameter at call
sites are not bound to it and stay ``low`` candidates (the sweep lists them).
"""

from __future__ import annotations

from codeplane.refactor.assemble import Draft
from codeplane.refactor.facts import Def, FactReader, Ref
from codeplane.refactor.spans import SpanEdit

_LIMIT = 100_000


def local_binding(reader: FactReader, path: str, line: int, column: int | None) -> tuple[Def, list[Ref]] | None:
    """A pseudo-definition for the local bound at the position, and every reference sharing its binding."""
    refs = list(reader.refs_in_file(path, _LIMIT))
    here = next((r for r in refs if r.line == line and r.bind_id is not None and not r.is_member
                 and (column is None or r.column <= column < r.end_column)), None)
    if here is None or (here.target_uid is not None and reader.get_def(here.target_uid) is not None):
        return None
    group = [r for r in refs if r.bind_id == here.bind_id and r.token == here.token]
    first = min((r for r in group if r.role == "DEFINITION"), default=group[0], key=lambda r: (r.line, r.column))
    family = next((f.language for f in reader.files() if f.path == path), None)
    pseudo = Def(def_uid=f"local:{path}:{here.bind_id}", path=path, language=family, kind="local", name=here.token,
                 qualified_name=here.token, lexical_path=here.token, line=first.line, column=first.column,
                 end_line=first.end_line, end_column=first.end_column, name_line=first.line,
                 name_column=first.column, parent_uid=None, scope_id=first.scope_id)
    return pseudo, group


def plan_local(group: list[Ref], new_name: str) -> tuple[Draft, list[tuple[SpanEdit, int | None]]]:
    draft = Draft()
    scopes: list[tuple[SpanEdit, int | None]] = []
    for ref in sorted(group, key=lambda r: (r.line, r.column)):
        edit = SpanEdit(ref.path, ref.line, ref.column, ref.end_line, ref.end_column, ref.token, new_name,
                        "definition" if ref.role == "DEFINITION" else "proven")
        draft.code.append((edit, "high"))
        scopes.append((edit, ref.scope_id))
    return draft, scopes
