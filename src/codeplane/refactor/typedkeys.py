"""Object keys whose owner the syntax settles, for renaming a JavaScript/TypeScript class or interface member.

The index records no reference for the key of an object literal or pattern, so the sweep would list
``{drafts_: 0}`` as an ``unresolved`` low candidate, and renaming an interface field would leave behind the
literals that build its values (``tsc`` then rejects them). A key counts here only where the syntax ties it to the
member's family.

A TypeScript literal's key (``k: v`` or a method shorthand ``k() {}``, which ``tsc`` checks alike) or a
destructuring pattern's key (``{ k }``, ``{ k: v }``, ``{ k = d }``) is ``medium`` (reason ``typed_object_key``)
where the literal's or pattern's type is written next to it as one bare type name of the family:

- the initializer of a variable annotated with it (``const s: Scope = {...}``), or a pattern so annotated
  (``const { k }: Scope = s``, a parameter ``({ k }: Scope)``, the props parameter of a function component declared
  ``const Pill: React.FC<Scope> = ({ k }) => ...``);
- the value of a ``return`` in the innermost function, method or arrow whose return type it is
  (``function make(): Scope { return {...} }``, also an arrow's expression body);
- the operand of ``as Scope`` / ``satisfies Scope``;
- the value assigned to ``this.f`` / ``this[K]`` in a class that declares ``f: Scope`` / ``[K]: Scope``.

The type may also be a same-file ``type T = A | B`` alias whose members are all of the family. Other unions,
generics, arrays, spread targets and inferred types are not followed; such keys stay low candidates. So
does a literal's shorthand key (``{drafts_}``): renaming it in place would change which variable it reads. A
pattern's shorthand key is not left: ``jsshorthand.py`` splits it (``{ pending_: drafts_ }``), the local keeping
its name.
A same-named class elsewhere is why the caller leaves out names that another family also uses, and why the edit
is ``medium``, never ``high``.

A TSX attribute (``<Badge label="new" />``) is the key of the props object its tag is called with: ``medium``
``typed_object_key`` too where the tag resolves to a repository component whose props parameter is typed by one bare
type name of the family (``function Badge({ label }: BadgeProps)``), which ``jsxprops.py`` decides for the caller.
tsc checks the attribute against that type (QA59 F5: the applied rename left ``label="new"``, TS2322).

A pattern destructuring ``this`` in a class of the family (``const { closed } = this`` in a method, a field's
initialiser, an arrow function within; JavaScript too) reads the member as ``this.closed`` does: ``high``, reason
``self_member``, the class being known by its position, not its name (in a static member ``this`` is the class,
and its members the static ones). A plain ``function``'s ``this`` (the caller's) and an object literal method's
(the literal) are not the class's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from codeplane.refactor.lexical import grammar_for, syntax_root
from codeplane.refactor.models import Certainty

_TS_GRAMMARS = frozenset({"typescript", "tsx"})
_ECMASCRIPT = _TS_GRAMMARS | {"javascript"}
_FUNCTIONS = frozenset({"function_declaration", "function_expression", "function", "arrow_function",
                        "method_definition", "generator_function_declaration", "generator_function"})
#: Functions with a ``this`` of their own, the caller's (an arrow function has none: it sees its enclosing one).
_OTHER_THIS = frozenset({"function_declaration", "function_expression", "function",
                         "generator_function_declaration", "generator_function"})
_PARAMETERS = frozenset({"required_parameter", "optional_parameter"})
_TYPED_KEY: tuple[Certainty, str] = ("medium", "typed_object_key")
_THIS_KEY: tuple[Certainty, str] = ("high", "self_member")


def member_keys(text: str, path: str, offsets: list[int], owners: frozenset[str],
                classes: frozenset[tuple[int, str]] = frozenset(), *,
                typed_component: Callable[[int], bool] | None = None) -> dict[int, tuple[Certainty, str]]:
    """Those of ``offsets`` (ascending character offsets of the name) that are keys tied to the member (above),
    each with its certainty and reason. ``owners``: the family's class names that may type a key; ``classes``:
    ``(name line, name)`` of the family's classes declared in this file (whose ``this`` is the member's owner);
    ``typed_component``: whether the JSX tag name at a character offset is a component whose props the family
    types."""
    grammar = grammar_for(path)
    typed = bool(owners) and grammar in _TS_GRAMMARS
    if not offsets or grammar not in _ECMASCRIPT or not (typed or classes):
        return {}
    data = text.encode("utf-8")
    root = syntax_root(data, path)
    if root is None:
        return {}
    found: dict[int, tuple[Certainty, str]] = {}
    typed_by = owners | _family_unions(root, data, owners) if typed else frozenset()
    byte_pos = char_pos = 0
    for off in offsets:
        byte_pos += len(text[char_pos:off].encode("utf-8"))
        char_pos = off
        node = root.descendant_for_byte_range(byte_pos, byte_pos + 1)
        tag = _jsx_tag(node) if typed and typed_component is not None and grammar == "tsx" else None
        if tag is not None:
            if typed_component is not None and typed_component(len(data[:tag.start_byte].decode("utf-8"))):
                found[off] = _TYPED_KEY
            continue
        holder = _holder_of_key(node) if node is not None else None
        if holder is None:
            continue
        if holder.type == "object":
            if typed and _contextual_type(holder, data) in typed_by:
                found[off] = _TYPED_KEY
            continue
        value, annotation = _pattern_source(holder)
        if value is not None and value.type == "this" and _class_of_this(value, data) in classes:
            found[off] = _THIS_KEY
        elif typed and bare_type_name(annotation, data) in typed_by:
            found[off] = _TYPED_KEY
    return found


def _jsx_tag(node: Any) -> Any:
    """The tag name of the JSX element whose attribute's name is ``node`` (``Badge`` for ``label`` in ``<Badge
    label="new" />``; the last name of ``<ui.Badge>``), if it is one."""
    attribute = node.parent if node is not None and node.type == "property_identifier" else None
    if attribute is None or attribute.type != "jsx_attribute" or attribute.named_children[0].id != node.id:
        return None
    element = attribute.parent
    if element is None or element.type not in ("jsx_opening_element", "jsx_self_closing_element"):
        return None
    name = element.child_by_field_name("name")
    if name is not None and name.type == "member_expression":
        name = name.child_by_field_name("property")
    return name if name is not None and name.type in ("identifier", "property_identifier") else None


def _family_unions(root: Any, data: bytes, owners: frozenset[str]) -> frozenset[str]:
    """This file's ``type T = A | B`` aliases whose every member is an owner: a literal typed ``T`` is checked
    against members that all declare the key."""
    aliases: set[str] = set()
    for node in root.named_children:
        declaration = node.named_children[0] if node.type == "export_statement" and node.named_child_count else node
        if declaration.type != "type_alias_declaration":
            continue
        name, value = declaration.child_by_field_name("name"), declaration.child_by_field_name("value")
        members = _union_members(value, data) if value is not None else None
        if name is not None and members and members <= owners:
            aliases.add(data[name.start_byte:name.end_byte].decode("utf-8"))
    return frozenset(aliases)


def _union_members(node: Any, data: bytes) -> set[str] | None:
    if node.type == "type_identifier":
        return {data[node.start_byte:node.end_byte].decode("utf-8")}
    if node.type != "union_type":
        return None
    members: set[str] = set()
    for child in node.named_children:
        found = _union_members(child, data)
        if found is None:
            return None
        members |= found
    return members


def _holder_of_key(node: Any) -> Any:
    """The ``object`` or ``object_pattern`` whose own key ``node`` is (a literal's shorthand key is none)."""
    holder = node.parent
    if holder is None:
        return None
    if node.type == "property_identifier" and holder.type in ("pair", "method_definition", "pair_pattern"):
        key = holder.child_by_field_name("name" if holder.type == "method_definition" else "key")
        outer = holder.parent
        if key is None or key.id != node.id or outer is None:
            return None
        # ``{ now() {} }`` is a literal's key; a class body's method is the definition itself, not a key.
        return outer if outer.type == ("object_pattern" if holder.type == "pair_pattern" else "object") else None
    if node.type == "shorthand_property_identifier_pattern":
        if holder.type == "object_assignment_pattern":  # ``{ closed = false }``
            left = holder.child_by_field_name("left")
            holder = holder.parent if left is not None and left.id == node.id else None
        return holder if holder is not None and holder.type == "object_pattern" else None
    return None


def _pattern_source(pattern: Any) -> tuple[Any, Any]:
    """What an object pattern destructures (the value node) and the type annotation written on it."""
    parent = pattern.parent
    if parent is None:
        return None, None
    if parent.type == "variable_declarator" and _is_field(parent, "name", pattern):
        return _unparenthesized(parent.child_by_field_name("value")), parent.child_by_field_name("type")
    if parent.type == "assignment_expression" and _is_field(parent, "left", pattern):
        return _unparenthesized(parent.child_by_field_name("right")), None
    if parent.type in _PARAMETERS and _is_field(parent, "pattern", pattern):
        return None, parent.child_by_field_name("type") or component_props(parent)
    return None, None


#: A function component's type, by its last name (``FC``, ``React.FC``...): its one type argument types its props.
_COMPONENT_TYPES = frozenset({"FC", "FunctionComponent", "VFC", "VoidFunctionComponent"})


def component_props(parameter: Any) -> Any:
    """The props type of an unannotated first parameter of a function component declared with its type
    (``const Pill: React.FC<BadgeProps> = ({ label }) => ...``): the written type argument, else ``None``."""
    if parameter is None or parameter.child_by_field_name("type") is not None:
        return None
    parameters = parameter.parent
    if parameters is None or parameters.type != "formal_parameters" or parameters.named_children[0].id != parameter.id:
        return None
    function = parameters.parent
    if function is None or function.type not in ("arrow_function", "function_expression", "function"):
        return None
    node, holder = function, function.parent
    while holder is not None and holder.type == "parenthesized_expression":
        node, holder = holder, holder.parent
    if holder is None or holder.type != "variable_declarator" or not _is_field(holder, "value", node):
        return None
    annotation = holder.child_by_field_name("type")
    generic = annotation.named_children[0] if annotation is not None and annotation.named_child_count == 1 else None
    if generic is None or generic.type != "generic_type":
        return None
    name = generic.child_by_field_name("name")
    if name is not None and name.type == "nested_type_identifier":
        name = name.child_by_field_name("name")
    arguments = generic.child_by_field_name("type_arguments")
    if name is None or name.text is None or name.text.decode("utf-8") not in _COMPONENT_TYPES or \
            arguments is None or arguments.named_child_count != 1:
        return None
    return arguments.named_children[0]


def _unparenthesized(node: Any) -> Any:
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def _class_of_this(this: Any, data: bytes) -> tuple[int, str] | None:
    """``(name line, name)`` of the class ``this`` belongs to (its instance, or the class itself in a static
    member), where the syntax settles it."""
    current = this.parent
    while current is not None:
        if current.type in _OTHER_THIS:
            return None
        if current.type == "method_definition" and (current.parent is None or current.parent.type != "class_body"):
            return None  # an object literal's method: ``this`` is the literal
        if current.type == "class_body":
            name = current.parent.child_by_field_name("name") if current.parent is not None else None
            if name is None:
                return None
            return name.start_point[0] + 1, data[name.start_byte:name.end_byte].decode("utf-8")
        current = current.parent
    return None


def _contextual_type(literal: Any, data: bytes) -> str | None:
    node, parent = literal, literal.parent
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, parent.parent
    if parent is None:
        return None
    if parent.type == "variable_declarator" and _is_field(parent, "value", node):
        return bare_type_name(parent.child_by_field_name("type"), data)
    if parent.type in ("as_expression", "satisfies_expression"):
        children = parent.named_children
        if len(children) == 2 and children[0].id == node.id:
            return bare_type_name(children[1], data)
        return None
    if parent.type == "arrow_function" and _is_field(parent, "body", node):
        return bare_type_name(parent.child_by_field_name("return_type"), data)
    if parent.type == "assignment_expression" and _is_field(parent, "right", node):
        return _field_type(parent.child_by_field_name("left"), data)
    if parent.type == "return_statement":
        function = parent.parent
        while function is not None and function.type not in _FUNCTIONS:
            function = function.parent
        return bare_type_name(function.child_by_field_name("return_type"), data) if function is not None else None
    return None


def _field_type(target: Any, data: bytes) -> str | None:
    """``this.f = {...}`` / ``this[K] = {...}`` inside a class that declares ``f: T`` / ``[K]: T``: ``T``."""
    if target is None or target.type not in ("member_expression", "subscript_expression"):
        return None
    receiver = target.child_by_field_name("object")
    key = target.child_by_field_name("property" if target.type == "member_expression" else "index")
    if receiver is None or receiver.type != "this" or key is None:
        return None
    wanted = data[key.start_byte:key.end_byte]
    computed = target.type == "subscript_expression"
    holder = target.parent
    while holder is not None and holder.type not in ("class_declaration", "class", "abstract_class_declaration"):
        if holder.type in ("function_declaration", "function_expression", "function"):
            return None  # a plain function's ``this`` is not the class instance
        holder = holder.parent
    body = holder.child_by_field_name("body") if holder is not None else None
    for member in body.named_children if body is not None else ():
        name = member.child_by_field_name("name") if member.type == "public_field_definition" else None
        if name is None:
            continue
        spelled = name.named_children[0] if computed and name.type == "computed_property_name" and \
            name.named_child_count == 1 else name if not computed and name.type == "property_identifier" else None
        if spelled is not None and data[spelled.start_byte:spelled.end_byte] == wanted:
            return bare_type_name(member.child_by_field_name("type"), data)
    return None


def _is_field(parent: Any, name: str, node: Any) -> bool:
    child = parent.child_by_field_name(name)
    return child is not None and child.id == node.id


def bare_type_name(node: Any, data: bytes) -> str | None:
    if node is not None and node.type == "type_annotation" and node.named_child_count == 1:
        node = node.named_children[0]
    if node is None or node.type != "type_identifier":
        return None
    return data[node.start_byte:node.end_byte].decode("utf-8")
