"""A JS/TS module's top-level statements as a symbol move reads and edits them (issue 20).

Which statement declares a name (``export``/``export default`` included), what names a declaration binds, the
names import statements bind, a specifier string's text and the specifier style a file uses (an extension or
not); and the statement-sized edits a move makes: a statement's text with the comments directly above it, its
deletion with the blank lines after it, an import line inserted after the last import.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from codeplane.refactor.jsimports import JS_SUFFIXES, render_specifier, resolve_specifier, ts_output_suffix
from codeplane.refactor.lexical import _parser, grammar_for
from codeplane.refactor.pyimporters import Insertions
from codeplane.refactor.spans import SourceText, SpanEdit

_DECLARATIONS = ("function_declaration", "generator_function_declaration", "class_declaration",
                 "abstract_class_declaration", "lexical_declaration", "variable_declaration",
                 "interface_declaration", "type_alias_declaration", "enum_declaration")
NAME_NODES = ("identifier", "type_identifier", "shorthand_property_identifier")


def node_text(node: Any) -> str:
    return bytes(node.text).decode("utf-8", errors="replace")


def parse_js(src: SourceText) -> Any | None:
    grammar = grammar_for(src.path)
    parser = _parser(grammar) if grammar else None
    return None if parser is None else parser.parse(src.data).root_node


def declared_names(decl: Any) -> list[str]:
    if decl.type in ("lexical_declaration", "variable_declaration"):
        out = []
        for child in decl.named_children:
            name = child.child_by_field_name("name") if child.type == "variable_declarator" else None
            if name is not None and name.type == "identifier":
                out.append(node_text(name))
        return out
    name = decl.child_by_field_name("name")
    return [node_text(name)] if name is not None else []


@dataclass
class TopStatement:
    node: Any
    declaration: Any | None
    exported: bool
    default: bool
    #: A TypeScript function's overload signatures, the statements before ``node`` (its implementation): one
    #: symbol with it, so they move with it (``function f(n: number): number;`` left behind is TS2391).
    signatures: tuple[Any, ...] = ()

    @property
    def first(self) -> Any:
        """The first statement of the declaration (its first overload signature, if any)."""
        return self.signatures[0] if self.signatures else self.node

    @property
    def nodes(self) -> tuple[Any, ...]:
        return (*self.signatures, self.node)


def with_overloads(stmt: TopStatement, name: str) -> TopStatement:
    """``stmt`` (a function's implementation or one of its overload signatures) as the whole overloaded function:
    the signatures of ``name`` before the implementation (comments between them go along)."""
    def declares(node: Any | None, kind: str) -> bool:
        if node is not None and node.type == "function_signature":  # not exported: no statement of its own
            return kind == node.type and declared_names(node) == [name]
        other = top_statement(node) if node is not None else None
        return other is not None and other.declaration is not None and other.declaration.type == kind \
            and declared_names(other.declaration) == [name]

    def sibling(node: Any, forward: bool) -> Any | None:
        node = node.next_named_sibling if forward else node.prev_named_sibling
        while node is not None and node.type == "comment":
            node = node.next_named_sibling if forward else node.prev_named_sibling
        return node

    if stmt.declaration is None or stmt.declaration.type not in ("function_declaration", "function_signature"):
        return stmt
    group = [stmt.node]
    while stmt.declaration.type == "function_signature":
        after = sibling(group[-1], True)
        if not declares(after, "function_signature") and not declares(after, "function_declaration"):
            return stmt  # an ambient overload set (``declare``, a .d.ts): no implementation anchors it
        group.append(after)
        if declares(after, "function_declaration"):
            break
    before = sibling(group[0], False)
    while declares(before, "function_signature"):
        group.insert(0, before)
        before = sibling(before, False)
    main = top_statement(group[-1])
    if len(group) == 1 or main is None:
        return stmt
    return TopStatement(group[-1], main.declaration, main.exported, main.default, tuple(group[:-1]))


def top_statement(node: Any) -> TopStatement | None:
    if node.type == "export_statement":
        decl = node.child_by_field_name("declaration")
        default = any(c.type == "default" for c in node.children)
        if decl is None and default:
            value = node.child_by_field_name("value")
            decl = value if value is not None and value.type in ("class", "function_expression") else None
        return TopStatement(node, decl, True, default) if decl is not None else None
    if node.type in _DECLARATIONS:
        return TopStatement(node, node, False, False)
    return None


@dataclass(frozen=True)
class ImportBinding:
    """A module-level name bound by an import statement: ``kind`` is named/default/namespace."""

    local: str
    kind: str
    imported: str
    specifier: str
    type_only: bool


def import_bindings(root: Any) -> dict[str, ImportBinding]:
    found: dict[str, ImportBinding] = {}
    for stmt in root.named_children:
        if stmt.type != "import_statement":
            continue
        source = stmt.child_by_field_name("source")
        spec = fragment(source)
        if spec is None:
            continue
        type_only = any(c.type == "type" for c in stmt.children)
        for clause in stmt.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    found[node_text(part)] = ImportBinding(node_text(part), "default", "default", spec, type_only)
                elif part.type == "namespace_import":
                    ident = next((c for c in part.named_children if c.type == "identifier"), None)
                    if ident is not None:
                        found[node_text(ident)] = ImportBinding(node_text(ident), "namespace", "*", spec, type_only)
                elif part.type == "named_imports":
                    for item in part.named_children:
                        if item.type != "import_specifier":
                            continue
                        name = item.child_by_field_name("name")
                        alias = item.child_by_field_name("alias")
                        if name is None:
                            continue
                        local = node_text(alias) if alias is not None else node_text(name)
                        found[local] = ImportBinding(local, "named", node_text(name), spec,
                                                      type_only or any(c.type == "type" for c in item.children))
    return found


def fragment(node: Any) -> str | None:
    if node is None or node.type != "string":
        return None
    frag = next((c for c in node.named_children if c.type == "string_fragment"), None)
    return node_text(frag) if frag is not None else None


def fragment_node(node: Any) -> Any | None:
    if node is None or node.type != "string":
        return None
    return next((c for c in node.named_children if c.type == "string_fragment"), None)


def walk_code(root: Any) -> Iterable[Any]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if node.type not in ("string", "comment", "template_string"):
            stack.extend(reversed(node.children))


def relative_specifiers(root: Any | None) -> list[str]:
    """The relative specifiers of a module's ``import``/``export … from`` statements."""
    return [s for s in (fragment(n.child_by_field_name("source")) for n in (root.named_children if root else [])
                        if n.type in ("import_statement", "export_statement")) if s and s.startswith(".")]


def specifier_style(path: str, moved: str, root: Any | None, *, project_suffixed: bool = False,
                    node_esm: bool = False) -> str:
    """A stand-in specifier carrying the file's convention: with the moved file's extension when the file's
    relative specifiers have one (ESM ``.mjs``/NodeNext), extensionless otherwise; a file with none of its own
    follows the project's (``project_suffixed``: Node's ES modules need the extension), or, an ES module its
    tsconfig compiles for Node (``node_esm``), the extension Node loads (``./x.js`` for ``x.ts``)."""
    suffix = posixpath.splitext(moved)[1]
    specs = relative_specifiers(root)
    if specs:
        suffixed = [s for s in specs if s.endswith(JS_SUFFIXES)]
        if not suffixed:
            return "./x"
        # A TypeScript file writing ``./a.js`` for ``a.ts`` (NodeNext, bundler ESM) names the moved ``.ts`` file
        # the same way: ``./x.ts`` is an error there unless the project allows TS extensions, as its own show.
        counterpart = ts_output_suffix(suffix)
        if counterpart is not None and any(s.endswith(counterpart) for s in suffixed) and \
                not any(s.endswith(suffix) for s in suffixed):
            return "./x" + counterpart
        return "./x" + suffix
    if node_esm:
        return "./x" + (ts_output_suffix(suffix) or suffix)
    return "./x" + suffix if project_suffixed or path.endswith((".mjs", ".cjs", ".mts", ".cts")) else "./x"


def dest_specifier(importer: str, root: Any | None, moved: str, dest: str, *, project_suffixed: bool = False,
                   node_esm: bool = False) -> str:
    """Specifier from ``importer`` to the destination, in the file's style (extension or not)."""
    return render_specifier(importer, moved, dest, specifier_style(importer, moved, root,
                                                                   project_suffixed=project_suffixed,
                                                                   node_esm=node_esm))


def in_export_clause(node: Any) -> bool:
    parent = node.parent
    return parent is not None and parent.type == "export_specifier"


def statement_text(src: SourceText, node: Any, first: Any | None = None) -> str:
    """The text of ``node`` with the comments directly above it (or above ``first``, where it begins)."""
    start = _first_line(src, first if first is not None else node)
    end = node.end_point[0] + 1
    return "\n".join(src.line_text(n) for n in range(start, end + 1))


def _first_line(src: SourceText, node: Any) -> int:
    start: int = node.start_point[0] + 1
    prev = node.prev_named_sibling
    # Comments directly above (JSDoc) travel with the declaration.
    while prev is not None and prev.type == "comment" and prev.end_point[0] + 1 == start - 1:
        start = prev.start_point[0] + 1
        prev = prev.prev_named_sibling
    return start


def export_after_comments(body: str) -> str:
    lines = body.split("\n")
    for index, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped and not stripped.startswith(("/*", "*", "//")):
            lines[index] = "export " + line
            break
    return "\n".join(lines)


def delete_statement_lines(src: SourceText, node: Any, first: Any | None = None) -> SpanEdit:
    start = _first_line(src, first if first is not None else node)
    end = node.end_point[0] + 1
    nxt = end + 1
    total = len(src.lines)
    while nxt <= total and not src.line_text(nxt).strip():
        nxt += 1
    if nxt <= total:
        if start > 1 and src.line_text(start - 1).strip() and nxt - 1 > end:
            nxt -= 1  # code right above it: one blank line stays between that and what followed the statement
        return SpanEdit(src.path, start, 0, nxt, 0, src.slice(start, 0, nxt, 0), "", "moved_definition")
    prev = start - 1
    while prev >= 1 and not src.line_text(prev).strip():
        prev -= 1
    end_col = len(src.line_text(end))
    if prev >= 1:
        col = len(src.line_text(prev))
        return SpanEdit(src.path, prev, col, end, end_col, src.slice(prev, col, end, end_col), "", "moved_definition")
    return SpanEdit(src.path, start, 0, end, end_col, src.slice(start, 0, end, end_col), "", "moved_definition")


def insert_after_imports(inserts: Insertions, src: SourceText, root: Any, line: str,
                          reason: str = "import") -> None:
    last = None
    for node in root.named_children:
        if node.type == "import_statement":
            last = node
        elif node.type != "comment":
            break
    insert_below(inserts, src, last, line, reason)


def insert_below(inserts: Insertions, src: SourceText, last: Any | None, line: str, reason: str) -> None:
    """``line`` on its own line below the statement ``last``, or at the top of the file (a blank line after it)."""
    if last is not None:
        inserts.after(src, last, line, reason)
    else:
        inserts.add(src.path, 1, 0, line + "\n", reason)
        if src.line_text(1).strip():
            inserts.trailers[(src.path, 1, 0)] = "\n"


def reexports(path: str, name: str, target: str, *, files: frozenset[str], root_of: Callable[[str], Any | None],
              depth: int = 0) -> bool:
    """Whether module ``path`` (a barrel) exports ``name`` as ``target`` declares it: through ``export * from``
    or ``export { name } from`` chains (at most four deep), as ``import { die } from "../internal"`` gets
    ``die`` from ``utils/errors.ts``."""
    root = root_of(path) if depth < 4 else None
    if root is None:
        return False
    for node in root.named_children:
        spec = fragment(node.child_by_field_name("source")) if node.type == "export_statement" else None
        resolved = resolve_specifier(path, spec, files) if spec else None
        if resolved is None:
            continue
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        if clause is None:
            if any(c.type == "namespace_export" for c in node.named_children):
                continue  # ``export * as ns from``: the name is ns.name there
            passed = name
        else:
            names = [(node_text(s.child_by_field_name("name")), s.child_by_field_name("alias"))
                     for s in clause.named_children if s.type == "export_specifier"]
            passed = next((local for local, alias in names
                           if (node_text(alias) if alias is not None else local) == name), "")
            if not passed:
                continue
        if resolved == target:
            if passed == name:
                return True
            continue
        if reexports(resolved, passed, target, files=files, root_of=root_of, depth=depth + 1):
            return True
    return False
