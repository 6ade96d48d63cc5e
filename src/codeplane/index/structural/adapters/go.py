"""Go: ``patterns/go.scm``; imports are ``import_spec``s (an explicit name binds it; otherwise the package name
is not knowable from the path, so nothing is bound).

For ``golink`` a declared name carries the type its declaration spells (``type:T`` / ``type:pkg.T``): a
parameter or receiver (``p *Path``), ``var x T``, ``x := T{...}`` / ``&T{...}`` / ``new(T)`` / ``x.(*T)``, and a
function's name its first result (``func New() *T``); ``x := New()`` / ``x, err := pkg.New()`` carry
``type:New()`` (with type arguments too: ``New[int](n)``); a type's arguments are no part of it (``*Stack[T]`` is
``Stack``); a slice or array of ``T`` is ``[]T``, and ``for _, v := range xs`` gives ``v`` ``type:range@L:C``
(the element of what ends at line L, column C). A struct
field's type carries ``ftype:T`` on its first plain name (the field's own name is not a reference; an embedded
field's is its type's, so it carries its own ``ftype:``). Go is
statically typed, so such a name holds a value of that type wherever it is used; anything the syntax does not
spell (a call's result, ``range``, several names from one call) has no shape. A composite literal's keys are
members with a ``struct:T`` shape (the type the literal names); a member of a value built or asserted in place has
``lit:T`` (``T{...}.M()``), and so has a method expression's method (``(*T).M``, ``(*pkg.T[int]).M``).
"""

from __future__ import annotations

from tree_sitter import Node

from codeplane.index.structural.adapters.generic import Context, LanguageSpec


def imports(ctx: Context, spec: Node) -> None:
    path = spec.child_by_field_name("path")
    name = spec.child_by_field_name("name")
    source = ctx.src.text(path).strip('"`') if path is not None else None
    alias = ctx.src.text(name) if name is not None else None
    binder = name if name is not None and name.type == "package_identifier" else None
    ctx.add_import(spec, binder, name=source or "", alias=alias, source=source, kind="go_import")


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _written_type(node: Node | None) -> str | None:
    """``T`` or ``pkg.T`` of a type expression, through ``*`` and type arguments (``[]T`` for a slice or array of
    one); None for anything else."""
    if node is not None and node.type in ("slice_type", "array_type"):
        element = _written_type(node.child_by_field_name("element"))
        return f"[]{element}" if element is not None and not element.startswith("[]") else None
    if node is not None and node.type == "pointer_type":
        node = node.named_children[0] if node.named_children else None
    if node is not None and node.type == "generic_type":
        node = node.child_by_field_name("type")
    if node is None:
        return None
    if node.type == "type_identifier":
        return _text(node)
    if node.type == "qualified_type":
        package, name = node.child_by_field_name("package"), node.child_by_field_name("name")
        return f"{_text(package)}.{_text(name)}" if package is not None and name is not None else None
    return None


def _constructed_type(value: Node) -> str | None:
    """The type ``T{...}``, ``&T{...}`` or ``new(T)`` builds, or ``x.(T)`` asserts."""
    if value.type == "unary_expression" and value.child_by_field_name("operator") is not None \
            and _text(value.child_by_field_name("operator")) == "&":  # type: ignore[arg-type]
        operand = value.child_by_field_name("operand")
        return _constructed_type(operand) if operand is not None and operand.type == "composite_literal" else None
    if value.type == "composite_literal":
        return _written_type(value.child_by_field_name("type"))
    if value.type == "type_assertion_expression":  # ``v := x.(*T)``
        return _written_type(value.child_by_field_name("type"))
    if value.type == "call_expression":
        function, arguments = value.child_by_field_name("function"), value.child_by_field_name("arguments")
        if function is not None and _text(function) == "new" and arguments is not None \
                and len(arguments.named_children) == 1:
            argument = arguments.named_children[0]
            if argument.type == "identifier":
                return _text(argument)
            return _written_type(argument)
    return None


def _called(value: Node) -> str | None:
    """``F()`` / ``pkg.F()`` for a call of a plain or package-qualified function (its first result's type), with
    or without type arguments (``F[int](x)``)."""
    if value.type == "type_conversion_expression":
        # ``F[int](x)`` with one argument parses as a conversion to a generic type; a call of a generic function
        # reads the same, and ``F()`` of a type (a real conversion) resolves to nothing (gotypes only follows
        # functions' results), so taking it as a call is never wrong.
        written = value.child_by_field_name("type")
        if written is None or written.type != "generic_type":
            return None
        name = _written_type(written)
        return f"{name}()" if name is not None else None
    if value.type != "call_expression":
        return None
    function = value.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "identifier" and _text(function) != "new":
        return f"{_text(function)}()"
    if function.type == "selector_expression":
        operand, field = function.child_by_field_name("operand"), function.child_by_field_name("field")
        if operand is not None and operand.type == "identifier" and field is not None:
            return f"{_text(operand)}.{_text(field)}()"
    return None


def _result_type(function: Node) -> str | None:
    """A function's (first) result type as spelled: ``func F() *T`` / ``func F() (T, error)``."""
    result = function.child_by_field_name("result")
    if result is not None and result.type == "parameter_list":
        first = result.named_children[0] if result.named_children else None
        return _written_type(first.child_by_field_name("type")) if first is not None \
            and first.type == "parameter_declaration" else None
    return _written_type(result)


def _declared_type(name: Node) -> str | None:
    parent = name.parent
    if parent is None:
        return None
    if parent.type == "function_declaration" and parent.child_by_field_name("name") == name:
        return _result_type(parent)
    if parent.type == "parameter_declaration":  # not variadic: ``xs ...T`` is a slice
        return _written_type(parent.child_by_field_name("type"))
    if parent.type == "var_spec":
        written = _written_type(parent.child_by_field_name("type"))
        if written is not None or parent.child_by_field_name("type") is not None:
            return written
        names = parent.children_by_field_name("name")
        values = parent.child_by_field_name("value")
        return _nth_constructed(names, values, name)
    if parent.type == "expression_list" and parent.parent is not None \
            and parent.parent.type == "short_var_declaration" \
            and parent.parent.child_by_field_name("left") == parent:
        return _nth_constructed(parent.named_children, parent.parent.child_by_field_name("right"), name)
    if parent.type == "expression_list" and parent.parent is not None and parent.parent.type == "range_clause" \
            and parent.parent.child_by_field_name("left") == parent and len(parent.named_children) == 2 \
            and parent.named_children[1].id == name.id:
        # ``for _, v := range xs``: an element of what ends at (line, column), typed when the linker knows it
        operand = parent.parent.child_by_field_name("right")
        return f"range@{operand.end_point[0] + 1}:{operand.end_point[1]}" if operand is not None else None
    return None


def _nth_constructed(names: list[Node], values: Node | None, name: Node) -> str | None:
    position = next((i for i, n in enumerate(names) if n.id == name.id), None)
    if values is None or position is None:
        return None
    if len(values.named_children) == 1 and len(names) > 1:
        # ``x, err := F()``: the first name takes the call's first result
        return _called(values.named_children[0]) if position == 0 else None
    if len(values.named_children) != len(names):
        return None
    value = values.named_children[position]
    return _constructed_type(value) or _called(value)


def _field_type(node: Node) -> str | None:
    """``ftype:T`` when ``node`` is the first plain name of a struct field's declared type."""
    head = node
    if head.type == "package_identifier":
        head = head.parent if head.parent is not None and head.parent.type == "qualified_type" else head
        if head is node:
            return None
    holder = head.parent
    if holder is not None and holder.type == "generic_type" and holder.child_by_field_name("type") == head:
        holder = holder.parent  # ``Stack[string]``: the type, not one of its type arguments
    while holder is not None and holder.type in ("pointer_type", "slice_type", "array_type"):
        holder = holder.parent
    if holder is None or holder.type != "field_declaration":
        return None
    written = _written_type(holder.child_by_field_name("type"))
    return f"ftype:{written}" if written is not None else None


def path_shape(receiver: Node) -> str | None:
    """``struct:T`` for the type a composite literal names before its keys (``T{Name: v}``); ``lit:T`` for a member
    of a value the receiver builds or asserts (``T{...}.M()``, ``(&T{...}).M()``, ``new(T).M()``, ``x.(T).M()``)."""
    parent = receiver.parent
    if parent is not None and parent.type == "composite_literal" and parent.child_by_field_name("type") == receiver:
        return f"struct:{_written_type(receiver) or ''}"
    value: Node | None = receiver
    while value is not None and value.type == "parenthesized_expression":
        value = value.named_children[0] if len(value.named_children) == 1 else None
    built = _constructed_type(value) if value is not None else None
    if built is None and value is not None and receiver.type == "parenthesized_expression":
        built = _method_expression(value)
    return f"lit:{built}" if built is not None else None


def _method_expression(value: Node) -> str | None:
    """``T`` / ``pkg.T`` of a method expression's ``(*T)``, ``(*pkg.T)`` or ``(*pkg.T[int])`` (its method, as a
    value's, is ``T``'s: ``(*coll.Box).Put``). An explicit dereference ``(*p).M()`` reads alike: ``golink`` finds no
    type ``p`` and leaves it as it was."""
    if value.type == "type_instantiation_expression" and value.named_children:
        value = value.named_children[0]  # ``(*pkg.T[A, B])`` parses as ``*pkg.T`` instantiated with A, B
    if value.type == "pointer_type":
        return _written_type(value)
    operator = value.child_by_field_name("operator") if value.type == "unary_expression" else None
    operand = value.child_by_field_name("operand")
    if operator is None or _text(operator) != "*" or operand is None:
        return None
    if operand.type == "index_expression":  # ``Stack[int]``: the type, without its arguments
        operand = operand.child_by_field_name("operand")
    if operand is not None and operand.type == "identifier":
        return _text(operand)
    if operand is not None and operand.type == "selector_expression":
        package, name = operand.child_by_field_name("operand"), operand.child_by_field_name("field")
        if package is not None and package.type == "identifier" and name is not None:
            return f"{_text(package)}.{_text(name)}"
    return None


def plain_shape(node: Node) -> str | None:
    if node.type == "identifier":
        written = _declared_type(node)
        return f"type:{written}" if written is not None else None
    if node.type in ("type_identifier", "package_identifier"):
        return _field_type(node)
    return None


GO = LanguageSpec(
    "go", ("go.scm",),
    class_kinds=frozenset({"struct", "interface"}),
    binding_kinds=frozenset({"function", "struct", "interface", "type", "variable", "constant"}),
    declaration_types=frozenset({"short_var_declaration", "var_spec", "const_spec", "range_clause"}),
    imports=imports, plain_shape=plain_shape, path_shape=path_shape, shadowing_falls_through=True,
)
