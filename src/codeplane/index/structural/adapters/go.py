"""Go: ``patterns/go.scm``; imports are ``import_spec``s (an explicit name binds it; otherwise the package name
is not knowable from the path, so nothing is bound)."""

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


GO = LanguageSpec(
    "go", ("go.scm",),
    class_kinds=frozenset({"struct", "interface"}),
    binding_kinds=frozenset({"function", "struct", "interface", "type", "variable", "constant"}),
    declaration_types=frozenset({"short_var_declaration", "var_spec", "const_spec", "range_clause"}),
    imports=imports,
)
