"""Rust: ``patterns/rust.scm``; ``use`` trees are expanded into one import per leaf, ``mod x;`` is an import of
the module file. Pattern bindings are identifiers that start lowercase (``None`` in a pattern is a variant).

For ``rustlink`` a declared name carries the type its declaration spells (``type:T`` / ``type:a::T``): a
parameter ``v: T`` / ``&T`` / ``&mut T`` / ``T<..>`` (``Self`` is written as the enclosing ``impl``'s type),
``let x: T`` and ``let x = T { .. }`` / ``&T { .. }``. Anything else (a call's result, a pattern) has no shape.
A member that is not called (``x.f``, ``(x.f)(..)``: a field, never a method) has its receiver's shape plus ``$``
(``self.$``, ``obj.$``, ``expr.$``); a method call keeps ``self.`` / ``obj.`` / ``expr.``.
A struct literal's or pattern's field keys are members with a ``struct:T`` shape; a shorthand key
(``T { f }``, also a variable) is a plain name with ``short:T``; ``self.f`` / ``v.f`` inside a macro's tokens
are plain names with ``mself.`` / ``mobj.``, and ``c`` of a path ``a::b::c`` there ``mpath:a::b`` (so is ``f`` of
``impl a::Tr for $t { fn f .. }`` and of ``<T as a::Tr>::f`` there: ``mpath:a::Tr``); a struct field's
declared type carries ``ftype:T``.
"""

from __future__ import annotations

from tree_sitter import Node

from codeplane.index.structural.adapters.generic import Context, LanguageSpec

_SKIP_FIELDS = {"tuple_struct_pattern": "type", "struct_pattern": "type", "match_pattern": "condition"}


def pattern_names(node: Node) -> list[Node]:
    out: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("identifier", "shorthand_field_identifier"):
            text = (current.text or b"").decode("utf-8", "replace")
            if text[:1].islower() or text.startswith("_"):
                out.append(current)
            continue
        if current.type in ("scoped_identifier", "type_identifier", "field_identifier"):
            continue
        skip = _SKIP_FIELDS.get(current.type)
        skipped = {c.id for c in current.children_by_field_name(skip)} if skip else set()
        if current.type == "parameter":
            pattern = current.child_by_field_name("pattern")
            stack.extend([pattern] if pattern is not None else [])
            continue
        if current.type == "field_pattern" and current.child_by_field_name("pattern") is not None:
            stack.append(current.child_by_field_name("pattern"))  # type: ignore[arg-type]
            continue
        stack.extend(c for c in current.named_children if c.id not in skipped)
    return out


def _use(ctx: Context, statement: Node, tree: Node, prefix: str) -> None:
    kind = tree.type
    if kind in ("identifier", "crate", "self", "super", "scoped_identifier", "metavariable"):
        path = ctx.src.text(tree)
        full = f"{prefix}::{path}" if prefix else path
        source, _, name = full.rpartition("::")
        leaf = tree.child_by_field_name("name") if kind == "scoped_identifier" else tree
        binder = leaf if leaf is not None and leaf.type == "identifier" else None
        ctx.add_import(statement, binder, name=name, alias=None, source=source or name, kind="rust_use")
    elif kind == "use_as_clause":
        target = tree.child_by_field_name("path")
        alias = tree.child_by_field_name("alias")
        written = ctx.src.text(target) if target is not None else ""
        full = f"{prefix}::{written}" if prefix and written else written
        source, _, name = full.rpartition("::")
        leaf = target.child_by_field_name("name") if target is not None and target.type == "scoped_identifier" \
            else target
        original = leaf if leaf is not None and leaf.type == "identifier" else None
        ctx.add_import(statement, alias, name=name, alias=ctx.src.text(alias) if alias is not None else None,
                       source=source or name, kind="rust_use", original=original)
    elif kind == "use_wildcard":
        inner = next(iter(tree.named_children), None)
        written = ctx.src.text(inner) if inner is not None else ""
        ctx.add_import(statement, None, name="*", alias=None, source=f"{prefix}::{written}" if prefix else written,
                       kind="rust_use")
    elif kind == "scoped_use_list":
        head = tree.child_by_field_name("path")
        written = ctx.src.text(head) if head is not None else ""
        items = tree.child_by_field_name("list")
        if items is not None:
            _use(ctx, statement, items, f"{prefix}::{written}" if prefix and written else written or prefix)
    elif kind == "use_list":
        for child in tree.named_children:
            _use(ctx, statement, child, prefix)


_PATHS = frozenset({"scoped_identifier", "scoped_type_identifier"})


def member_kept(node: Node) -> bool:
    """A path's last segment is a member (``a::f``: ``f`` of ``a``) except inside ``use``, where it is the name
    the import binds."""
    parent = node.parent
    while parent is not None and parent.type in _PATHS:
        parent = parent.parent
    return parent is None or parent.type not in ("use_declaration", "use_as_clause", "scoped_use_list", "use_list")


def _called(access: Node) -> bool:
    """``x.f(..)`` / ``x.f::<T>(..)``: the field expression is the function a call calls (a method call)."""
    holder, up = access, access.parent
    if up is not None and up.type == "generic_function" and up.child_by_field_name("function") == holder:
        holder, up = up, up.parent
    return up is not None and up.type == "call_expression" and up.child_by_field_name("function") == holder


def path_shape(receiver: Node) -> str | None:
    """``path:crate::a::B`` for the receiver of a path segment (linking resolves it through the module tree);
    ``struct:B`` for the type a struct literal or pattern names before its field keys; ``self.$`` / ``obj.$`` /
    ``expr.$`` for a member that is not called, which can only be a field (a method call is ``x.f(..)``; calling a
    field is written ``(x.f)(..)``), the default shape (``self.``, ``obj.``, ``expr.``) for one that is."""
    parent = receiver.parent
    if parent is not None and parent.type in ("struct_expression", "struct_pattern"):
        return f"struct:{_literal_type(parent)}"
    if parent is not None and parent.type == "field_expression" and parent.child_by_field_name("value") == receiver:
        if _called(parent):
            return None
        # the default shapes (``scoping.finish``) with the mark
        return "self.$" if receiver.text == b"self" else "obj.$" if receiver.type.endswith("identifier") \
            else "expr.$"
    if parent is None or parent.type not in _PATHS:
        return None
    text = (receiver.text or b"").decode("utf-8", "replace")
    return "path:" + "".join(text.split())


def imports(ctx: Context, node: Node) -> None:
    if node.type == "mod_item":
        name = node.child_by_field_name("name")
        text = ctx.src.text(name) if name is not None else ""
        ctx.add_import(node, None, name=text, alias=None, source=text, kind="rust_mod")
        return
    argument = node.child_by_field_name("argument")
    if argument is not None:
        _use(ctx, node, argument, "")


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _written_type(node: Node | None) -> str | None:
    """``T`` or ``a::T`` of a type through ``&``/``&mut`` and type arguments; ``Self`` as the ``impl``'s type."""
    while node is not None and node.type == "reference_type":
        node = node.child_by_field_name("type")
    if node is not None and node.type == "generic_type":
        node = node.child_by_field_name("type")
    if node is None:
        return None
    if node.type == "type_identifier":
        text = _text(node)
        return _self_type(node) if text == "Self" else text
    if node.type == "scoped_type_identifier":
        return "".join(_text(node).split())
    return None


def _self_type(node: Node) -> str | None:
    """The type an ``impl`` block is for, as written (``Self`` inside a trait is nobody's)."""
    parent = node.parent
    while parent is not None and parent.type not in ("impl_item", "trait_item"):
        parent = parent.parent
    if parent is None or parent.type != "impl_item":
        return None
    written = parent.child_by_field_name("type")
    if written is not None and written.type == "generic_type":
        written = written.child_by_field_name("type")
    if written is None or written.type not in ("type_identifier", "scoped_type_identifier"):
        return None
    return "".join(_text(written).split())


def _constructed_type(value: Node | None) -> str | None:
    """The type ``T { .. }`` / ``&T { .. }`` builds."""
    if value is not None and value.type == "reference_expression":
        value = value.child_by_field_name("value")
    if value is None or value.type != "struct_expression":
        return None
    return _written_type(value.child_by_field_name("name"))


def _literal_type(node: Node | None) -> str:
    """The struct a literal or pattern names (``Version { .. }``), as written; ``""`` when it is not spelled."""
    if node is None:
        return ""
    if node.type == "struct_expression":
        return _written_type(node.child_by_field_name("name")) or ""
    if node.type == "struct_pattern":
        return _written_type(node.child_by_field_name("type")) or ""
    return ""


def _macro_member(node: Node) -> str | None:
    """``self.f`` / ``v.f`` inside a macro's token tree (``write!(f, "{}", self.major)``): the tree has tokens,
    not expressions, so the name after a ``.`` is a plain token; ``mself.`` / ``mobj.`` say what precedes it."""
    dot = node.prev_sibling
    if dot is None or dot.type != "." or dot.end_byte != node.start_byte:
        return None
    receiver = dot.prev_sibling
    if receiver is None or receiver.end_byte != dot.start_byte:
        return None
    before = receiver.prev_sibling
    if before is not None and before.type in (".", "::"):
        return None  # ``a.b.f``: the receiver's own type is not spelled
    if receiver.type == "self":
        return "mself."
    return "mobj." if receiver.type == "identifier" else None


def _macro_path(node: Node) -> str | None:
    """``mpath:a::b`` for ``c`` in ``a::b::c`` inside a macro's token tree (``assert_eq!(mylib::a::K, 1)``): plain
    tokens there, linked as the path they spell."""
    segments: list[str] = []
    current = node
    while (sep := current.prev_sibling) is not None and sep.type == "::" and sep.end_byte == current.start_byte:
        head = sep.prev_sibling
        if head is None or head.end_byte != sep.start_byte or head.type not in ("identifier", "crate", "self", "super"):
            return None  # ``<T as Tr>::f``, ``::std::x``: not a path from a module
        segments.append(_text(head))
        current = head
    before = current.prev_sibling
    if not segments or (before is not None and before.type == "." and before.end_byte == current.start_byte):
        return None  # ``x.a::<T>``
    return "mpath:" + "::".join(reversed(segments))


def _macro_trait_path(node: Node) -> str | None:
    """``mpath:Tr`` for ``f`` in ``<T as Tr>::f`` inside a macro's tokens (``assert_eq!(<[u8; 6] as FromHex>::
    from_hex(s), ..)``): the path names the trait's item whatever ``T`` is."""
    sep = node.prev_sibling
    close = sep.prev_sibling if sep is not None and sep.type == "::" else None
    if close is None or close.type != ">":
        return None
    trait: list[Node] = []
    current = close.prev_sibling
    while current is not None and current.type in ("identifier", "::", "crate", "self", "super"):
        trait.append(current)
        current = current.prev_sibling
    if current is None or current.type != "as" or not trait:
        return None
    trait.reverse()
    return _trait_shape(trait)


def _trait_shape(trait: list[Node]) -> str | None:
    """``mpath:a::Tr`` for the tokens ``a :: Tr`` of a trait's path; None for anything else."""
    segments = [_text(t) for t in trait if t.type != "::"]
    spelled = len(trait) == 2 * len(segments) - 1 and all(
        t.type in ("identifier", "crate", "self", "super") for t in trait[::2]) and all(
        t.type == "::" for t in trait[1::2])
    return "mpath:" + "::".join(segments) if segments and spelled else None


def _macro_impl_method(node: Node) -> str | None:
    """``mpath:Trait`` for ``f`` in ``impl Trait for $t { fn f ... }`` written in a macro's tokens (``macro_rules!``
    bodies are never parsed as items): the trait fixes the method's name, so the token is linked as the path
    ``Trait::f`` and a rename of the trait's method takes it along (E0407/E0046 otherwise)."""
    keyword, body = node.prev_sibling, node.parent
    if keyword is None or keyword.type != "fn" or body is None or body.type != "token_tree" \
            or _text(body)[:1] != "{":
        return None
    header: list[Node] = []
    current = body.prev_sibling
    while current is not None and current.type != "impl":
        if current.type in (";", "}") or (current.type == "token_tree" and _text(current)[:1] == "{"):
            return None  # the body of something other than an ``impl`` header
        header.append(current)
        current = current.prev_sibling
    if current is None:
        return None
    header.reverse()
    depth, split = 0, None
    for index, token in enumerate(header):  # ``impl<T> Tr<T> for X``: the ``for`` outside angle brackets
        depth += (token.type == "<") - (token.type == ">")
        if depth == 0 and token.type == "for":
            split = index
            break
    if split is None:
        return None  # an inherent ``impl $t``: whose method it is is not written
    trait = header[:split]
    if trait and trait[0].type == "<":  # the impl's own generics
        close = next((i for i, t in enumerate(trait) if t.type == ">"), None)
        trait = trait[close + 1:] if close is not None else []
    if "<" in (t.type for t in trait):  # the trait's arguments (``Tr<T>``)
        trait = trait[:[t.type for t in trait].index("<")]
    return _trait_shape(trait)


def _field_type(node: Node) -> str | None:
    """``ftype:T`` when ``node`` is the type a struct field is declared with (``pub pre: Prerelease``)."""
    head = node
    while head.parent is not None and (head.parent.type == "reference_type" or (
            head.parent.type == "generic_type" and head.parent.child_by_field_name("type") == head)):
        head = head.parent
    holder = head.parent
    if holder is None or holder.type != "field_declaration" or holder.child_by_field_name("type") != head:
        return None
    written = _written_type(head)
    return f"ftype:{written}" if written is not None else None


def plain_shape(node: Node) -> str | None:
    parent = node.parent
    if parent is None:
        return None
    if node.type == "type_identifier":
        return _field_type(node)
    if node.type == "shorthand_field_identifier" and parent.type == "field_pattern":
        return f"short:{_literal_type(parent.parent)}"  # ``let Version { major, .. } = v``
    if node.type != "identifier":
        return None
    if parent.type == "shorthand_field_initializer":  # ``Version { major }``: a field key and a variable
        return f"short:{_literal_type(parent.parent.parent if parent.parent is not None else None)}"
    if parent.type == "token_tree":
        return _macro_member(node) or _macro_path(node) or _macro_trait_path(node) or _macro_impl_method(node)
    if parent.child_by_field_name("pattern") != node:
        return None
    written: str | None = None
    if parent.type == "parameter":
        written = _written_type(parent.child_by_field_name("type"))
    elif parent.type == "let_declaration":
        declared = parent.child_by_field_name("type")
        written = _written_type(declared) if declared is not None \
            else _constructed_type(parent.child_by_field_name("value"))
    return f"type:{written}" if written is not None else None


RUST = LanguageSpec(
    "rust", ("rust.scm",),
    class_kinds=frozenset({"impl", "trait", "struct", "enum"}),
    binding_kinds=frozenset({"function", "struct", "enum", "trait", "type", "constant", "static", "module", "macro"}),
    declaration_types=frozenset({"let_declaration"}),
    imports=imports, receiver_shapes={"self": "self."},
    identifier_types=frozenset({"identifier", "shorthand_field_identifier"}),
    pattern_names=pattern_names, member_kept=member_kept, path_shape=path_shape, plain_shape=plain_shape,
    shadowing_falls_through=True,
)
