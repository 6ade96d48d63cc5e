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
        if current.type == "function_declarator" and _constructed_object(current):
            current = current.child_by_field_name("declarator")
            continue
        if current.type not in _WRAPPERS:
            return []
        inner = current.child_by_field_name("declarator")
        current = inner if inner is not None else next(iter(current.named_children), None)
    return []


def _constructed_object(declarator: Node) -> bool:
    """C++'s most vexing parse in a function body: ``Slice input(rep_);`` reads as a function declaration whose
    parameter types are ``rep_``; it constructs an object ``input``. A block-scope declaration whose "parameters" are
    all lone names (no declarator, no builtin type) is taken as that object."""
    declaration = declarator.parent
    if declaration is None or declaration.type != "declaration" or declaration.parent is None \
            or declaration.parent.type != "compound_statement":
        return False
    parameters = declarator.child_by_field_name("parameters")
    named = parameters.named_children if parameters is not None else []
    return bool(named) and all(p.type == "parameter_declaration" and p.child_by_field_name("declarator") is None
                               and (t := p.child_by_field_name("type")) is not None and t.type == "type_identifier"
                               for p in named)


def binds_param(declarator: Node) -> bool:
    """A parameter's declarator binds in its function unless the parameter belongs to another parameter's function
    type (``void (*deleter)(const Slice& key, void* value)`` in LevelDB's ``LRUCache::Insert(const Slice& key,
    ...)``: the inner ``key`` names nothing in the body; taken as a second ``key``, it left every use unbound)."""
    outer = declarator.parent.parent if declarator.parent is not None else None  # (the parameter list)
    while outer is not None and outer.type not in ("function_definition", "declaration", "field_declaration",
                                                   "lambda_expression", "compound_statement"):
        if outer.type in ("parameter_declaration", "optional_parameter_declaration"):
            return False
        outer = outer.parent
    return True


#: What declares a name with a type written before it (the return type, for a function).
_DECLARING = frozenset({"parameter_declaration", "optional_parameter_declaration", "declaration", "field_declaration",
                        "for_range_loop", "function_definition"})
#: Where a C++ declaration is at file scope (a namespace's body too): its name keeps its namespace shape (``n:``).
_FILE_LEVEL = frozenset({"translation_unit", "declaration_list", "linkage_specification"})
_NAMED_TYPES = frozenset({"struct_specifier", "union_specifier", "class_specifier", "enum_specifier"})
_CLIMBED = frozenset({*_WRAPPERS, "function_declarator"})
_FIRST_PARENTS = _CLIMBED | _DECLARING


def declared_type(node: Node) -> str | None:
    """``type:T`` on the name a declaration gives a value of the class or struct ``T`` (``Node* n``, ``const Shape&
    s``, ``struct point *p``, ``Edge* in_edge_;``, ``for (Edge* e : edges)``; a function's name: its return type),
    for the refactor planner's receivers (``n->dirty()`` is a ``Node``'s). Only a type written as one name, possibly
    qualified (``geo::Shape``: ``Shape``); builtin types and other templates say nothing. A standard container of a
    class is ``type:[]T``, an iterator over one or a smart pointer to one ``type:*T``, and ``for (auto* n : nodes)``
    ``each:nodes``."""
    current, parent = node, node.parent
    if parent is None or parent.type not in _FIRST_PARENTS or node.type not in ("identifier", "field_identifier"):
        return None
    while parent is not None and parent.type in _CLIMBED:
        inner = parent.child_by_field_name("declarator") if parent.type != "reference_declarator" else next(
            iter(parent.named_children), None)
        if inner is None or inner.id != current.id:
            return None  # a size, a default value, a parameter list: not the declared name
        current, parent = parent, parent.parent
    if parent is None or parent.type not in _DECLARING or not any(
            d.id == current.id for d in parent.children_by_field_name("declarator")):
        return None
    written = parent.child_by_field_name("type")
    if written is not None and written.type == "placeholder_type_specifier":
        ranged = parent.child_by_field_name("right") if parent.type == "for_range_loop" else None
        # ``for (auto* n : nodes)``: whatever ``nodes`` (a standard container of a class) holds
        return f"each:{ranged.text.decode()}" if ranged is not None and ranged.type == "identifier" \
            and ranged.text is not None else None
    element = _iterated(written) or _pointed(written)
    if element is not None:
        return "type:*" + element
    element = _contained(written)
    if element is not None:
        return "type:[]" + element
    while written is not None and written.type == "qualified_identifier":
        written = written.child_by_field_name("name")
    if written is not None and written.type in _NAMED_TYPES:
        written = written.child_by_field_name("name")
    if written is None or written.type != "type_identifier" or written.text is None:
        return None
    return "type:" + written.text.decode("utf-8", "replace")


_CONTAINERS = frozenset({"vector", "list", "deque", "set", "multiset", "unordered_set", "unordered_multiset"})
_ITERATORS = frozenset({"iterator", "const_iterator", "reverse_iterator", "const_reverse_iterator"})


def _contained(written: Node | None) -> str | None:
    """``std::vector<Node*>``: ``Node``, the class a standard container holds (written as one name)."""
    while written is not None and written.type == "qualified_identifier":
        written = written.child_by_field_name("name")
    if written is None or written.type != "template_type":
        return None
    return _element(written)


def _element(template: Node) -> str | None:
    container, arguments = template.child_by_field_name("name"), template.child_by_field_name("arguments")
    if container is None or container.text is None or container.text.decode() not in _CONTAINERS \
            or arguments is None or arguments.named_child_count != 1:
        return None
    element = arguments.named_children[0].child_by_field_name("type")
    pointed = _pointed(element)  # ``std::vector<std::unique_ptr<Node>>``
    if pointed is not None:
        return pointed
    while element is not None and element.type == "qualified_identifier":
        element = element.child_by_field_name("name")
    return element.text.decode() if element is not None and element.type == "type_identifier" \
        and element.text is not None else None


_SMART_POINTERS = frozenset({"unique_ptr", "shared_ptr"})


def _pointed(written: Node | None) -> str | None:
    """``std::unique_ptr<Node>``, ``std::shared_ptr<const Node>``: ``Node``, what ``p->m`` reaches (``p.reset()`` is
    the pointer's own, as an iterator's ``i.m`` is: both are ``type:*Node``)."""
    while written is not None and written.type == "qualified_identifier":
        written = written.child_by_field_name("name")
    if written is None or written.type != "template_type":
        return None
    pointer, arguments = written.child_by_field_name("name"), written.child_by_field_name("arguments")
    if pointer is None or pointer.text is None or pointer.text.decode() not in _SMART_POINTERS \
            or arguments is None or arguments.named_child_count != 1:
        return None
    element = arguments.named_children[0].child_by_field_name("type")
    while element is not None and element.type == "qualified_identifier":
        element = element.child_by_field_name("name")
    return element.text.decode() if element is not None and element.type == "type_identifier" \
        and element.text is not None else None


def _iterated(written: Node | None) -> str | None:
    """``std::vector<Node*>::iterator``: ``Node``, the class of what the iterator points at (``(*i)->m``, ``i->m``);
    a container of the standard library only, its element a class written as one name."""
    while written is not None and written.type == "qualified_identifier":
        scope, name = written.child_by_field_name("scope"), written.child_by_field_name("name")
        if scope is not None and scope.type == "template_type" and name is not None and name.type == "type_identifier" \
                and name.text is not None and name.text.decode() in _ITERATORS:
            return _element(scope)
        written = name
    return None


def _at_file_level(node: Node) -> bool:
    parent = node.parent
    while parent is not None and parent.type == "template_declaration":
        parent = parent.parent
    return parent is None or parent.type in _FILE_LEVEL


def cpp_declared_type(node: Node) -> str | None:
    """``declared_type`` but at file scope, where the namespace shape (``n:``) tells the linker where the name
    lives."""
    shape = declared_type(node)
    if shape is None:
        return None
    declaring = node.parent
    while declaring is not None and declaring.type not in _DECLARING:
        declaring = declaring.parent
    return None if declaring is None or (declaring.type in ("declaration", "function_definition")
                                         and _at_file_level(declaring)) else shape


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
        return _defined_apart_shape(top)
    while "<" in written and (stripped := _TEMPLATE_ARGUMENTS.sub("", written)) != written:
        written = stripped
    return "q:" + "::".join(part.strip() for part in written.split("::")[:-1])


_TEMPLATE_ARGUMENTS = re.compile(r"<[^<>]*>")
_CLASS_SPECIFIERS = frozenset({"class_specifier", "struct_specifier", "union_specifier"})
_OWN_CONTEXT = frozenset({"function_definition", *_CLASS_SPECIFIERS})
_WRAPPING_DECLARATORS = frozenset({"pointer_declarator", "reference_declarator"})


def _before_body(specifier: Node, node: Node) -> bool:
    body = specifier.child_by_field_name("body")
    return body is None or node.start_byte < body.start_byte


def _defined_apart_shape(qualified: Node) -> str | None:
    """The namespace shape of the first name of a function definition's qualified name (``MemTable`` in ``int
    MemTable::KeyComparator::operator()(...) {``): C++ looks it up in the namespace around the definition, not in
    the function, which may have no definition row of its own to give the linker a class (an operator)."""
    declarator = qualified.parent
    if declarator is None or declarator.type != "function_declarator" or \
            declarator.child_by_field_name("declarator") != qualified:
        return None
    outer = declarator.parent
    while outer is not None and outer.type in _WRAPPING_DECLARATORS:
        outer = outer.parent
    return namespace_shape(outer) if outer is not None and outer.type == "function_definition" else None


def namespace_shape(node: Node) -> str | None:
    """``n:a::b`` for a name at file scope in the body of ``namespace a { namespace b {`` (a prototype, a global):
    where the linker looks first. Inside a function or class the definition tells it."""
    names: list[str] = []
    current = node.parent
    while current is not None:
        # A class's own name and its bases (``class MemTable;``, ``class I : public WriteBatch::Handler {``) are
        # names of the namespace it is written in; only its body is its own.
        if current.type in _OWN_CONTEXT and not (current.type in _CLASS_SPECIFIERS and _before_body(current, node)):
            return None
        if current.type == "namespace_definition":
            name = current.child_by_field_name("name")
            if name is not None and name.text is not None:  # an anonymous namespace's names are its parent's
                names.append(name.text.decode("utf-8", "replace"))
        current = current.parent
    return "n:" + "::".join(reversed(names)) if names else None


def designator_shape(receiver: Node) -> str | None:
    """``init:T`` for the field a designated initializer names (``.x`` in ``struct point q = {.x = 1}``,
    ``(Point){.x = 1}``, ``{[0].x = 1}`` for an array of them), ``init:T.a`` inside the value of field ``a``
    (``{.a = {.x = 1}}``, ``.a.x = 1``): the type as written and the fields down to the one holding the member, for
    the refactor planner. None where the syntax does not say (a positional element, an anonymous struct, a pointer)."""
    pair = receiver.parent
    if receiver.type != "field_designator" or pair is None or pair.type != "initializer_pair":
        return None
    held = _list_type(pair.parent)
    for designator in pair.children_by_field_name("designator"):
        if held is None or designator.id == receiver.id:
            break
        held = _designated(held, designator)
    return f"init:{'.'.join(held[0])}" if held is not None and held[1] == 0 else None


#: A type as written and its fields down to a value, and how many array dimensions are left to index.
_Held = tuple[tuple[str, ...], int]


def _designated(held: _Held, designator: Node) -> _Held | None:
    """What ``.f`` or ``[i]`` reaches in a value of ``held``."""
    path, dimensions = held
    if designator.type == "subscript_designator" and dimensions > 0:
        return path, dimensions - 1
    field = next((c for c in designator.named_children if c.type == "field_identifier"), None)
    if designator.type != "field_designator" or dimensions or field is None or field.text is None:
        return None
    return (*path, field.text.decode("utf-8", "replace")), 0


def _list_type(initializer: Node | None) -> _Held | None:
    """The type of the value an initializer list (``{...}``) initialises, as far as the syntax says."""
    parent = initializer.parent if initializer is not None and initializer.type == "initializer_list" else None
    if parent is None:
        return None
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == initializer:
        declaration = parent.parent
        dimensions = _dimensions(parent.child_by_field_name("declarator"))
        written = _type_name(declaration.child_by_field_name("type")) \
            if declaration is not None and declaration.type == "declaration" else None
        return ((written,), dimensions) if written is not None and dimensions is not None else None
    if parent.type == "compound_literal_expression":
        written_type = parent.child_by_field_name("type")
        if written_type is not None and written_type.type == "type_descriptor":
            if written_type.child_by_field_name("declarator") is not None:
                return None  # ``(struct point[]){...}``
            written_type = written_type.child_by_field_name("type")
        written = _type_name(written_type)
        return ((written,), 0) if written is not None else None
    if parent.type == "initializer_list":  # an element of an array: ``{{.x = 1}, {.x = 2}}``
        outer = _list_type(parent)
        return (outer[0], outer[1] - 1) if outer is not None and outer[1] > 0 else None
    if parent.type == "initializer_pair" and parent.child_by_field_name("value") == initializer:
        held = _list_type(parent.parent)
        for designator in parent.children_by_field_name("designator"):
            held = _designated(held, designator) if held is not None else None
        return held
    return None


def _dimensions(declarator: Node | None) -> int | None:
    """How many ``[N]`` a declared name has (``arr[2][3]``: 2); None behind a pointer or a function."""
    count = 0
    while declarator is not None and declarator.type == "array_declarator":
        count += 1
        declarator = declarator.child_by_field_name("declarator")
    return count if declarator is not None and declarator.type == "identifier" else None


def _type_name(written: Node | None) -> str | None:
    """``struct point``, ``Point``, ``geo::Point``: the type's name (None for an anonymous struct, a template)."""
    while written is not None and written.type == "qualified_identifier":
        written = written.child_by_field_name("name")
    if written is not None and written.type in _NAMED_TYPES:
        written = written.child_by_field_name("name")
    if written is None or written.type != "type_identifier" or written.text is None:
        return None
    return written.text.decode("utf-8", "replace")


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
                 imports=imports, pattern_names=declarator_names, declared_shape=declared_type,
                 binds_param=binds_param, path_shape=designator_shape)
CPP = replace(C, language="cpp", patterns=("c.scm", "cpp.scm"), class_kinds=frozenset({"class", "struct"}),
              binding_kinds=frozenset({"field", "method"}), resolve_file_scope=False,
              members_visible=True, owner_members_visible=True,
              member_name_parents=frozenset({"field_initializer"}), overload_types=frozenset({"field_declaration"}),
              receiver_shapes={"this": "this."}, plain_shape=qualified_shape, file_scope_shape=namespace_shape,
              declared_shape=cpp_declared_type)
