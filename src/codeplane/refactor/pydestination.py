"""The destination side of a Python symbol move (issue 20, ``symbolmove.py``): what the moved block needs
there, and the destination's edits.

What the block needs from the old module comes along:

- names the old module imports unconditionally are imported the same way in the destination (relative
  imports re-rendered for the new package); ``TYPE_CHECKING`` imports go under the same guard;
  ``from __future__`` imports go first (with annotations);
- names the old module defines itself (or binds conditionally) are imported *from* the old module
  (``Needs.from_old``: the planner refuses the move when that would be an import cycle);
- imports of the destination's own names are dropped (nothing to import there).

The block lands at the end of the destination (created when missing), or above the first top-level statement
that uses it at import time; the destination's ``__all__`` gains the name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.refactor.assemble import Draft
from codeplane.refactor.pybindings import (
    Binding,
    ImportSpec,
    assigned_names,
    defined_name,
    import_style,
    module_part,
    parse_python,
    render_imports,
    text_of,
    uses_relative_imports,
)
from codeplane.refactor.pyblock import Block, free_names
from codeplane.refactor.pyheader import all_entry_addition, insert_future, insert_guarded, insert_import
from codeplane.refactor.pyimporters import Insertions, SymbolMove, render_module, walk
from codeplane.refactor.pymodules import PyModules, relative_form
from codeplane.refactor.spans import SourceText, SpanEdit

IMPORT_STATEMENTS = ("import_statement", "import_from_statement", "future_import_statement")


@dataclass
class Needs:
    """What the destination must import for the block."""

    copied: list[ImportSpec]
    futures: list[ImportSpec]
    #: guard condition -> imports under ``if <guard>:``.
    guarded: dict[str, list[ImportSpec]]
    from_old: list[str]
    unbound: list[str]
    #: Imports of the destination's own names (nothing to import there; the old module may drop them).
    own: list[ImportSpec] = field(default_factory=list)


def block_needs(move: SymbolMove, block: Block, bindings: Mapping[str, list[Binding]], old_root: Any,
                dest_bindings: Mapping[str, list[Binding]]) -> Needs:
    """What the destination must import for ``block`` (``bindings``: the old module's, ``dest_bindings``: the
    destination's); 4007 when the destination binds a name the block uses otherwise."""
    needs = Needs([], [], {}, [], [])
    todo = free_names(block)
    done: set[str] = set()
    while todo:
        name = todo.pop(0)
        if name == move.name or name in done:
            continue
        done.add(name)
        found = bindings.get(name, [])
        specs = {b.spec for b in found if b.spec is not None}
        plain_import = found and all(b.kind == "import" and not b.conditional for b in found) and len(specs) == 1
        if plain_import:
            spec = next(iter(specs))
            if move.mods.resolve_module(spec.module) == move.new_path or \
                    (spec.name is not None and move.mods.resolve_module(f"{spec.module}.{spec.name}") == move.new_path):
                needs.own.append(spec)  # the destination's own names (or itself)
                continue
            guard = found[0].type_checking if all(b.type_checking for b in found) else None
            if _dest_has(move, dest_bindings, name, spec):
                continue
            if guard:
                needs.guarded.setdefault(guard, []).append(spec)
                # The guard's own name (``TYPE_CHECKING`` or ``t`` of ``t.TYPE_CHECKING``) comes along.
                todo.append(guard.split(".")[0].strip())
            else:
                needs.copied.append(spec)
        elif found:
            if _dest_has(move, dest_bindings, name, ImportSpec(move.old_module, name)):
                continue
            needs.from_old.append(name)
        else:
            needs.unbound.append(name)
    # ``from __future__ import annotations`` changes how annotations evaluate: it comes along with them.
    annotated = any(n.type == "type" for n in walk(block.statement))
    for stmt in old_root.named_children if annotated else []:
        if stmt.type == "future_import_statement":
            for spec in [ImportSpec("__future__", text_of(n)) for n in stmt.children_by_field_name("name")]:
                if not _dest_has(move, dest_bindings, spec.local, spec):
                    needs.futures.append(spec)
    return needs


def _dest_has(move: SymbolMove, dest_bindings: Mapping[str, list[Binding]], name: str, spec: ImportSpec) -> bool:
    """Whether the destination already binds ``name`` as ``spec``; 4007 if it binds it otherwise."""
    found = dest_bindings.get(name)
    if not found:
        return False
    if any(b.spec == spec for b in found):
        return True
    line = found[0].statement.start_point[0] + 1
    raise CodePlaneError(ErrorCode.REFACTOR_COLLISION,
                         f"{move.name} uses {name!r}, which {move.new_path} binds differently (line {line})",
                         details={"path": move.new_path, "line": line, "name": name,
                                  "reason": "dependency bound differently in destination"})


def destination_edits(move: SymbolMove, old_src: SourceText, block: Block, needs: Needs, *,
                      dest_src: SourceText | None, dest_root: Any | None, dest_exists: bool, draft: Draft,
                      inserts: Insertions, dropped: set[int] | frozenset[int] = frozenset(),
                      aliases: Sequence[str] = (), deferred: Sequence[ImportSpec] = ()) -> list[str]:
    """The destination's edits (into ``draft`` and ``inserts``): the block, at the end or above the first
    statement using it at import time, and the imports it needs; the paths created (a new module).
    ``dropped``: lines of the destination's own imports of the name, which the importer rewrite deletes (the
    block is never anchored to them: moving a helper next to its only user failed with 4001). ``aliases``: local
    names the destination imported the symbol under (``from old import f as g``): ``g = f`` follows the block,
    which goes above the first statement using either name at import time. ``deferred``: imports (from the old
    module, or copied) that open the moved function's body (``deferrable``) instead of the module's header."""
    style = import_style(dest_root) if dest_root is not None else None
    relative = uses_relative_imports(parse_python(old_src.data)) if style is None else style

    def render(spec: ImportSpec) -> str:
        return spec.render(move.mods, move.new_path, move.new_module, relative)

    futures = render_imports(needs.futures, render)
    later = set(deferred)
    imports = render_imports([spec for spec in needs.copied + [ImportSpec(move.old_module, n) for n in needs.from_old]
                              if spec not in later], render)
    guarded = {g: render_imports(specs, render) for g, specs in sorted(needs.guarded.items())}
    body = _block_text(move, old_src, block, dest_exists=dest_exists, body_imports=render_imports(list(deferred),
                                                                                                  render))
    # The import bound the alias; with it gone the alias is bound here (``h(1)`` was left naming nothing).
    body += "".join(f"\n\n\n{alias} = {move.name}" for alias in sorted(aliases))
    if dest_src is None or dest_root is None:
        parts = ["\n".join(futures), "\n".join(imports)] + \
            [f"if {g}:\n" + "\n".join("    " + line for line in lines) for g, lines in guarded.items()]
        header = "\n\n".join(p for p in parts if p)
        content = (header + "\n\n\n" if header else "") + body + "\n"
        draft.code.append((SpanEdit(move.new_path, 1, 0, 1, 0, "", content, "new_module"), "high"))
        return [move.new_path]
    for line in futures:
        insert_future(inserts, dest_src, dest_root, line)
    for line in imports:
        insert_import(inserts, dest_src, dest_root, line)
    for guard, lines in guarded.items():
        insert_guarded(inserts, dest_src, dest_root, guard, lines)
    last = max((n for n in range(1, len(dest_src.lines) + 1) if dest_src.line_text(n).strip()), default=0)
    before = _first_use({move.name, *aliases}, dest_src, dest_root, needs)
    anchor = before if before is not None else last
    if anchor in dropped:
        while anchor >= 1 and (anchor in dropped or not dest_src.line_text(anchor).strip()):
            anchor -= 1
        # The deleted import's lines go; the blank lines between the anchor and it, and those below it, stay and
        # end up below the block: two in all.
        below, after = max(dropped) + 1, 0
        while below + after <= len(dest_src.lines) and not dest_src.line_text(below + after).strip():
            after += 1
        between = sum(1 for n in range(anchor + 1, min(dropped)) if not dest_src.line_text(n).strip()) \
            if anchor >= 1 else 0
        padding = "" if below + after > len(dest_src.lines) else "\n" * max(0, 2 - after - between)
        if anchor < 1:
            # Nothing above but the deleted import: the block takes its place (merged with the deletion).
            draft.code.append((SpanEdit(move.new_path, min(dropped), 0, min(dropped), 0, "", body + "\n" + padding,
                                        "moved_definition"), "high"))
        else:
            inserts.add(move.new_path, anchor, len(dest_src.line_text(anchor)), "\n\n\n" + body + padding,
                        "moved_definition")
    elif before is not None:
        # The destination uses the name at import time (module-level code, decorators): the definition
        # goes right above the first statement that mentions it, after the previous statement.
        end = len(dest_src.line_text(before))
        inserts.add(move.new_path, before, end, "\n\n\n" + body, "moved_definition")
    elif last == 0:
        draft.code.append((SpanEdit(move.new_path, 1, 0, 1, 0, "", body + "\n", "moved_definition"), "high"))
    else:
        end = len(dest_src.line_text(last))
        inserts.add(move.new_path, last, end, "\n\n\n" + body, "moved_definition")
    for edit in all_entry_addition(dest_src, dest_root, move.name):
        draft.code.append((edit, "high"))
    return []


def _first_use(names: set[str], src: SourceText, root: Any, needs: Needs) -> int | None:
    """The last non-blank line above the first top-level statement mentioning one of the names, when that is
    after every definition the block needs from the destination; ``None`` to append at the end."""
    own = {s.local for s in needs.own}
    needed_after = 0
    first: Any | None = None
    for stmt in root.named_children:
        if stmt.type in IMPORT_STATEMENTS or stmt.type == "comment":
            continue
        mentioned = {text_of(n) for n in walk(stmt) if n.type == "identifier"}
        if first is None and mentioned & names:
            first = stmt
        binds = ({defined_name(stmt)} | set(assigned_names(stmt))) & own
        if binds:
            needed_after = stmt.end_point[0] + 1
    if first is None:
        return None
    start: int = first.start_point[0] + 1
    while start > 1 and src.line_text(start - 1).lstrip().startswith("#"):
        start -= 1
    prev = start - 1
    while prev >= 1 and not src.line_text(prev).strip():
        prev -= 1
    if prev < 1 or prev < needed_after:
        return None
    return prev


def deferrable(block: Block, names: Sequence[str], *, lazy_annotations: bool = False) -> bool:
    """Whether ``names`` can be imported inside the moved function instead of at the top of its new module: the
    block is a function whose body starts on a line of its own, and the names occur only in that body (never in
    a decorator or a default, which run when the ``def`` does; nor in an annotation, unless annotations are not
    evaluated: ``from __future__ import annotations``, which the move carries to the destination)."""
    function = _function_node(block.statement)
    body = _function_body(block.statement)
    colon = body.prev_sibling if body is not None else None
    if body is None or not body.named_children or colon is None or (
            body.named_children[0].start_point[0] == colon.start_point[0]):
        return False  # ``def f(): return g()``: no line of its own to open the body with
    wanted = set(names)
    lazy = _annotation_spans(function) if lazy_annotations else []
    return all(body.start_byte <= node.start_byte < body.end_byte or any(
        start <= node.start_byte < end for start, end in lazy) for node in walk(block.statement)
        if node.type == "identifier" and text_of(node) in wanted)


def annotated(block: Block, names: Sequence[str]) -> list[str]:
    """Which of ``names`` the function's own parameter or return annotations name."""
    function = _function_node(block.statement)
    spans = _annotation_spans(function) if function is not None else []
    wanted = set(names)
    return sorted({text_of(node) for node in walk(block.statement) if node.type == "identifier"
                   and text_of(node) in wanted and any(start <= node.start_byte < end for start, end in spans)})


def lazy_annotations(root: Any) -> bool:
    """Whether the module says ``from __future__ import annotations`` (its annotations are never evaluated)."""
    return any(stmt.type == "future_import_statement" and any(
        text_of(n) == "annotations" for n in stmt.children_by_field_name("name")) for stmt in root.named_children)


def _annotation_spans(function: Any) -> list[tuple[int, int]]:
    """Byte spans of the function's own parameter and return annotations."""
    spans = []
    returns = function.child_by_field_name("return_type")
    if returns is not None:
        spans.append((returns.start_byte, returns.end_byte))
    params = function.child_by_field_name("parameters")
    for param in params.named_children if params is not None else []:
        annotation = param.child_by_field_name("type")
        if annotation is not None:
            spans.append((annotation.start_byte, annotation.end_byte))
    return spans


def _function_node(statement: Any) -> Any:
    node = statement.child_by_field_name("definition") if statement.type == "decorated_definition" else statement
    return node if node is not None and node.type == "function_definition" else None


def _function_body(statement: Any) -> Any:
    node = _function_node(statement)
    return node.child_by_field_name("body") if node is not None else None


def _body_insertion(src: SourceText, block: Block, lines: Sequence[str]) -> tuple[int, str]:
    """Where (offset in the source) and what to insert so that ``lines`` open the moved function's body: after its
    docstring, at the indentation of its first statement."""
    body = _function_body(block.statement)
    first = body.named_children[0]
    text = src.line_text(first.start_point[0] + 1)
    indent = text[:len(text) - len(text.lstrip())]  # the file's own whitespace: tabs stay tabs
    # This grammar gives a docstring as a bare ``string`` statement (older ones wrap it in an expression statement).
    docstring = first.type == "string" or (first.type == "expression_statement" and bool(first.named_children)
                                           and first.named_children[0].type == "string")
    line = first.end_point[0] + 2 if docstring else first.start_point[0] + 1
    return src.offset(line, 0), "".join(f"{indent}{text}\n" for text in lines)


def _block_text(move: SymbolMove, src: SourceText, block: Block, *, dest_exists: bool,
                body_imports: Sequence[str] = ()) -> str:
    """The block's text with its relative imports re-rendered for the destination package, and ``body_imports``
    opening the function's body."""
    base = src.offset(block.start_line, 0)
    text = block.text
    replacements: list[tuple[int, int, str]] = []
    if body_imports:
        at, lines = _body_insertion(src, block, body_imports)
        replacements.append((at - base, at - base, lines))
    for node in walk(block.statement):
        if node.type != "import_from_statement":
            continue
        module_node = node.child_by_field_name("module_name")
        if module_node is None or module_node.type != "relative_import":
            continue
        level, dotted = module_part(module_node)
        absolute = move.mods.absolute_relative(move.old_path, level, dotted)
        if absolute is None:
            continue
        new = render_module(move.mods, move.new_path, absolute, True) if dest_exists else \
            _render_for_new(move.mods, move.new_module, absolute)
        line, col, end_line, end_col = src.node_span(module_node)
        replacements.append((src.offset(line, col) - base, src.offset(end_line, end_col) - base, new))
    for begin, end, new in sorted(replacements, reverse=True):
        text = text[:begin] + new + text[end:]
    return text


def _render_for_new(mods: PyModules, new_module: str, module: str) -> str:
    form = relative_form(new_module.rpartition(".")[0], module)
    return "." * form[0] + form[1] if form is not None else module
