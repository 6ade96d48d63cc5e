"""Ruby and PHP: ``patterns/ruby.scm`` / ``php.scm``. Both have function-wide locals that ``def``/``function``
bodies do not inherit (opaque scopes) and where re-assignment names the same variable. Only locals and
parameters are resolved here; method and function names are dynamic.

For ``phplink`` a PHP class, function or constant name carries its context and qualifier as written as a
shape (``class:``, ``fn:``, ``const:``, ``super:`` for ``extends``/``implements``/trait ``use``, and
``useclass:``/``usefn:``/``useconst:`` with the absolute prefix in ``use`` clauses), ``X::m()`` is a member of
shape ``class::`` (a property or constant access, not a call, adds ``$``: ``class::$``, ``this.$``; a static
property ``K::$n``/``self::$n`` adds ``$$`` and is named ``n``, as it is declared), and a
variable's definition carries ``type:C`` when a type hint or ``new C`` declares it.
``use function``/``use const`` are import kinds ``php_use_function``/``php_use_const``."""

from __future__ import annotations

from tree_sitter import Node

from codeplane.index.structural.adapters.generic import Context, LanguageSpec

_RUBY_NAME_FIELDS = ("optional_parameter", "keyword_parameter", "splat_parameter", "hash_splat_parameter",
                     "block_parameter")


def _string_content(ctx: Context, node: Node) -> str | None:
    for child in node.named_children:
        if child.type in ("string", "encapsed_string"):
            content = next((c for c in child.named_children if c.type == "string_content"), None)
            return ctx.src.text(content) if content is not None else ""
        found = _string_content(ctx, child)
        if found is not None:
            return found
    return None


def ruby_pattern_names(node: Node) -> list[Node]:
    if node.type == "identifier":
        return [node]
    if node.type in _RUBY_NAME_FIELDS:
        name = node.child_by_field_name("name")
        return [name] if name is not None else []
    if node.type in ("destructured_parameter", "left_assignment_list"):
        return [n for c in node.named_children for n in ruby_pattern_names(c)]
    return []


def ruby_imports(ctx: Context, node: Node) -> None:
    method = node.child_by_field_name("method")
    verb = ctx.src.text(method) if method is not None else "require"
    source = _string_content(ctx, node)
    ctx.add_import(node, None, name=source or "", alias=None, source=source, kind=f"ruby_{verb}")


def php_imports(ctx: Context, node: Node) -> None:
    if node.type == "expression_statement":
        source = _string_content(ctx, node)
        ctx.add_import(node, None, name=source or "", alias=None, source=source, kind="php_require")
        return
    prefix_node = next((c for c in node.named_children if c.type == "namespace_name"), None)
    prefix = ctx.src.text(prefix_node) if prefix_node is not None else ""
    clauses = [c for c in node.named_children if c.type == "namespace_use_clause"]
    group = next((c for c in node.named_children if c.type == "namespace_use_group"), None)
    if group is not None:
        clauses += [c for c in group.named_children if c.type == "namespace_use_clause"]
    for clause in clauses:
        alias = clause.child_by_field_name("alias")
        target = next((c for c in clause.named_children if alias is None or c.id != alias.id), None)
        if target is None:
            continue
        path = ctx.src.text(target)
        full = f"{prefix}\\{path}" if prefix and group is not None else path
        kind = {"function": "php_use_function", "const": "php_use_const"}.get(_use_keyword(clause) or "", "php_use")
        ctx.add_import(node, None, name=full, alias=ctx.src.text(alias) if alias is not None else None,
                       source=full, kind=kind)


def _use_keyword(clause: Node) -> str | None:
    """``function``/``const`` of a ``use`` clause (written on the clause, or on its whole declaration)."""
    for holder in (clause, clause.parent, clause.parent.parent if clause.parent is not None else None):
        if holder is None:
            continue
        for child in holder.children:
            if child.type in ("function", "const"):
                return child.type
        if holder.type == "namespace_use_declaration":
            break
    return None


def _text(node: Node) -> str:
    return "".join((node.text or b"").decode("utf-8", "replace").split())


_CLASS_CONTEXTS = frozenset({"object_creation_expression", "scoped_call_expression", "named_type",
                             "scoped_property_access_expression", "class_constant_access_expression"})
_SUPER_CONTEXTS = frozenset({"base_clause", "class_interface_clause", "use_declaration"})


def _written_class(node: Node | None) -> str | None:
    if node is not None and node.type == "optional_type":
        node = next((c for c in node.named_children if c.type == "named_type"), None)
    if node is not None and node.type == "named_type":
        node = node.named_children[0] if node.named_children else None
    if node is None or node.type not in ("name", "qualified_name"):
        return None
    text = _text(node)
    return None if text.lower() in ("self", "static", "parent") else text


def _declared_type(node: Node) -> str | None:
    """``Item $i`` (a parameter), ``$x = new Item()``, ``private Item $p`` (a property, named by its ``name``)."""
    parent = node.parent
    if parent is None:
        return None
    if node.type == "name" and parent.type == "variable_name":
        element = parent.parent
        declaration = element.parent if element is not None and element.type == "property_element" else None
        return _written_class(declaration.child_by_field_name("type")) if declaration is not None else None
    if parent.type == "simple_parameter" and parent.child_by_field_name("name") == node:
        return _written_class(parent.child_by_field_name("type"))
    if parent.type in ("method_declaration", "function_definition") and parent.child_by_field_name("name") == node:
        return _written_class(parent.child_by_field_name("return_type"))  # the declared return type
    if parent.type == "assignment_expression" and parent.child_by_field_name("left") == node:
        value = parent.child_by_field_name("right")
        if value is not None and value.type == "object_creation_expression":
            return _written_class(next((c for c in value.named_children if c.type in ("name", "qualified_name")), None))
    return None


#: Where a bare name is a constant (``php.scm``'s expression contexts).
_CONSTANT_CONTEXTS = frozenset({
    "argument", "binary_expression", "return_statement", "assignment_expression", "echo_statement",
    "array_element_initializer", "conditional_expression", "parenthesized_expression", "unary_op_expression",
    "subscript_expression", "case_statement", "simple_parameter", "const_element"})


def php_plain_shape(node: Node) -> str | None:
    if node.type == "namespace_name":
        return "namespace"
    if node.type == "variable_name" or (node.type == "name" and node.parent is not None
                                        and node.parent.type in ("variable_name", "method_declaration",
                                                                 "function_definition")):
        declared = _declared_type(node)
        return f"type:{declared}" if declared else None
    holder, qualifier = node.parent, ""
    if holder is not None and holder.type in ("qualified_name", "relative_name"):
        written = _text(holder)
        qualifier = written[:len(written) - len(_text(node))]
        holder = holder.parent
    if holder is None:
        return None
    kind = holder.type
    if kind == "namespace_use_clause":
        group = holder.parent if holder.parent is not None and holder.parent.type == "namespace_use_group" else None
        declaration = group.parent if group is not None else holder.parent
        prefix = next((_text(c) for c in declaration.named_children if c.type == "namespace_name"), "") \
            if group is not None and declaration is not None else ""
        absolute = "\\".join(p for p in (prefix, qualifier.strip("\\")) if p)
        use = {"function": "usefn", "const": "useconst"}.get(_use_keyword(holder) or "", "useclass")
        return f"{use}:\\{absolute}\\" if absolute else f"{use}:\\"
    if kind == "function_call_expression":
        return f"fn:{qualifier}"
    if kind in _SUPER_CONTEXTS:
        return f"super:{qualifier}{_text(node)}"
    if kind in _CLASS_CONTEXTS or (kind == "binary_expression" and holder.child_by_field_name("right") is not None
                                   and any(c.type == "instanceof" for c in holder.children)
                                   and holder.child_by_field_name("right") in (node, node.parent)):
        return f"class:{qualifier}"
    return f"const:{qualifier}" if kind in _CONSTANT_CONTEXTS else None


_CALLS = frozenset({"member_call_expression", "scoped_call_expression", "nullsafe_member_call_expression"})


def php_path_shape(receiver: Node) -> str | None:
    """``$this->m()`` ``this.``, ``self::m()`` ``self::``, ``C::m()`` ``class::``, ``$x->m()`` ``expr.``; a property
    or constant access (not a call) has the same shape plus ``$``, a static property (``C::$n``) plus ``$$``; a
    constant through an object (``$x::N``, ``$this::N``) has ``expr::$``/``this::$``."""
    text = _text(receiver)
    if receiver.type in ("name", "qualified_name", "relative_name"):
        shape = "class::"
    elif receiver.type == "relative_scope":
        shape = f"{text.lower()}::"
    else:
        shape = "this." if text == "$this" else "expr."
    holder = receiver.parent
    if holder is not None and holder.type == "class_constant_access_expression" and shape.endswith("."):
        shape = shape[:-1] + "::"  # ``$x::N``: a constant through an object's class, not a property
    if holder is not None and holder.type == "scoped_property_access_expression":
        return shape + "$$"  # a static property: PHP keeps it apart from a class constant of the same name
    return shape if holder is not None and holder.type in _CALLS else shape + "$"


def _ruby_constant(name: str) -> bool:
    return name[:1].isupper()


RUBY = LanguageSpec(
    "ruby", ("ruby.scm",),
    class_kinds=frozenset({"class", "module"}), binding_kinds=frozenset({"constant", "class", "module"}),
    lexical_constant=_ruby_constant,
    declaration_types=frozenset({"assignment", "operator_assignment"}),
    opaque_scopes=frozenset({"function", "class", "module"}), rebinding_is_assignment=True,
    imports=ruby_imports, receiver_shapes={"self": "self."}, pattern_names=ruby_pattern_names,
)
PHP = LanguageSpec(
    "php", ("php.scm",),
    class_kinds=frozenset({"class", "interface", "trait", "enum"}), binding_kinds=frozenset(),
    declaration_types=frozenset({"assignment_expression"}),
    opaque_scopes=frozenset({"function"}), rebinding_is_assignment=True,
    imports=php_imports, receiver_shapes={"$this": "this."},
    identifier_types=frozenset({"variable_name"}), plain_shape=php_plain_shape, path_shape=php_path_shape,
)
