"""Where things go in a Python module a symbol move edits (issue 20): the header's anchors for new imports
(after the last import before the first definition, after the docstring, or at the top), ``TYPE_CHECKING``
blocks, ``__all__`` entries, import items, and the lines a moved block leaves behind. Exact spans only."""

from __future__ import annotations

from typing import Any

from codeplane.refactor.pybindings import text_of
from codeplane.refactor.pyblock import Block
from codeplane.refactor.pyimporters import Insertions, delete_list_item
from codeplane.refactor.spans import SourceText, SpanEdit

IMPORTS = ("import_statement", "import_from_statement", "future_import_statement")


def import_items(stmt: Any) -> list[Any]:
    if stmt.type == "import_statement":
        return list(stmt.named_children)
    return list(stmt.children_by_field_name("name"))


def item_local(item: Any) -> str:
    if item.type == "aliased_import":
        alias = item.child_by_field_name("alias")
        return text_of(alias) if alias is not None else ""
    return text_of(item).split(".")[0] if item.type == "dotted_name" else text_of(item)


def binding_item(stmt: Any, local: str) -> Any | None:
    if stmt.type not in ("import_statement", "import_from_statement"):
        return None
    return next((i for i in import_items(stmt) if item_local(i) == local), None)


def all_names(root: Any) -> set[str]:
    listing = all_list(root)
    if listing is None:
        return set()
    return {v for c in listing.named_children if (v := string_value(c))}


def delete_block(src: SourceText, block: Block) -> SpanEdit:
    """The block's lines, and the blank lines after it (or before it, at the end of the file)."""
    nxt = block.end_line + 1
    total = len(src.lines)
    while nxt <= total and not src.line_text(nxt).strip():
        nxt += 1
    if nxt <= total:
        return SpanEdit(src.path, block.start_line, 0, nxt, 0, src.slice(block.start_line, 0, nxt, 0), "",
                        "moved_definition")
    prev = block.start_line - 1
    while prev >= 1 and not src.line_text(prev).strip():
        prev -= 1
    end_col = len(src.line_text(block.end_line))
    if prev >= 1:
        col = len(src.line_text(prev))
        return SpanEdit(src.path, prev, col, block.end_line, end_col, src.slice(prev, col, block.end_line, end_col),
                        "", "moved_definition")
    return SpanEdit(src.path, block.start_line, 0, block.end_line, end_col,
                    src.slice(block.start_line, 0, block.end_line, end_col), "", "moved_definition")


def header_statements(root: Any, skip: set[int] | frozenset[int] = frozenset()) -> tuple[Any | None, Any | None]:
    """``(module docstring statement, last import statement before the first definition)``; statements in
    ``skip`` (being deleted) are no anchors."""
    statements = [s for s in root.named_children if s.type != "comment" and s.id not in skip]
    docstring = None
    first = statements[0] if statements else None
    if first is not None and (first.type == "string" or (first.type == "expression_statement" and
                                                         first.named_children and
                                                         first.named_children[0].type == "string")):
        docstring = first
    last_import = None
    for stmt in statements:
        if stmt.type in IMPORTS:
            last_import = stmt
        elif stmt.type in ("function_definition", "class_definition", "decorated_definition"):
            break
    return docstring, last_import


def insert_import(inserts: Insertions, src: SourceText, root: Any, line: str,
                   skip: set[int] | frozenset[int] = frozenset()) -> None:
    docstring, last_import = header_statements(root, skip)
    if last_import is not None:
        inserts.after(src, last_import, line)
    elif docstring is not None:
        inserts.after(src, docstring, "\n" + line)  # a blank line between the docstring and the imports
    else:
        at_top(inserts, src, line)


def at_top(inserts: Insertions, src: SourceText, line: str) -> None:
    inserts.add(src.path, 1, 0, line + "\n")
    if src.line_text(1).strip():
        inserts.trailers[(src.path, 1, 0)] = "\n\n"


def insert_future(inserts: Insertions, src: SourceText, root: Any, line: str) -> None:
    docstring, _ = header_statements(root)
    if docstring is not None:
        inserts.after(src, docstring, line)
    else:
        at_top(inserts, src, line)


def insert_guarded(inserts: Insertions, src: SourceText, root: Any, guard: str, lines: list[str]) -> None:
    for stmt in root.named_children:
        condition = stmt.child_by_field_name("condition") if stmt.type == "if_statement" else None
        body = stmt.child_by_field_name("consequence") if condition is not None else None
        if condition is not None and body is not None and text_of(condition) == guard and body.named_children:
            for line in lines:
                inserts.after(src, body.named_children[-1], line)
            return
    insert_import(inserts, src, root, f"\nif {guard}:\n" + "\n".join("    " + line for line in lines))


def all_list(root: Any) -> Any | None:
    for stmt in root.named_children:
        node = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else stmt
        if node.type != "assignment":
            continue
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is not None and right is not None and text_of(left) == "__all__" and right.type in ("list", "tuple"):
            return right
    return None


def string_value(node: Any) -> str | None:
    if node.type != "string":
        return None
    parts = [c for c in node.children if c.type == "string_content"]
    return text_of(parts[0]) if len(parts) == 1 else ""


def all_entry_removals(src: SourceText, root: Any, name: str) -> list[SpanEdit]:
    listing = all_list(root)
    if listing is None:
        return []
    items = [c for c in listing.named_children if c.type != "comment"]
    for item in items:
        if string_value(item) != name:
            continue
        if len(items) == 1:  # ``("f",)`` minus its only entry is ``()``, not ``(,)``
            empty = "()" if listing.type == "tuple" else "[]"
            return [SpanEdit(src.path, *src.node_span(listing), text_of(listing), empty, "all_entry")]
        return [delete_list_item(src, items, item, "all_entry")]
    return []


def all_entry_addition(src: SourceText, root: Any, name: str) -> list[SpanEdit]:
    listing = all_list(root)
    if listing is None:
        return []
    items = [c for c in listing.named_children if c.type != "comment"]
    if any(string_value(i) == name for i in items):
        return []
    if not items:
        line, col = src.node_span(listing)[:2]
        return [SpanEdit(src.path, line, col + 1, line, col + 1, "", f'"{name}"', "all_entry")]
    last = items[-1]
    quote = text_of(last)[0] if text_of(last)[:1] in "'\"" else '"'
    _, _, line, col = src.node_span(last)
    return [SpanEdit(src.path, line, col, line, col, "", f", {quote}{name}{quote}", "all_entry")]
