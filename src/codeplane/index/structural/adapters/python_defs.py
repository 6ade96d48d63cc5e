"""Python, pass 1 continued: definitions, parameters, imports and ``match`` patterns.

Registers its handlers into ``python_walk.HANDLERS`` on import.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from codeplane.index.structural.adapters.python_walk import (
    HANDLERS,
    IMPORTED,
    KWARG,
    LOAD,
    MEMBER,
    NAME,
    STORE,
    PendingDef,
    Walk,
)
from codeplane.index.structural.identity import signature_hash

#: ``ctx`` of an occurrence that is both an import's binding and its cross-file reference.
IMPORT_CTX = 3
_DISPLAY_MAX = 200


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _DISPLAY_MAX else flat[: _DISPLAY_MAX - 1] + "…"


def _define(w: Walk, node: Node, scope: int, kind: str, *, signature: str, display: str) -> PendingDef | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = w.text(name_node)
    outer = w.scopes[scope]
    lexical = f"{outer.prefix}.{name}" if outer.prefix else name
    sig = signature_hash(signature)
    pending = PendingDef(kind, name, lexical, w.span(node), *w.span(name_node)[:2], sig,
                         _short(display), outer.def_uid, scope, w.uids.def_uid(kind, lexical, sig))
    w.defs.append(pending)
    occurrence = w.occur(name_node, scope, NAME, STORE, name=name)
    w.site(scope, name, "class" if kind == "class" else "def", name_node, occurrence=occurrence, uid=pending.uid)
    return pending


def _overload(w: Walk, node: Node) -> bool:
    """Whether the function is decorated ``@overload`` (``@typing.overload``, ``@t.overload``)."""
    parent = node.parent
    if parent is None or parent.type != "decorated_definition":
        return False
    return any(child.type == "decorator" and _OVERLOAD.fullmatch(w.text(child).lstrip("@").strip())
               for child in parent.named_children)


_OVERLOAD = re.compile(r"(?:[A-Za-z_]\w*\s*\.\s*)*overload")


def visit_def(w: Walk, node: Node, scope: int, ctx: int) -> None:
    params = node.child_by_field_name("parameters")
    ret = node.child_by_field_name("return_type")
    params_text = w.text(params) if params is not None else "()"
    ret_text = f" -> {w.text(ret)}" if ret is not None else ""
    is_async = node.child_count > 0 and node.children[0].type == "async"
    name_node = node.child_by_field_name("name")
    name = w.text(name_node) if name_node is not None else "?"
    kind = "method" if w.scopes[scope].kind == "class" else "function"
    display = f"{'async ' if is_async else ''}def {name}{params_text}{ret_text}"
    pending = _define(w, node, scope, kind, signature=params_text + ret_text, display=display)
    if pending is not None and _overload(w, node):
        w.overloads.add(pending.uid)
    inner = w.new_scope("function", scope, node, pending.lexical_path if pending else w.scopes[scope].prefix,
                        pending.uid if pending else None)
    visit_parameters(w, params, scope, inner)
    w.push(ret, scope)
    w.push(node.child_by_field_name("type_parameters"), scope)
    w.push(node.child_by_field_name("body"), inner)


def visit_class(w: Walk, node: Node, scope: int, ctx: int) -> None:
    bases = node.child_by_field_name("superclasses")
    bases_text = w.text(bases) if bases is not None else ""
    name_node = node.child_by_field_name("name")
    name = w.text(name_node) if name_node is not None else "?"
    pending = _define(w, node, scope, "class", signature=bases_text, display=f"class {name}{bases_text}")
    inner = w.new_scope("class", scope, node, pending.lexical_path if pending else w.scopes[scope].prefix,
                        pending.uid if pending else None)
    w.push(bases, scope)
    w.push(node.child_by_field_name("type_parameters"), scope)
    w.push(node.child_by_field_name("body"), inner)


def visit_lambda(w: Walk, node: Node, scope: int, ctx: int) -> None:
    inner = w.new_scope("lambda", scope, node, w.scopes[scope].prefix, w.scopes[scope].def_uid)
    visit_parameters(w, node.child_by_field_name("parameters"), scope, inner)
    w.push(node.child_by_field_name("body"), inner)


def visit_parameters(w: Walk, params: Node | None, outer: int, inner: int) -> None:
    """Parameter names bind in the function; defaults and annotations are evaluated outside it."""
    if params is None:
        return
    for param in params.named_children:
        kind = param.type
        if kind in ("default_parameter", "typed_default_parameter"):
            _param(w, param.child_by_field_name("name"), inner)
            w.push(param.child_by_field_name("type"), outer)
            w.push(param.child_by_field_name("value"), outer)
        elif kind == "typed_parameter":
            for child in param.named_children:
                if child.type == "type":
                    w.push(child, outer)
                else:
                    _param(w, child, inner)
        else:
            _param(w, param, inner)


def _param(w: Walk, node: Node | None, inner: int) -> None:
    if node is None:
        return
    if node.type == "identifier":
        name = w.text(node)
        w.site(inner, name, "param", node, occurrence=w.occur(node, inner, NAME, STORE, name=name))
    elif node.type in ("list_splat_pattern", "dictionary_splat_pattern", "tuple_pattern", "parenthesized_expression"):
        for child in node.named_children:
            _param(w, child, inner)


def visit_import(w: Walk, node: Node, scope: int, ctx: int) -> None:
    if node.type == "import_statement":
        for clause in node.children_by_field_name("name"):
            _plain_import(w, node, clause, scope)
        return
    if node.type == "future_import_statement":
        source = "__future__"
    else:
        module = node.child_by_field_name("module_name")
        source = "".join(w.text(module).split()) if module is not None else ""
    for child in node.named_children:
        if child.type == "wildcard_import":
            row = w.add_import(node, scope, "*", alias=None, source=source, kind="python_from")
            w.scopes[scope].star_import = True
            w.star_imports.append(row)
    for clause in node.children_by_field_name("name"):
        alias_node = clause.child_by_field_name("alias") if clause.type == "aliased_import" else None
        name_node = clause.child_by_field_name("name") if clause.type == "aliased_import" else clause
        if name_node is None:
            continue
        name = "".join(w.text(name_node).split())
        alias = w.text(alias_node) if alias_node is not None else None
        row = w.add_import(node, scope, name, alias=alias, source=source, kind="python_from")
        if alias_node is None:
            occurrence = w.occur(name_node, scope, NAME, IMPORT_CTX, name=name, import_uid=row.import_uid)
            w.site(scope, name, "import", name_node, occurrence=occurrence, uid=row.import_uid)
        else:
            w.occur(name_node, scope, IMPORTED, name=name, import_uid=row.import_uid)
            occurrence = w.occur(alias_node, scope, NAME, STORE, name=alias, import_uid=row.import_uid)
            w.site(scope, alias or name, "import", alias_node, occurrence=occurrence, uid=row.import_uid)


def _plain_import(w: Walk, node: Node, clause: Node, scope: int) -> None:
    alias_node = clause.child_by_field_name("alias") if clause.type == "aliased_import" else None
    dotted = clause.child_by_field_name("name") if clause.type == "aliased_import" else clause
    if dotted is None:
        return
    parts = [c for c in dotted.named_children if c.type == "identifier"]
    full = ".".join(w.text(p) for p in parts)
    if alias_node is not None:
        alias = w.text(alias_node)
        row = w.add_import(node, scope, full, alias=alias, source=full, kind="python_import")
        occurrence = w.occur(alias_node, scope, NAME, STORE, name=alias, import_uid=row.import_uid)
        w.site(scope, alias, "import", alias_node, occurrence=occurrence, uid=row.import_uid)
    elif parts:
        # ``import a.b.c`` binds ``a`` (the top package), not ``a.b.c``.
        row = w.add_import(node, scope, full, alias=None, source=full, kind="python_import")
        top = w.text(parts[0])
        occurrence = w.occur(parts[0], scope, NAME, IMPORT_CTX, name=top, import_uid=row.import_uid)
        w.site(scope, top, "import", parts[0], occurrence=occurrence, uid=row.import_uid)


def visit_case_pattern(w: Walk, node: Node, scope: int, ctx: int) -> None:
    _pattern(w, node, scope)


def _pattern(w: Walk, node: Node, scope: int) -> None:
    kind = node.type
    if kind == "dotted_name":
        ids = [c for c in node.named_children if c.type == "identifier"]
        if len(ids) == 1:
            _capture(w, ids[0], scope)
        else:
            _value(w, node, scope)
    elif kind == "identifier":
        _capture(w, node, scope)
    elif kind == "class_pattern":
        for index, child in enumerate(node.named_children):
            if index == 0 and child.type == "dotted_name":
                _value(w, child, scope)
            else:
                _pattern(w, child, scope)
    elif kind == "keyword_pattern":
        for index, child in enumerate(node.named_children):
            if index == 0 and child.type == "identifier":
                w.occur(child, scope, KWARG, shape="kwarg=")
            else:
                _pattern(w, child, scope)
    elif kind == "dict_pattern":
        keys = {k.id for k in node.children_by_field_name("key")}
        for child in node.named_children:
            if child.id in keys and child.type == "dotted_name":
                _value(w, child, scope)
            elif child.id in keys:
                w.push(child, scope)
            else:
                _pattern(w, child, scope)
    elif kind in ("case_pattern", "as_pattern", "union_pattern", "list_pattern", "tuple_pattern",
                  "splat_pattern"):
        for child in node.named_children:
            _pattern(w, child, scope)
    else:
        w.push(node, scope)


def _capture(w: Walk, node: Node, scope: int) -> None:
    if w.text(node) != "_":  # ``_`` is the wildcard, it binds nothing
        w.bind_name(node, scope, STORE)


def _value(w: Walk, dotted: Node, scope: int) -> None:
    """``Color.RED`` in a pattern: a load of ``Color`` and member accesses."""
    ids = [c for c in dotted.named_children if c.type == "identifier"]
    if not ids:
        return
    receiver = w.occur(ids[0], scope, NAME, LOAD)
    shape = "obj."
    for member in ids[1:]:
        w.occur(member, scope, MEMBER, receiver=receiver, shape=shape)
        receiver, shape = -1, "expr."


HANDLERS.update({
    "function_definition": visit_def,
    "class_definition": visit_class,
    "lambda": visit_lambda,
    "import_statement": visit_import,
    "import_from_statement": visit_import,
    "future_import_statement": visit_import,
    "case_pattern": visit_case_pattern,
})
