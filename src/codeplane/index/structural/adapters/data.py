"""Data families (§8.4.1 markdown, json_yaml, sql, docker, protobuf): parsed for the context probe and for a
light outline — headings, created SQL objects, Docker stages and base images, protobuf messages/services and
imports, TOML tables — so ``map_repo`` and ``search mode=symbol`` can point into them."""

from __future__ import annotations

from dataclasses import replace

from tree_sitter import Node

from codeplane.index.structural.adapters.generic import Context, LanguageSpec


def dockerfile_imports(ctx: Context, node: Node) -> None:
    image = node.child_by_field_name("image") or next((c for c in node.named_children if c.type == "image_spec"), None)
    name = image.child_by_field_name("name") if image is not None else None
    source = ctx.src.text(name) if name is not None else None
    ctx.add_import(node, None, name=source or "", alias=None, source=source, kind="docker_from")


def proto_imports(ctx: Context, node: Node) -> None:
    path = node.child_by_field_name("path")
    source = ctx.src.text(path).strip("\"'") if path is not None else None
    ctx.add_import(node, None, name=source or "", alias=None, source=source, kind="proto_import")


_DATA = LanguageSpec("data", (), class_kinds=frozenset(), binding_kinds=frozenset(), resolve_file_scope=False)
MARKDOWN = replace(_DATA, language="markdown", patterns=("markdown.scm",))
SQL = replace(_DATA, language="sql", patterns=("sql.scm",))
DOCKERFILE = replace(_DATA, language="dockerfile", patterns=("dockerfile.scm",), imports=dockerfile_imports)
PROTO = replace(_DATA, language="protobuf", patterns=("proto.scm",), class_kinds=frozenset({"message", "service"}),
                imports=proto_imports)
TOML = replace(_DATA, language="toml", patterns=("toml.scm",))
