"""C#: ``patterns/csharp.scm``; ``using`` directives (namespace, ``static``, alias — only an alias binds)."""

from __future__ import annotations

from tree_sitter import Node

from codeplane.index.structural.adapters.generic import Context, LanguageSpec


def imports(ctx: Context, node: Node) -> None:
    alias = node.child_by_field_name("name")
    targets = [c for c in node.named_children if c.type in ("qualified_name", "identifier", "generic_name")
               and (alias is None or c.id != alias.id)]
    if not targets:
        return
    path = "".join(ctx.src.text(targets[-1]).split())
    static = any(c.type == "static" for c in node.children)
    kind = "csharp_using_static" if static else "csharp_using_alias" if alias is not None else "csharp_using"
    ctx.add_import(node, alias, name=path, alias=ctx.src.text(alias) if alias is not None else None, source=path,
                   kind=kind)


CSHARP = LanguageSpec(
    "csharp", ("csharp.scm",),
    class_kinds=frozenset({"class", "struct", "interface", "record", "enum"}), members_visible=True,
    binding_kinds=frozenset({"class", "struct", "interface", "enum", "record", "delegate", "method", "function",
                             "property", "field", "constant"}),
    declaration_types=frozenset({"variable_declarator"}),
    imports=imports, receiver_shapes={"this": "this.", "base": "base."},
)
