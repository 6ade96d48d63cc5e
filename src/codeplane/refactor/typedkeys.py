"""Object-literal keys whose type the syntax settles, for renaming a TypeScript class or interface member.

The index records no reference for the key of an object literal, so the sweep would list ``{drafts_: 0}`` as an
``unresolved`` low candidate, and renaming an interface field would leave behind the literals that build its
values (``tsc`` then rejects them). A key counts here only where the literal's contextual type is written next
to it as one bare type name of the member's family:

- the initializer of a variable annotated with it (``const s: Scope = {...}``);
- the value of a ``return`` in the innermost function, method or arrow whose return type it is
  (``function make(): Scope { return {...} }``, also an arrow's expression body);
- the operand of ``as Scope`` / ``satisfies Scope``.

Unions, generics, arrays, spread targets and inferred types are not followed; such keys stay low candidates. So
does a shorthand key (``{drafts_}``): renaming it in place would change which variable it reads.
A same-named class elsewhere is why the caller leaves out names that another family also uses, and why the edit
is ``medium``, never ``high``.
"""

from __future__ import annotations

from typing import Any

from codeplane.refactor.lexical import grammar_for, syntax_root

_TS_GRAMMARS = frozenset({"typescript", "tsx"})
_FUNCTIONS = frozenset({"function_declaration", "function_expression", "function", "arrow_function",
                        "method_definition", "generator_function_declaration", "generator_function"})


def typed_object_keys(text: str, path: str, offsets: list[int], owners: frozenset[str]) -> set[int]:
    """Those of ``offsets`` (ascending character offsets of the name) that are keys of object literals typed
    by one of ``owners``."""
    if not owners or not offsets or grammar_for(path) not in _TS_GRAMMARS:
        return set()
    data = text.encode("utf-8")
    root = syntax_root(data, path)
    if root is None:
        return set()
    found: set[int] = set()
    byte_pos = char_pos = 0
    for off in offsets:
        byte_pos += len(text[char_pos:off].encode("utf-8"))
        char_pos = off
        node = root.descendant_for_byte_range(byte_pos, byte_pos + 1)
        literal = _literal_of_key(node) if node is not None else None
        if literal is not None and _contextual_type(literal, data) in owners:
            found.add(off)
    return found


def _literal_of_key(node: Any) -> Any:
    holder = node.parent
    if holder is None:
        return None
    if node.type == "property_identifier" and holder.type == "pair":
        key = holder.child_by_field_name("key")
        if key is not None and key.id == node.id and holder.parent is not None and holder.parent.type == "object":
            return holder.parent
    return None


def _contextual_type(literal: Any, data: bytes) -> str | None:
    node, parent = literal, literal.parent
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, parent.parent
    if parent is None:
        return None
    if parent.type == "variable_declarator" and _is_field(parent, "value", node):
        return _bare_name(parent.child_by_field_name("type"), data)
    if parent.type in ("as_expression", "satisfies_expression"):
        children = parent.named_children
        if len(children) == 2 and children[0].id == node.id:
            return _bare_name(children[1], data)
        return None
    if parent.type == "arrow_function" and _is_field(parent, "body", node):
        return _bare_name(parent.child_by_field_name("return_type"), data)
    if parent.type == "return_statement":
        function = parent.parent
        while function is not None and function.type not in _FUNCTIONS:
            function = function.parent
        return _bare_name(function.child_by_field_name("return_type"), data) if function is not None else None
    return None


def _is_field(parent: Any, name: str, node: Any) -> bool:
    child = parent.child_by_field_name(name)
    return child is not None and child.id == node.id


def _bare_name(node: Any, data: bytes) -> str | None:
    if node is not None and node.type == "type_annotation" and node.named_child_count == 1:
        node = node.named_children[0]
    if node is None or node.type != "type_identifier":
        return None
    return data[node.start_byte:node.end_byte].decode("utf-8")
