"""A Python symbol move's ``.pyi`` stubs (QA16 #9): the declaration follows the definition.

A stub is what type checkers read instead of its module, so a declaration left in ``old.pyi`` tells them the
name is still there, and one missing from ``new.pyi`` hides it. A rename carries stub declarations along
(``rename.plan_structural``'s ``stub`` edits); a move does the same: the old stub's declarations of the name
(every ``@overload``) leave it, with its ``__all__`` entry, and land at the end of the destination's stub when
there is one, with the imports they use. Without a destination stub the removal is reported: the destination's
own annotations are what type checkers see from then on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from codeplane.core.errors import CodePlaneError
from codeplane.refactor.assemble import Draft
from codeplane.refactor.models import Certainty
from codeplane.refactor.pybindings import (
    ImportSpec,
    assigned_names,
    defined_name,
    module_bindings,
    parse_python,
    render_imports,
    text_of,
    uses_relative_imports,
)
from codeplane.refactor.pyblock import Block, find_block, free_names
from codeplane.refactor.pyheader import all_entry_addition, all_entry_removals, delete_block, insert_import
from codeplane.refactor.pyimporters import Insertions, SymbolMove, ancestors, walk
from codeplane.refactor.spans import SourceText, SpanEdit


def stub_of(path: str) -> str:
    return path + "i" if path.endswith(".py") else path


def stub_paths(universe: Mapping[str, object], old_path: str, dest: str) -> set[str]:
    """The stubs a move of a symbol from ``old_path`` to ``dest`` reads (those the repository has)."""
    return {p for p in (stub_of(old_path), stub_of(dest)) if p.endswith(".pyi") and p in universe}


def _declarations(src: SourceText, root: Any, name: str) -> list[Block]:
    stmts = [s for s in root.named_children if defined_name(s) == name or assigned_names(s) == [name]]
    return [find_block(src, root, name, s.start_point[0] + 1) for s in stmts]


def _deletions(src: SourceText, blocks: list[Block]) -> list[SpanEdit]:
    """One deletion per run of blocks: adjacent ``@overload``s' deletions would otherwise overlap at the file's end."""
    merged: list[SpanEdit] = []
    for edit in sorted(delete_block(src, b) for b in blocks):
        last = merged[-1] if merged else None
        if last is not None and (edit.line, edit.column) <= (last.end_line, last.end_column):
            end = max((last.end_line, last.end_column), (edit.end_line, edit.end_column))
            merged[-1] = SpanEdit(src.path, last.line, last.column, end[0], end[1],
                                  src.slice(last.line, last.column, end[0], end[1]), "", "stub")
        else:
            merged.append(SpanEdit(edit.path, edit.line, edit.column, edit.end_line, edit.end_column,
                                   edit.old_text, "", "stub"))
    return merged


def _uses_outside(root: Any, name: str, blocks: list[Block]) -> bool:
    """The stub names ``name`` outside its declarations (another declaration's annotation)."""
    for node in walk(root):
        if node.type != "identifier" or text_of(node) != name:
            continue
        line = node.start_point[0] + 1
        parent = node.parent
        if any(b.start_line <= line <= b.end_line for b in blocks) or (
                parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") == node):
            continue
        if not any(a.type in ("import_statement", "import_from_statement") for a in ancestors(node)):
            return True
    return False


def plan_stubs(move: SymbolMove, sources: Mapping[str, SourceText], *, keep_reexport: bool, draft: Draft,
               inserts: Insertions) -> None:
    """Stub edits into ``draft`` (high, as a rename's) and ``inserts``; warnings for what needs a person."""
    old_stub = stub_of(move.old_path)
    src = sources.get(old_stub)
    root = parse_python(src.data) if src is not None else None
    if src is None or root is None:
        return
    try:
        blocks = _declarations(src, root, move.name)
    except CodePlaneError as exc:
        draft.warnings.append(f"{old_stub} declares {move.name} in a way a move cannot carry ({exc.message}); "
                              "update the stub by hand")
        return
    if not blocks:
        return
    code: list[tuple[SpanEdit, Certainty]] = [(e, "high") for e in _deletions(src, blocks)]
    if not keep_reexport:
        code += [(e, "high") for e in all_entry_removals(src, root, move.name)]
    if keep_reexport or _uses_outside(root, move.name, blocks):
        # ``import x as x`` is a stub's explicit re-export (PEP 484); a plain import serves its own annotations.
        alias = f" as {move.name}" if keep_reexport else ""
        insert_import(inserts, src, root, f"from {move.new_module} import {move.name}{alias}")
    dest_stub = stub_of(move.new_path)
    dest_src = sources.get(dest_stub)
    dest_root = parse_python(dest_src.data) if dest_src is not None else None
    if dest_src is None or dest_root is None:
        draft.warnings.append(f"{old_stub} declared {move.name}; the declaration is removed and {dest_stub} does not "
                              f"exist, so type checkers read {move.new_path}'s own annotations for it")
        draft.code += code
        return
    code += _carry(move, src, root, blocks, dest_src=dest_src, dest_root=dest_root, draft=draft, inserts=inserts)
    draft.code += code


def _carry(move: SymbolMove, src: SourceText, root: Any, blocks: list[Block], *, dest_src: SourceText,
           dest_root: Any, draft: Draft, inserts: Insertions) -> list[tuple[SpanEdit, Certainty]]:
    """The declarations at the end of the destination's stub, with the old stub's imports they use."""
    old_bindings = module_bindings(move.mods, src.path, root)
    dest_bindings = module_bindings(move.mods, dest_src.path, dest_root)
    relative = uses_relative_imports(dest_root)
    unbound: list[str] = []
    specs: list[ImportSpec] = []
    for name in sorted({n for b in blocks for n in free_names(b)} - {move.name}):
        found = old_bindings.get(name, [])
        if name in dest_bindings or not found:
            continue  # the destination stub binds it already, or it is nobody's (a builtin the set missed)
        spec = found[0].spec
        if spec is None or found[0].kind == "definition":
            unbound.append(name)
        else:
            specs.append(spec)
    for statement in render_imports(specs, lambda spec: spec.render(move.mods, dest_src.path, move.new_module,
                                                                      relative)):
        insert_import(inserts, dest_src, dest_root, statement)
    if unbound:
        draft.warnings.append(f"the declaration of {move.name} moved to {dest_src.path} uses {', '.join(unbound)}, "
                              f"which {src.path} defines itself; define or import it there")
    text = "\n".join(b.text for b in blocks)
    body = dest_src.text.rstrip("\n")
    # After the stub's last statement, one blank line between; its final newline (if any) then ends the file.
    line, col = dest_src.position(len(body))
    # An insertion too: new imports after a last import share its position, and must come first.
    inserts.add(dest_src.path, line, col, "\n\n" + text if body else text + "\n", "stub")
    return [(e, "high") for e in all_entry_addition(dest_src, dest_root, move.name)]
