"""C#: ``patterns/csharp.scm``; ``using`` directives (namespace, ``static``, alias — only an alias binds).

For ``cslink``: a declared name carries its declared class as a shape (``type:Cart`` for ``Cart c``,
``var c = new Cart()``, a property's type, a method's return type), a supertype in a base list carries
``super:`` and its name as written; a ``using`` inside a namespace block is kind ``..._scoped`` and
``global using`` is ``csharp_global_using`` (they apply to another part of the lookup than a file's own
usings)."""

from __future__ import annotations

from tree_sitter import Node

from codeplane.index.structural.adapters.generic import Context, LanguageSpec

_NAMESPACES = frozenset({"namespace_declaration", "file_scoped_namespace_declaration", "using_directive"})


def imports(ctx: Context, node: Node) -> None:
    alias = node.child_by_field_name("name")
    targets = [c for c in node.named_children if c.type in ("qualified_name", "identifier", "generic_name")
               and (alias is None or c.id != alias.id)]
    if not targets:
        return
    path = "".join(ctx.src.text(targets[-1]).split())
    static = any(c.type == "static" for c in node.children)
    kind = "csharp_using_static" if static else "csharp_using_alias" if alias is not None else "csharp_using"
    if any(c.type == "global" for c in node.children):
        kind = "csharp_global_using" if kind == "csharp_using" else kind
    elif node.parent is not None and node.parent.type == "declaration_list":
        kind += "_scoped"
    ctx.add_import(node, alias, name=path, alias=ctx.src.text(alias) if alias is not None else None, source=path,
                   kind=kind)


def _class_name(node: Node | None) -> str | None:
    """The class a type names as written (``A.B.C``; ``Box`` of ``Box<T>``; ``C`` of ``C?``)."""
    if node is not None and node.type == "nullable_type":
        node = node.child_by_field_name("type")
    if node is not None and node.type == "generic_name":
        node = next((c for c in node.named_children if c.type == "identifier"), None)
    if node is None or node.type not in ("identifier", "qualified_name"):
        return None
    text = "".join((node.text or b"").decode("utf-8", "replace").split())
    return None if "<" in text or "::" in text else text


def _declared_type(name: Node) -> str | None:
    parent = name.parent
    if parent is None:
        return None
    if parent.type == "variable_declarator" and parent.child_by_field_name("name") == name:
        declaration = parent.parent
        written = declaration.child_by_field_name("type") if declaration is not None and \
            declaration.type == "variable_declaration" else None
        if written is not None and written.type == "implicit_type":
            value = next((c for c in parent.named_children if c.type == "object_creation_expression"), None)
            written = value.child_by_field_name("type") if value is not None else None
        return _class_name(written)
    if parent.type in ("parameter", "property_declaration") and parent.child_by_field_name("name") == name:
        return _class_name(parent.child_by_field_name("type"))
    if parent.type == "foreach_statement" and parent.child_by_field_name("left") == name:
        return _class_name(parent.child_by_field_name("type"))
    if parent.type == "method_declaration" and parent.child_by_field_name("name") == name:
        return _class_name(parent.child_by_field_name("returns"))  # the declared return type
    return None


def _supertype(node: Node) -> str | None:
    head, parent = node, node.parent
    while parent is not None and parent.type == "qualified_name" and parent.child_by_field_name("qualifier") == head:
        head, parent = parent, parent.parent
    if parent is not None and parent.type == "generic_name":
        head, parent = parent, parent.parent
    if parent is None or parent.type != "base_list":
        return None
    return _class_name(head)


def plain_shape(node: Node) -> str | None:
    """``type:C`` on a declared name, ``super:C`` on the first identifier of a base type."""
    declared = _declared_type(node)
    if declared:
        return f"type:{declared}"
    written = _supertype(node)
    return f"super:{written}" if written else None


def member_kept(node: Node) -> bool:
    """Segments of a namespace name (in ``using`` and ``namespace``) are not members of anything."""
    parent = node.parent
    while parent is not None and parent.type in ("qualified_name", "alias_qualified_name"):
        parent = parent.parent
    return parent is None or parent.type not in _NAMESPACES


CSHARP = LanguageSpec(
    "csharp", ("csharp.scm",),
    class_kinds=frozenset({"class", "struct", "interface", "record", "enum"}), members_visible=True,
    binding_kinds=frozenset({"class", "struct", "interface", "enum", "record", "delegate", "method", "function",
                             "property", "field", "constant"}),
    declaration_types=frozenset({"variable_declarator"}),
    imports=imports, receiver_shapes={"this": "this.", "base": "base."},
    plain_shape=plain_shape, member_kept=member_kept,
)
