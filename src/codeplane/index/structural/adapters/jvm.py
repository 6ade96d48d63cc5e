"""Java and Kotlin: ``patterns/java.scm`` / ``kotlin.scm``. Single-type imports bind their simple name; a
file's top-level types (and Kotlin top-level functions/properties) are its exports, for STRONG links.

For ``javalink`` a Java declaration's name carries its declared class as a shape (``type:Cart`` for
``Cart c``, ``var c = new Cart()``, ``List<X> c`` as ``type:List``, a method's return type), a supertype in a
class header carries ``super:`` and its name as written (``anon:`` for the type of ``new C() {...}``, ``bound:`` on
a bounded type parameter), other type positions ``type``; ``m()`` without a receiver is a member of shape
``bare.``, a member of a cast is ``cast:C.``, the method of a method reference (``Item::price``) ``::``, and a
member that is not called (a field, a nested type) has its receiver's shape plus ``$`` (``this.$``, ``obj.$``):
fields and methods are separate namespaces."""

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


_DECLARING = frozenset({"local_variable_declaration", "field_declaration", "constant_declaration"})
_NAMED_TYPED = frozenset({"formal_parameter", "enhanced_for_statement", "resource", "spread_parameter"})
_SUPER_LISTS = frozenset({"super_interfaces", "extends_interfaces"})


def _class_name(node: Node | None) -> str | None:
    """The class a type names as written (``a.b.C``; ``Box`` of ``Box<T>``), None for arrays and primitives."""
    if node is not None and node.type == "generic_type":
        node = node.named_children[0] if node.named_children else None
    if node is None or node.type not in ("type_identifier", "scoped_type_identifier"):
        return None
    text = "".join((node.text or b"").decode("utf-8", "replace").split())
    return None if "<" in text or "@" in text or text == "var" else text


def _declared_type(name: Node) -> str | None:
    parent = name.parent
    if parent is None:
        return None
    if parent.type == "variable_declarator" and parent.child_by_field_name("name") == name:
        declaration = parent.parent
        if declaration is None or declaration.type not in _DECLARING:
            return None
        written = declaration.child_by_field_name("type")
        if written is not None and written.type == "type_identifier" and written.text == b"var":
            value = parent.child_by_field_name("value")  # ``var c = new Cart()``: the class is written
            if value is None or value.type != "object_creation_expression" or \
                    any(c.type == "class_body" for c in value.named_children):
                return None
            written = value.child_by_field_name("type")
        return _class_name(written)
    if parent.type in _NAMED_TYPED and parent.child_by_field_name("name") == name:
        return _class_name(parent.child_by_field_name("type"))
    if parent.type == "method_declaration" and parent.child_by_field_name("name") == name:
        return _class_name(parent.child_by_field_name("type"))  # the declared return type
    return None


def _type_head(node: Node) -> tuple[Node, Node | None]:
    """The whole type a type's first identifier starts (``a.B<T>`` from ``a``) and the node around that type."""
    head = node
    parent = head.parent
    while parent is not None and parent.type == "scoped_type_identifier" and parent.named_children[0] == head:
        head, parent = parent, parent.parent
    if parent is not None and parent.type == "generic_type" and parent.named_children[0] == head:
        head, parent = parent, parent.parent
    return head, parent


def _anonymous_super(node: Node) -> str | None:
    """``new Priced() {...}``: the written name of the type an anonymous class extends or implements, on the first
    identifier of that type (``javalink`` pairs it with the class body that follows)."""
    head, parent = _type_head(node)
    if parent is None or parent.type != "object_creation_expression" or parent.child_by_field_name("type") != head \
            or not any(c.type == "class_body" for c in parent.named_children):
        return None
    return _class_name(head)


def _type_bound(node: Node) -> str | None:
    """``<T extends Priced>``: the first bound of the type parameter ``node`` names, as written."""
    parent = node.parent
    if parent is None or parent.type != "type_parameter" or parent.named_children[0] != node:
        return None
    bound = next((c for c in parent.named_children if c.type == "type_bound"), None)
    return _class_name(bound.named_children[0]) if bound is not None and bound.named_children else None


def _supertype(node: Node) -> str | None:
    """``extends A`` / ``implements a.B<T>``: the written name, on the first identifier of the supertype."""
    head, parent = _type_head(node)
    if parent is not None and parent.type == "type_list":
        parent = parent.parent
        if parent is None or parent.type not in _SUPER_LISTS:
            return None
    elif parent is None or parent.type != "superclass":
        return None
    return _class_name(head)


_NOT_LEXICAL = frozenset({"labeled_statement", "break_statement", "continue_statement", "switch_label"})


def java_plain_shape(node: Node) -> str | None:
    """``type:C`` on a declared name, ``super:C`` on a supertype, ``anon:C`` on the type an anonymous class
    (``new C() {...}``) extends, ``bound:C`` on a type parameter bounded by ``C`` (``<T extends C>``), ``type`` on
    another type position and ``label`` on names that scopes do not resolve (labels, enum ``case`` labels,
    annotation keys)."""
    if node.type == "identifier":
        parent = node.parent
        if parent is not None and (parent.type in _NOT_LEXICAL or (
                parent.type == "element_value_pair" and parent.child_by_field_name("key") == node)):
            return "label"
        declared = _declared_type(node)
        return f"type:{declared}" if declared else None
    if node.type == "type_identifier":
        written = _supertype(node)
        if written:
            return f"super:{written}"
        anonymous = _anonymous_super(node)
        if anonymous:
            return f"anon:{anonymous}"
        bound = _type_bound(node)
        return f"bound:{bound}" if bound else "type"
    return None


_RECEIVERS = {"this": "this.", "super": "super."}


_REFERENCED = {"this": "this::", "super": "super::"}


def java_path_shape(receiver: Node) -> str | None:
    """``((Cart) x).m()`` is ``cast:Cart.``; a member that is not called (``x.f``, ``Outer.Inner``) has its
    receiver's shape plus ``$``; the method of a method reference is ``::`` (``Item::price``), ``this::`` or
    ``super::``: a method, named two characters after its receiver."""
    holder = receiver.parent
    if holder is not None and holder.type == "method_reference":
        return _REFERENCED.get(receiver.type, "::")
    called = holder is not None and holder.type == "method_invocation"
    inner = receiver.named_children[0] if receiver.type == "parenthesized_expression" and \
        receiver.named_children else None
    written = _class_name(inner.child_by_field_name("type")) if inner is not None and \
        inner.type == "cast_expression" else None
    if written:
        return f"cast:{written}." + ("" if called else "$")
    if called:
        return None
    text = (receiver.text or b"").decode("utf-8", "replace")
    return _RECEIVERS.get(text, "obj." if receiver.type.endswith("identifier") else "expr.") + "$"


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
    bare_member_shape="bare.", plain_shape=java_plain_shape, path_shape=java_path_shape,
)
KOTLIN = LanguageSpec(
    "kotlin", ("kotlin.scm",),
    class_kinds=frozenset({"class", "object", "interface"}), members_visible=True,
    binding_kinds=frozenset({"class", "object", "function", "property", "type", "constant"}),
    declaration_types=frozenset({"property_declaration"}),
    imports=kotlin_imports, exports=exports, receiver_shapes={"this": "this.", "super": "super."},
    identifier_types=frozenset({"simple_identifier"}),
)
