"""Instance attributes as refactor targets: ``self.count = 0`` (Python) or ``this.count = 0`` (JavaScript,
TypeScript) in a method of ``K`` declares ``K.count``.

The index keeps no definition row for an attribute a method assigns (a definition row is a container the test
selection and the semantic diff reason about; an assignment inside ``__init__`` is ``__init__``'s code), only the
assignment as a member reference with the role DEFINITION. So a rename of ``K.count`` found nothing (3007), by
name or by position. Here such a target is made from those assignments: the first one in source order (the
definition site of the plan), owned by the class whose method holds it, so the member planner (``members.py``)
classifies every ``x.count`` as it does a class attribute's (``self.count`` in the family → ``high``).
``index/structural/attributes.py`` finds the same attributes for ``search`` (the same id).

Only when nothing else matches: a class attribute or a method of that name is a definition row already (in
TypeScript a field is declared, so this mostly serves JavaScript, whose classes assign their fields in the
constructor).
"""

from __future__ import annotations

from codeplane.index.structural.attributes import attribute_uid, receiver_of, the_method_scope
from codeplane.refactor.facts import Def, FactReader, Ref, Scope

_LIMIT = 100_000


def _method_scope(reader: FactReader, store: Ref) -> Scope | None:
    """The method scope ``store`` is in, through block scopes (``this.x`` in a constructor's body), when that
    scope's parent is a class body."""
    def scope(scope_id: int | None) -> tuple[str, int | None] | None:
        found = reader.scope(scope_id) if scope_id is not None else None
        return (found.kind, found.parent_id) if found is not None else None
    method = the_method_scope(store.scope_id, scope)
    return reader.scope(method) if method is not None else None


def _owner_of(reader: FactReader, store: Ref) -> Def | None:
    """The class whose method assigns ``self.<name>`` at ``store``: the method's scope is a function whose
    parent scope is a class body, and the class is the innermost class around the line."""
    if _method_scope(reader, store) is None:
        return None
    classes = [d for d in reader.defs_at(store.path, store.line) if d.kind == "class"]
    return max(classes, key=lambda d: (d.line, d.column)) if classes else None


def instance_attributes(reader: FactReader, name: str, owners: list[Def]) -> list[Def]:
    """``owners``' attributes ``name`` assigned on ``self`` in their methods (one target per class)."""
    wanted = {d.def_uid: d for d in owners if d.kind == "class" and receiver_of(d.path) is not None}
    if not wanted:
        return []
    first: dict[str, Ref] = {}
    for ref in sorted(reader.refs_named(name, sorted({d.path for d in wanted.values()}), _LIMIT),
                      key=lambda r: (r.path, r.line, r.column)):
        if not (ref.is_member and ref.role == "DEFINITION" and ref.receiver_shape == receiver_of(ref.path)):
            continue
        owner = _owner_of(reader, ref)
        if owner is not None and owner.def_uid in wanted and owner.def_uid not in first:
            first[owner.def_uid] = ref
    found = []
    for uid, ref in sorted(first.items(), key=lambda item: (item[1].path, item[1].line)):
        owner = wanted[uid]
        method = _method_scope(reader, ref)
        class_scope = method.parent_id if method is not None else None
        found.append(Def(def_uid=attribute_uid(owner.def_uid, name), path=ref.path, language=owner.language,
                         kind="variable", name=name, qualified_name=f"{owner.qualified_name}.{name}",
                         lexical_path=f"{owner.lexical_path}.{name}", line=ref.line, column=ref.column,
                         end_line=ref.end_line, end_column=ref.end_column, name_line=ref.line,
                         name_column=ref.column, parent_uid=owner.def_uid, scope_id=class_scope))
    return found


def attribute_at(reader: FactReader, path: str, line: int, column: int | None) -> list[Def]:
    """The attribute ``self.<name>`` (``this.<name>``) at a position names, in a method of its class (an assignment
    or a use: ``self.count = 0``, ``return self.count``; column on the name, or none)."""
    receiver = receiver_of(path)
    for ref in reader.refs_on_line(path, line):
        if receiver is not None and ref.is_member and ref.receiver_shape == receiver and (
                column is None or ref.column <= column < ref.end_column):
            owner = _owner_of(reader, ref)
            if owner is None:
                continue
            # A class attribute, method or property of that name is the definition (``count = 0`` in the body).
            declared = [d for d in reader.defs_named(ref.token, _LIMIT) if d.parent_uid == owner.def_uid]
            return declared or instance_attributes(reader, ref.token, [owner])
    return []


def current(reader: FactReader, target: Def) -> Def | None:
    """``target`` (an attribute made here) as the snapshot ``reader`` reads it, or None if it is gone."""
    owner = reader.get_def(target.parent_uid) if target.parent_uid else None
    if owner is None:
        return None
    return next((d for d in instance_attributes(reader, target.name, [owner]) if d.def_uid == target.def_uid), None)
