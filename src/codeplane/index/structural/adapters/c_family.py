"""C and C++: ``patterns/c.scm`` (+ ``cpp.scm``). In C a file's own functions, file-scope variables and macros are
resolved in it too: a name the file defines is no macro there (``int limit = 3;`` under ``#define limit 5`` would
not compile), and several definitions of one name (``#ifdef`` alternatives, ``extern`` beside the definition) leave
it unresolved. C++ resolves parameters, locals and, in a method (written in its class or outside it in the same file,
``int K::size()``), the members its class and the base classes the file defines declare (a field declared twice,
``#if`` alternatives, is one member to its uses). C++ file scope, namespaces, qualified names (shape ``q:``) and
everything across files are settled by ``clink.py``. ``#include "x"`` imports are linked by path relative to the
including file."""

from __future__ import annotations

import re
from dataclasses import replace

from tree_sitter import Node

from codeplane.index.structural.adapters.generic import Context, LanguageSpec

_WRAPPERS = ("init_declarator", "pointer_declarator", "array_declarator", "parenthesized_declarator",
             "reference_declarator", "attributed_declarator")


def declarator_names(node: Node) -> list[Node]:
    """The declared identifier of a declarator (``*p``, ``a[N]``, ``x = 1`` -> p, a, x); never the sizes/values."""
    current: Node | None = node
    while current is not None:
        if current.type == "identifier":
            return [current]
        if current.type not in _WRAPPERS:
            return []
        inner = current.child_by_field_name("declarator")
        current = inner if inner is not None else next(iter(current.named_children), None)
    return []


def qualified_shape(node: Node) -> str | None:
    """``q:<qualifier>`` for a C++ name written after a qualifier (``ns::K::m``: ``m`` is ``q:ns::K``, ``K`` is
    ``q:ns``; ``::f`` is ``q:``, the global namespace), template arguments left out; None for a name written alone
    or first. The cross-file linker (``clink.py``) looks the name up where the qualifier says."""
    parent = node.parent
    if parent is not None and parent.type == "template_type" and parent.child_by_field_name("name") == node:
        node, parent = parent, parent.parent  # ``ns::Box<int>``: the name of the template
    if parent is None or parent.type != "qualified_identifier":
        return None
    top = parent
    while top.parent is not None and top.parent.type == "qualified_identifier":
        top = top.parent
    text = top.text
    if text is None:
        return None
    written = text[:node.start_byte - top.start_byte].decode("utf-8", "replace")
    if not written:
        return None
    while "<" in written and (stripped := _TEMPLATE_ARGUMENTS.sub("", written)) != written:
        written = stripped
    return "q:" + "::".join(part.strip() for part in written.split("::")[:-1])


_TEMPLATE_ARGUMENTS = re.compile(r"<[^<>]*>")
_OWN_CONTEXT = frozenset({"function_definition", "class_specifier", "struct_specifier", "union_specifier"})


def namespace_shape(node: Node) -> str | None:
    """``n:a::b`` for a name at file scope in the body of ``namespace a { namespace b {`` (a prototype, a global):
    where the linker looks first. Inside a function or class the definition tells it."""
    names: list[str] = []
    current = node.parent
    while current is not None:
        if current.type in _OWN_CONTEXT:
            return None
        if current.type == "namespace_definition":
            name = current.child_by_field_name("name")
            if name is None or name.text is None:
                return None  # an anonymous namespace
            names.append(name.text.decode("utf-8", "replace"))
        current = current.parent
    return "n:" + "::".join(reversed(names)) if names else None


def imports(ctx: Context, node: Node) -> None:
    if node.type == "using_declaration":
        text = " ".join(ctx.src.text(node).removeprefix("using").rstrip(";").split())
        ctx.add_import(node, None, name=text, alias=None, source=text, kind="cpp_using")
        return
    path = node.child_by_field_name("path")
    if path is None:
        return
    if path.type == "system_lib_string":
        source = ctx.src.text(path).strip("<>")
        ctx.add_import(node, None, name=source, alias=None, source=source, kind="c_include_system")
        return
    content = next((c for c in path.named_children if c.type == "string_content"), None)
    source = ctx.src.text(content) if content is not None else ctx.src.text(path).strip('"')
    ctx.add_import(node, None, name=source, alias=None, source=source, kind="c_include")


C = LanguageSpec("c", ("c.scm",), class_kinds=frozenset({"struct"}), binding_kinds=frozenset({"function", "macro"}),
                 resolve_file_scope=True, declaration_types=frozenset({"init_declarator", "declaration"}),
                 imports=imports, pattern_names=declarator_names)
CPP = replace(C, language="cpp", patterns=("c.scm", "cpp.scm"), class_kinds=frozenset({"class", "struct"}),
              binding_kinds=frozenset({"field", "method"}), resolve_file_scope=False,
              members_visible=True, owner_members_visible=True,
              member_name_parents=frozenset({"field_initializer"}), overload_types=frozenset({"field_declaration"}),
              receiver_shapes={"this": "this."}, plain_shape=qualified_shape, file_scope_shape=namespace_shape)
