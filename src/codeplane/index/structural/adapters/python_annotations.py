"""Python, pass 1: forward references. A string in an annotation (``-> "Widget"``, ``Optional["Widget"]``,
``x: "list[Widget]"``) is an expression that type checkers and ``typing.get_type_hints`` evaluate in the
annotation's scope, so its names are references like the ones outside quotes: renaming ``Widget`` must rename
them, and ``references`` must find them. ``Literal["a"]`` and ``Annotated[T, "doc"]``'s metadata are values, not
references. Registers the ``type`` handler into ``python_walk.HANDLERS`` on import.
"""

from __future__ import annotations

from tree_sitter import Node

from codeplane.index.structural import grammars
from codeplane.index.structural.adapters.python_walk import HANDLERS, LOAD, Span, Walk

#: String prefixes whose content is the text evaluated (an f-string or bytes is never a forward reference).
_PLAIN_PREFIXES = frozenset({"", "r", "R", "u", "U"})
#: Subscripted forms whose arguments are values: all of ``Literal``'s, ``Annotated``'s after the first.
_VALUE_ARGUMENTS = {"Literal": 0, "Annotated": 1}
#: What a quoted annotation may parse to (a statement, a call or a tuple is not a type).
_TYPE_EXPRESSIONS = frozenset({"identifier", "attribute", "subscript", "binary_operator", "generic_type"})


def visit_annotation(w: Walk, node: Node, scope: int, ctx: int) -> None:
    todo = [node]
    while todo:
        current = todo.pop()
        kind = current.type
        if kind == "string":
            _forward_reference(w, current, scope)
        elif kind in ("type", "type_parameter") or (kind == "binary_operator" and _is_union(current)):
            todo.extend(current.named_children)
        elif kind in ("generic_type", "subscript") and current.named_child_count:
            head = current.named_children[0]
            w.push(head, scope)
            values_from = _VALUE_ARGUMENTS.get(w.text(head).rsplit(".", 1)[-1])
            for index, argument in enumerate(_arguments(current)):
                if values_from is not None and index >= values_from:
                    for part in (argument.named_children if argument.type == "type" else [argument]):
                        w.push(part, scope)  # a value: walked as code, its strings stay strings
                else:
                    todo.append(argument)
        else:
            w.push(current, scope, LOAD)


def _is_union(node: Node) -> bool:
    operator = node.child_by_field_name("operator")
    return operator is not None and operator.type == "|"


def _arguments(node: Node) -> list[Node]:
    if node.type == "subscript":
        return node.children_by_field_name("subscript")
    return [t for p in node.named_children[1:] for t in (p.named_children if p.type == "type_parameter" else [p])]


def _forward_reference(w: Walk, node: Node, scope: int) -> None:
    parts = node.named_children
    if len(parts) != 3 or parts[1].type != "string_content":  # empty, implicit concatenation, escapes
        return
    if w.text(parts[0]).strip("'\"") not in _PLAIN_PREFIXES:
        return
    content = w.text(parts[1])
    if not content.isascii() or "\n" in content or not content.strip() or content != content.strip():
        return
    parser = grammars.parser("python")
    if parser is None:
        return
    root = parser.parse(content.encode("ascii")).root_node
    if root.has_error or root.named_child_count != 1 or root.named_children[0].type not in _TYPE_EXPRESSIONS:
        return
    line, column = w.span(parts[1])[:2]

    def text(inner: Node) -> str:
        return content[inner.start_byte:inner.end_byte]

    def span(inner: Node) -> Span:
        return line, column + inner.start_byte, line, column + inner.end_byte

    w.embedded(root.named_children[0], scope, text, span)


HANDLERS["type"] = visit_annotation
