"""JavaScript, TypeScript and TSX: ``patterns/ecmascript.scm`` (+ ``typescript.scm``) and the ES module
import/export forms (named, default, namespace, side-effect, ``require``, re-exports, ``export *``)."""

from __future__ import annotations

from dataclasses import replace

from tree_sitter import Node

from codeplane.index.structural.adapters.generic import Context, LanguageSpec
from codeplane.index.structural.facts import CERTAIN, TARGET_DEF, TARGET_IMPORT, UNCERTAIN, ExportRow, ThunkRow

_PATTERN_SKIP = {"assignment_pattern": ("right",), "pair_pattern": ("key",), "object_assignment_pattern": ("right",)}


def _string(ctx: Context, node: Node | None) -> str | None:
    if node is None:
        return None
    fragment = next((c for c in node.named_children if c.type == "string_fragment"), None)
    return ctx.src.text(fragment) if fragment is not None else ""


def pattern_names(node: Node) -> list[Node]:
    """Names a parameter or destructuring pattern declares (defaults and keys are not declarations)."""
    out: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current.type
        if kind in ("identifier", "shorthand_property_identifier_pattern"):
            out.append(current)
            continue
        if kind in ("required_parameter", "optional_parameter"):
            pattern = current.child_by_field_name("pattern")
            stack.extend([pattern] if pattern is not None else [])
            continue
        if kind in ("type_annotation", "predefined_type", "accessibility_modifier", "this"):
            continue
        skipped = {c.id for f in _PATTERN_SKIP.get(kind, ()) for c in current.children_by_field_name(f)}
        stack.extend(c for c in current.named_children if c.id not in skipped)
    return out


def _required(ctx: Context, call: Node | None) -> str | None:
    """The module a ``require("m")`` call names; None when ``call`` is not one."""
    if call is None or call.type != "call_expression":
        return None
    function = call.child_by_field_name("function")
    if function is None or function.type != "identifier" or ctx.src.text(function) != "require":
        return None
    args = call.child_by_field_name("arguments")
    first = args.named_children[0] if args is not None and args.named_children else None
    return _string(ctx, first) if first is not None and first.type == "string" else None


def _require(ctx: Context, statement: Node, declarator: Node) -> None:
    """``x = require("m")`` binds ``x`` to the module, ``x = require("m").y`` to its ``y`` (as ``import { y as x }``
    would); a destructuring pattern imports the module without binding a name."""
    value = declarator.child_by_field_name("value")
    member = None
    if value is not None and value.type == "member_expression":
        prop = value.child_by_field_name("property")
        if prop is None or prop.type != "property_identifier":
            return
        member, value = prop, value.child_by_field_name("object")
    source = _required(ctx, value)
    if source is None:
        return
    name = declarator.child_by_field_name("name")
    plain = name if name is not None and name.type == "identifier" else None
    ctx.add_import(statement, plain, name=ctx.src.text(member) if member is not None else "*",
                   alias=ctx.src.text(plain) if plain else None, source=source, kind="js_require", original=member)


def _load(ctx: Context, call: Node) -> None:
    """``require(...)``/``import(...)`` anywhere but as a declaration's value (``_require`` binds those): the module
    its literal names, or no source at all when the name is computed (``require(name)``: a dynamic import)."""
    parent = call.parent
    if parent is not None and parent.type == "member_expression" and call == parent.child_by_field_name("object"):
        parent = parent.parent
    if parent is not None and parent.type == "variable_declarator" and _required(ctx, call) is not None:
        return
    function = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    first = args.named_children[0] if args is not None and args.named_children else None
    source = _string(ctx, first) if first is not None and first.type == "string" else None
    kind = "js_require" if function is not None and function.type in ("identifier", "member_expression") \
        else "js_import"
    ctx.add_import(call, None, name="*", alias=None, source=source, kind=kind)


def imports(ctx: Context, statement: Node) -> None:
    if statement.type in ("lexical_declaration", "variable_declaration"):
        for declarator in statement.named_children:
            if declarator.type == "variable_declarator":
                _require(ctx, statement, declarator)
        return
    if statement.type == "call_expression":
        _load(ctx, statement)
        return
    source = _string(ctx, statement.child_by_field_name("source"))
    if statement.type == "export_statement":
        _reexport(ctx, statement, source)
        return
    kind = "ts_import_type" if any(c.type == "type" for c in statement.children) else "js_import"
    required = next((c for c in statement.named_children if c.type == "import_require_clause"), None)
    if required is not None:  # TypeScript's ``import x = require("m")``: ``x`` is the module, as CommonJS binds it
        ident = next((c for c in required.named_children if c.type == "identifier"), None)
        ctx.add_import(statement, ident, name="*", alias=ctx.src.text(ident) if ident is not None else None,
                       source=_string(ctx, required.child_by_field_name("source")), kind="js_require")
        return
    clause = next((c for c in statement.named_children if c.type == "import_clause"), None)
    if clause is None:
        ctx.add_import(statement, None, name="*", alias=None, source=source, kind=kind)
        return
    for part in clause.named_children:
        if part.type == "identifier":
            ctx.add_import(statement, part, name="default", alias=ctx.src.text(part), source=source, kind=kind)
        elif part.type == "namespace_import":
            ident = next((c for c in part.named_children if c.type == "identifier"), None)
            ctx.add_import(statement, ident, name="*", alias=ctx.src.text(ident) if ident else None, source=source,
                           kind=kind)
        elif part.type == "named_imports":
            for spec in part.named_children:
                if spec.type != "import_specifier":
                    continue
                name = spec.child_by_field_name("name")
                alias = spec.child_by_field_name("alias")
                if name is None:
                    continue
                ctx.add_import(statement, alias or name, name=ctx.src.text(name),
                               alias=ctx.src.text(alias) if alias is not None else None, source=source, kind=kind,
                               original=name if alias is not None else None)


def _reexport(ctx: Context, statement: Node, source: str | None) -> None:
    clause = next((c for c in statement.named_children if c.type == "export_clause"), None)
    if clause is None:
        namespace = next((c for c in statement.named_children if c.type == "namespace_export"), None)
        if namespace is not None:  # export * as ns from "m"
            ident = next((c for c in namespace.named_children if c.type in ("identifier", "string")), None)
            alias = ctx.src.text(ident) if ident is not None else "*"
            row = ctx.add_import(statement, None, name="*", alias=alias, source=source, kind="js_reexport")
            ctx.exports.append(ExportRow(alias, None, row.import_uid, UNCERTAIN, "explicit_export"))
            return
        row = ctx.add_import(statement, None, name="*", alias=None, source=source, kind="js_reexport")
        ctx.thunks.append(ThunkRow("REEXPORT_ALL", row.import_uid, source or "", (), (), "export_statement"))
        return
    for spec in clause.named_children:
        name_node = spec.child_by_field_name("name")
        alias_node = spec.child_by_field_name("alias")
        if name_node is None:
            continue
        original = ctx.src.text(name_node)
        public = ctx.src.text(alias_node) if alias_node is not None else original
        row = ctx.add_import(statement, None, name=original, alias=public if alias_node is not None else None,
                             source=source, kind="js_reexport", original=name_node)
        ctx.exports.append(ExportRow(public, None, row.import_uid, CERTAIN, "explicit_export"))


def exports(ctx: Context, root: Node, bindings: dict[str, tuple[str, str | None]]) -> None:
    """``export`` declarations and clauses of this file (re-exports are recorded by ``imports``)."""
    first = len(ctx.exports)
    for statement in root.named_children:
        if statement.type != "export_statement" or statement.child_by_field_name("source") is not None:
            continue
        default = any(c.type == "default" for c in statement.children)
        declaration = statement.child_by_field_name("declaration")
        value = statement.child_by_field_name("value")
        if declaration is not None:
            for name in _declared_names(declaration):
                text = ctx.src.text(name)
                _export(ctx, "default" if default else text, bindings.get(text))
        elif value is not None and default:
            _export(ctx, "default", bindings.get(ctx.src.text(value)) if value.type == "identifier" else None)
        for clause in (c for c in statement.named_children if c.type == "export_clause"):
            for spec in clause.named_children:
                local = spec.child_by_field_name("name")
                public = spec.child_by_field_name("alias")
                if local is not None:
                    text = ctx.src.text(local)
                    _export(ctx, ctx.src.text(public) if public is not None else text, bindings.get(text))
    # Each overload signature of ``export function f`` exports the same ``f``: one row.
    ctx.exports[first:] = list(dict.fromkeys(ctx.exports[first:]))


def _declared_names(declaration: Node) -> list[Node]:
    name = declaration.child_by_field_name("name")
    if name is not None:
        return [name]
    return [d.child_by_field_name("name") for d in declaration.named_children  # type: ignore[misc]
            if d.type == "variable_declarator" and d.child_by_field_name("name") is not None
            and d.child_by_field_name("name").type == "identifier"]  # type: ignore[union-attr]


def _export(ctx: Context, name: str, binding: tuple[str, str | None] | None) -> None:
    kind, uid = binding if binding is not None else (None, None)
    ctx.exports.append(ExportRow(name, uid if kind == TARGET_DEF else None, uid if kind == TARGET_IMPORT else None,
                                 CERTAIN if uid else UNCERTAIN, "explicit_export"))


JAVASCRIPT = LanguageSpec(
    "javascript", ("ecmascript.scm", "javascript_extra.scm"),
    class_kinds=frozenset({"class", "interface", "enum", "module"}),
    binding_kinds=frozenset({"function", "class", "interface", "type", "enum", "module"}),
    declaration_types=frozenset({"variable_declarator"}),
    imports=imports, exports=exports, receiver_shapes={"this": "this.", "super": "super."},
    identifier_types=frozenset({"identifier", "shorthand_property_identifier_pattern"}),
    pattern_names=pattern_names, closures_see_later_bindings=True,
)
TYPESCRIPT = replace(JAVASCRIPT, language="typescript", patterns=("ecmascript.scm", "typescript.scm"),
                     overload_types=frozenset({"function_signature"}),
                     merging_types=frozenset({"interface_declaration", "type_alias_declaration"}))
