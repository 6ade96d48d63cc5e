"""Java and Kotlin: ``patterns/java.scm`` / ``kotlin.scm``. Single-type imports bind their simple name; a
file's top-level types (and Kotlin top-level functions/properties) are its exports, for STRONG links."""

from __future__ import annotations

from tree_sitter import Node

from codeplane.index.structural.adapters.generic import Context, LanguageSpec
from codeplane.index.structural.facts import CERTAIN, TARGET_DEF, ExportRow


def java_imports(ctx: Context, node: Node) -> None:
    target = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
    if target is None:
        return
    path = "".join(ctx.src.text(target).split())
    wildcard = any(c.type == "asterisk" for c in node.children)
    static = any(c.type == "static" for c in node.children)
    kind = "java_import_static" if static else "java_import"
    leaf = target.child_by_field_name("name") if target.type == "scoped_identifier" else target
    ctx.add_import(node, None if wildcard else leaf, name=f"{path}.*" if wildcard else path, alias=None,
                   source=f"{path}.*" if wildcard else path, kind=kind)


def kotlin_imports(ctx: Context, node: Node) -> None:
    target = next((c for c in node.named_children if c.type == "identifier"), None)
    if target is None:
        return
    path = "".join(ctx.src.text(target).split())
    alias_node = next((c for c in node.named_children if c.type == "import_alias"), None)
    alias = next((c for c in alias_node.named_children), None) if alias_node is not None else None
    wildcard = any(c.type in ("wildcard_import", "*") or ctx.src.text(c) == ".*" for c in node.children)
    parts = [c for c in target.named_children if c.type == "simple_identifier"]
    binder = alias if alias is not None else (parts[-1] if parts and not wildcard else None)
    ctx.add_import(node, binder, name=f"{path}.*" if wildcard else path,
                   alias=ctx.src.text(alias) if alias is not None else None,
                   source=f"{path}.*" if wildcard else path, kind="kotlin_import")


def exports(ctx: Context, root: Node, bindings: dict[str, tuple[str, str | None]]) -> None:
    for name, (kind, uid) in sorted(bindings.items()):
        if kind == TARGET_DEF and uid is not None:
            ctx.exports.append(ExportRow(name, uid, None, CERTAIN, "public_type"))


JAVA = LanguageSpec(
    "java", ("java.scm",),
    class_kinds=frozenset({"class", "interface", "enum", "record"}), members_visible=True,
    binding_kinds=frozenset({"class", "interface", "enum", "record", "field", "constant"}),
    declaration_types=frozenset({"variable_declarator", "resource"}),
    imports=java_imports, exports=exports, receiver_shapes={"this": "this.", "super": "super."},
)
KOTLIN = LanguageSpec(
    "kotlin", ("kotlin.scm",),
    class_kinds=frozenset({"class", "object", "interface"}), members_visible=True,
    binding_kinds=frozenset({"class", "object", "function", "property", "type", "constant"}),
    declaration_types=frozenset({"property_declaration"}),
    imports=kotlin_imports, exports=exports, receiver_shapes={"this": "this.", "super": "super."},
    identifier_types=frozenset({"simple_identifier"}),
)
