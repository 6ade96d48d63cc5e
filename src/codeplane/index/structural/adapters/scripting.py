"""Ruby and PHP: ``patterns/ruby.scm`` / ``php.scm``. Both have function-wide locals that ``def``/``function``
bodies do not inherit (opaque scopes) and where re-assignment names the same variable. Only locals and
parameters are resolved; method and function names are dynamic."""

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
        ctx.add_import(node, None, name=full, alias=ctx.src.text(alias) if alias is not None else None,
                       source=full, kind="php_use")


RUBY = LanguageSpec(
    "ruby", ("ruby.scm",),
    class_kinds=frozenset({"class", "module"}), binding_kinds=frozenset(),
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
    identifier_types=frozenset({"variable_name"}),
)
