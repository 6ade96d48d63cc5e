"""Rewrite Python imports for a file or package move (spec §8.10, issue 9 item 4).

For every ``import``/``from ... import`` in a file the statement's module is resolved to a repository file
(:mod:`pymodules`). When that file moves — or the importing file itself moves and the import is relative —
the statement is re-rendered at its exact span: absolute imports stay absolute, relative ones stay relative
when the new location allows it. ``import a.b`` also rewrites the file's ``a.b.x`` attribute chains.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codeplane.refactor.lexical import _parser
from codeplane.refactor.pymodules import PyModules, relative_form
from codeplane.refactor.spans import SourceText, SpanEdit


@dataclass(frozen=True)
class PyMove:
    """A move over Python files: ``moved`` maps old file path -> new file path."""

    mods: PyModules
    moved: dict[str, str]

    def new_module(self, path: str) -> str:
        if path in self.moved:
            return self.mods.module_for_new_path(path, self.moved[path])
        return self.mods.module_of(path)

    def new_package(self, importer: str) -> str:
        module = self.new_module(importer)
        new_path = self.moved.get(importer, importer)
        if new_path.endswith(("__init__.py", "__init__.pyi")):
            return module
        return module.rpartition(".")[0]


def _text(node: Any) -> str:
    return bytes(node.text).decode("utf-8", errors="replace")


def _render_module(move: PyMove, importer: str, target_module: str, relative: bool) -> str:
    if relative:
        form = relative_form(move.new_package(importer), target_module)
        if form is not None:
            level, rest = form
            return "." * level + rest
    return target_module


def _module_part(node: Any) -> tuple[int, str]:
    """``(level, dotted)`` of a ``from`` statement's module node (level 0 = absolute)."""
    if node.type == "relative_import":
        level = 0
        dotted = ""
        for child in node.children:
            if child.type == "import_prefix":
                level = _text(child).count(".")
            elif child.type == "dotted_name":
                dotted = _text(child)
        return level, dotted
    return 0, _text(node)


def _resolve(move: PyMove, importer: str, level: int, dotted: str) -> str | None:
    if level == 0:
        return move.mods.resolve_module(dotted)
    return move.mods.resolve_relative(importer, level, dotted)


def _attribute_chains(root: Any, dotted: str) -> list[Any]:
    """Attribute nodes whose source text is exactly ``dotted`` (``a.b`` in ``a.b.c()``)."""
    found: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "attribute" and _text(node) == dotted:
            found.append(node)
            continue
        if node.type in ("import_statement", "import_from_statement"):
            continue
        stack.extend(node.children)
    return found


def _plain_import_edits(move: PyMove, src: SourceText, stmt: Any, root: Any) -> list[SpanEdit]:
    edits: list[SpanEdit] = []
    for child in stmt.named_children:
        aliased = child.type == "aliased_import"
        name_node = child.child_by_field_name("name") if aliased else child
        if name_node is None or name_node.type != "dotted_name":
            continue
        dotted = _text(name_node)
        target = move.mods.resolve_module(dotted)
        if target is None or target not in move.moved:
            continue
        new_dotted = move.new_module(target)
        edits.append(src.edit_for_node(name_node, new_dotted, "import"))
        if not aliased:
            edits += [src.edit_for_node(n, new_dotted, "module_reference") for n in _attribute_chains(root, dotted)]
    return edits


def _imported_name(name: Any) -> Any:
    """The imported name of a ``from`` statement's name node (``a`` of ``a as b``)."""
    return name.child_by_field_name("name") if name.type == "aliased_import" else name


def _from_import_edit(move: PyMove, src: SourceText, stmt: Any) -> SpanEdit | None:
    importer = src.path
    module_node = stmt.child_by_field_name("module_name")
    if module_node is None:
        return None
    level, dotted = _module_part(module_node)
    base = _resolve(move, importer, level, dotted)
    names = [c for c in stmt.children_by_field_name("name")]
    # A name that is itself a moved submodule (``from pkg import a`` with pkg/a.py moving) must now be
    # imported from its new parent; the rest of the statement keeps the old module.
    moved_names: list[tuple[Any, str]] = []
    if base is None or move.mods.is_package_init(base):
        for name in names:
            node = _imported_name(name)
            sub = _resolve(move, importer, level, f"{dotted}.{_text(node)}" if dotted else _text(node))
            if sub is not None and sub in move.moved and sub != base:
                moved_names.append((name, sub))
    base_module = move.new_module(base) if base is not None else dotted
    if base is not None:
        # A submodule moving along with its package (a directory move: ``from pkg.utils import timezone``) is
        # still ``<new package>.timezone``: the module part's edit carries it, and rewriting the whole
        # statement as well would plan two overlapping edits of one import.
        moved_names = [(n, s) for n, s in moved_names
                       if move.new_module(s) != f"{base_module}.{_text(_imported_name(n))}"]
    module_changes = base is not None and (base in move.moved or (level > 0 and importer in move.moved))
    if not moved_names and not module_changes:
        return None
    new_from = _render_module(move, importer, base_module, level > 0) if base is not None else _text(module_node)
    if not moved_names:
        if new_from == _text(module_node):
            return None
        return src.edit_for_node(module_node, new_from, "import")
    indent = src.line_text(src.node_span(stmt)[0])[: src.node_span(stmt)[1]]
    lines: list[str] = []
    kept = [n for n in names if all(n.id != m.id for m, _ in moved_names)]
    if kept:
        lines.append(f"from {new_from} import {', '.join(_text(n) for n in kept)}")
    for name, sub in moved_names:
        local = _text(name.child_by_field_name("alias")) if name.type == "aliased_import" else _text(name)
        new_module = move.new_module(sub)
        parent, _, stem = new_module.rpartition(".")
        rendered_parent = _render_module(move, importer, parent, level > 0) if parent else ""
        clause = stem if stem == local else f"{stem} as {local}"
        lines.append(f"from {rendered_parent} import {clause}" if rendered_parent else f"import {new_module}"
                     + ("" if stem == local else f" as {local}"))
    return src.edit_for_node(stmt, ("\n" + indent).join(lines), "import")


def python_move_edits(move: PyMove, src: SourceText) -> list[SpanEdit]:
    """Edits that keep ``src``'s imports pointing at the same files after the move (sorted)."""
    parser = _parser("python")
    if parser is None:
        return []
    root = parser.parse(src.data).root_node
    edits: list[SpanEdit] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "import_statement":
            edits += _plain_import_edits(move, src, node, root)
        elif node.type == "import_from_statement":
            edit = _from_import_edit(move, src, node)
            if edit is not None:
                edits.append(edit)
        elif node.type not in ("string", "comment"):
            stack.extend(node.children)
    return sorted(set(edits))


def unresolved_relative_imports(move: PyMove, src: SourceText,
                                on_missing: Callable[[int, str], None]) -> None:
    """Report relative imports of a moving file that do not resolve (they cannot be rewritten safely)."""
    parser = _parser("python")
    if parser is None:
        return
    root = parser.parse(src.data).root_node
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "import_from_statement":
            module_node = node.child_by_field_name("module_name")
            if module_node is not None and module_node.type == "relative_import":
                level, dotted = _module_part(module_node)
                if _resolve(move, src.path, level, dotted) is None:
                    on_missing(src.node_span(node)[0], _text(node))
        else:
            stack.extend(node.children)


def imported_files(mods: PyModules, src: SourceText) -> set[str]:
    """Repository files ``src`` imports (modules and ``from pkg import submodule`` targets)."""
    parser = _parser("python")
    if parser is None:
        return set()
    found: set[str] = set()
    move = PyMove(mods, {})
    stack = [parser.parse(src.data).root_node]
    while stack:
        node = stack.pop()
        if node.type == "import_statement":
            for child in node.named_children:
                name = child.child_by_field_name("name") if child.type == "aliased_import" else child
                target = mods.resolve_module(_text(name)) if name is not None else None
                if target is not None:
                    found.add(target)
        elif node.type == "import_from_statement":
            module_node = node.child_by_field_name("module_name")
            if module_node is None:
                continue
            level, dotted = _module_part(module_node)
            base = _resolve(move, src.path, level, dotted)
            if base is not None:
                found.add(base)
            for name in node.children_by_field_name("name"):
                inner = name.child_by_field_name("name") if name.type == "aliased_import" else name
                if inner is None:
                    continue
                sub = _resolve(move, src.path, level, f"{dotted}.{_text(inner)}" if dotted else _text(inner))
                if sub is not None:
                    found.add(sub)
        elif node.type not in ("string", "comment"):
            stack.extend(node.children)
    return found
