"""Keep every importer of a moved Python symbol working (issue 20): exact spans, never a line replace.

In each file that spells the symbol's name:

- ``from old import f [as g]`` (absolute or relative): the statement's module becomes the destination
  when ``f`` is its only name; otherwise ``f`` leaves the name list and ``from new import f [as g]`` is
  inserted after it, in the same style (relative stays relative when it can). In the destination module
  itself the import goes (the definition is local there now).
- ``old.f`` / ``pkg.old.f`` / ``alias.f`` through ``import pkg.old [as alias]`` or ``from pkg import old``:
  the receiver is replaced by the destination module, imported next to the old module's import; that import
  goes (the new one in its place) when every use of it was such a rewrite.
- ``from old import *`` in a file that uses ``f``: ``from new import f`` is added (``medium``: the star
  import may have been meant to provide something else).
- ``"pkg.old.f"`` in strings (``mock.patch`` targets): ``medium`` when the string is exactly that path,
  ``low`` otherwise and in comments.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from codeplane.refactor.lexical import classify
from codeplane.refactor.models import Certainty
from codeplane.refactor.pybindings import module_part, text_of
from codeplane.refactor.pymodules import PyModules, relative_form
from codeplane.refactor.spans import SourceText, SpanEdit


@dataclass(frozen=True)
class SymbolMove:
    mods: PyModules
    name: str
    old_path: str
    old_module: str
    new_path: str
    new_module: str
    #: ``from old import *`` provided the name (and will not after the move): star importers get it explicitly.
    star_exported: bool = False
    #: The old module still uses the name (importing it back): its code looks ``old.name`` up there.
    used_in_old: bool = False


@dataclass
class Insertions:
    """Lines to insert after statements, merged per position (one zero-width edit per position)."""

    by_position: dict[tuple[str, int, int], list[str]] = field(default_factory=dict)
    reasons: dict[tuple[str, int, int], str] = field(default_factory=dict)
    #: Text closing the merged insertion (blank lines between new top-of-file imports and the code).
    trailers: dict[tuple[str, int, int], str] = field(default_factory=dict)

    @staticmethod
    def position_after(src: SourceText, stmt: Any) -> tuple[str, int, int]:
        """Where lines go after ``stmt``: its end, or its line's end when a comment closes that line."""
        _, _, end_line, end_col = src.node_span(stmt)
        rest = src.line_text(end_line)[end_col:]
        if _trailing_comment(rest):
            # A comment closing the statement's line is about it (a star import's noqa for F403): the new
            # line goes after it, or the comment would move to the new line and stop applying to the statement.
            end_col += len(rest)
        return src.path, end_line, end_col

    def after(self, src: SourceText, stmt: Any, line_text: str, reason: str = "import") -> None:
        _, end_line, end_col = self.position_after(src, stmt)
        start_line, start_col = src.node_span(stmt)[:2]
        prefix = src.line_text(start_line)[:start_col]
        indent = prefix if not prefix.strip() else prefix[: len(prefix) - len(prefix.lstrip())]
        self.add(src.path, end_line, end_col, "\n" + indent + line_text, reason)

    def add(self, path: str, line: int, column: int, text: str, reason: str = "import") -> None:
        key = (path, line, column)
        texts = self.by_position.setdefault(key, [])
        if text not in texts:
            texts.append(text)
        self.reasons.setdefault(key, reason)

    def edits(self) -> list[SpanEdit]:
        return [SpanEdit(p, line, col, line, col, "", "".join(texts) + self.trailers.get((p, line, col), ""),
                         self.reasons[(p, line, col)])
                for (p, line, col), texts in sorted(self.by_position.items())]


def _trailing_comment(rest: str) -> bool:
    """``rest`` (a line after a statement) is only a comment: Python's ``#``, JS/TS ``//`` or one ``/* */``."""
    rest = rest.strip()
    if rest.startswith(("#", "//")):
        return True
    return rest.startswith("/*") and rest.find("*/", 2) == len(rest) - 2


def merge_same_start(code: list[tuple[SpanEdit, Certainty]]) -> list[tuple[SpanEdit, Certainty]]:
    """An insertion and a replacement starting at one position become one edit (insertion first): plans
    keep one edit per start position, and an import added where a dropped one stood must not vanish."""
    by_start: dict[tuple[str, int, int], list[tuple[SpanEdit, Certainty]]] = {}
    for edit, certainty in code:
        by_start.setdefault((edit.path, edit.line, edit.column), []).append((edit, certainty))
    out: list[tuple[SpanEdit, Certainty]] = []
    for group in by_start.values():
        inserts = [(e, c) for e, c in group if (e.line, e.column) == (e.end_line, e.end_column) and not e.old_text]
        others = [(e, c) for e, c in group if (e, c) not in inserts]
        # Whole lines (an import) before text inside the line (``export `` opening the statement there).
        inserts = sorted(inserts, key=lambda item: not item[0].new_text.endswith("\n"))
        text = "".join(e.new_text for e, _ in inserts)
        if inserts and len(others) == 1:
            other, certainty = others[0]
            out.append((SpanEdit(other.path, other.line, other.column, other.end_line, other.end_column,
                                 other.old_text, text + other.new_text, other.reason), certainty))
        elif len(inserts) > 1 and not others:
            first, certainty = inserts[0]
            weakest = min((c for _, c in inserts), key=("high", "medium", "low").index)
            out.append((SpanEdit(first.path, first.line, first.column, first.line, first.column, "", text,
                                 first.reason), weakest))
        else:
            out += group
    return out


def ancestors(node: Any) -> list[Any]:
    """``node``'s parents, nearest first."""
    out = []
    current = node.parent
    while current is not None:
        out.append(current)
        current = current.parent
    return out


def walk(root: Any) -> Iterator[Any]:
    """Every node below ``root`` except inside strings and comments."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if node.type not in ("string", "comment"):
            stack.extend(reversed(node.children))


def _resolve(mods: PyModules, importer: str, level: int, dotted: str) -> str | None:
    return mods.resolve_module(dotted) if level == 0 else mods.resolve_relative(importer, level, dotted)


def render_module(mods: PyModules, importer: str, module: str, relative: bool) -> str:
    """``module`` as written in ``importer``: relative when asked and possible, else absolute."""
    if relative:
        own = mods.module_of(importer)
        package = own if mods.is_package_init(importer) else own.rpartition(".")[0]
        form = relative_form(package, module)
        if form is not None:
            return "." * form[0] + form[1]
    return module


def delete_statement(src: SourceText, stmt: Any) -> tuple[SpanEdit, Certainty]:
    """Remove a whole statement: its lines when it stands alone on them, ``pass`` when it is a block's
    only statement (an empty block is a syntax error)."""
    line, col, end_line, end_col = src.node_span(stmt)
    parent = stmt.parent
    if parent is not None and parent.type == "block" and len(parent.named_children) == 1:
        return SpanEdit(src.path, line, col, end_line, end_col, text_of(stmt), "pass", "import"), "high"
    after = src.line_text(end_line)[end_col:].strip()
    # A comment closing the statement's line is about it (a noqa or type comment after ``import x``): it goes
    # with the line.
    alone = not src.line_text(line)[:col].strip() and (not after or after.startswith("#"))
    if alone and end_line < len(src.lines):
        return (SpanEdit(src.path, line, 0, end_line + 1, 0, src.slice(line, 0, end_line + 1, 0), "", "import"),
                "high")
    return SpanEdit(src.path, line, col, end_line, end_col, text_of(stmt), "", "import"), "high"


def delete_list_item(src: SourceText, items: list[Any], item: Any, reason: str) -> SpanEdit:
    """Remove ``item`` from a comma-separated list with its separator (to the next item, or from the
    previous one when it is the last)."""
    index = next(i for i, n in enumerate(items) if n.id == item.id)
    line, col, end_line, end_col = src.node_span(item)
    if index + 1 < len(items):
        nline, ncol = src.node_span(items[index + 1])[:2]
        return SpanEdit(src.path, line, col, nline, ncol, src.slice(line, col, nline, ncol), "", reason)
    pline, pcol = src.node_span(items[index - 1])[2:]
    return SpanEdit(src.path, pline, pcol, end_line, end_col, src.slice(pline, pcol, end_line, end_col), "", reason)


@dataclass
class ImporterResult:
    edits: list[tuple[SpanEdit, Certainty]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Import statements of the symbol itself that the destination module had (removed).
    removed_self_imports: int = 0


@dataclass
class _Scan:
    from_imports: list[tuple[Any, Any, int]] = field(default_factory=list)  # (stmt, name item, level)
    stars: list[Any] = field(default_factory=list)
    #: local module name -> (binding statement, how: "chain" | "alias" | "from", relative level)
    modules: dict[str, list[tuple[Any, str, int]]] = field(default_factory=dict)
    #: local names already bound to the destination module.
    new_locals: set[str] = field(default_factory=set)
    plain_imports: set[str] = field(default_factory=set)
    #: first component -> an ``import a.b`` statement binding it (``import click`` then ``click.utils.f``).
    roots: dict[str, list[Any]] = field(default_factory=dict)
    identifiers: set[str] = field(default_factory=set)


def _scan(move: SymbolMove, src: SourceText, root: Any) -> _Scan:
    scan = _Scan()
    mods = move.mods
    for node in walk(root):
        if node.type == "identifier":
            scan.identifiers.add(text_of(node))
        elif node.type == "import_statement":
            for child in node.named_children:
                aliased = child.type == "aliased_import"
                name = child.child_by_field_name("name") if aliased else child
                if name is None:
                    continue
                dotted = text_of(name)
                scan.plain_imports.add(dotted)
                if not aliased:
                    scan.roots.setdefault(dotted.split(".")[0], []).append(node)
                target = mods.resolve_module(dotted)
                alias = child.child_by_field_name("alias") if aliased else None
                if target == move.old_path:
                    scan.modules.setdefault(text_of(alias) if alias is not None else dotted, []).append(
                        (node, "alias" if alias is not None else "chain", 0))
                elif target == move.new_path and alias is not None:
                    scan.new_locals.add(text_of(alias))
        elif node.type == "import_from_statement":
            module_node = node.child_by_field_name("module_name")
            if module_node is None:
                continue
            level, dotted = module_part(module_node)
            base = _resolve(mods, src.path, level, dotted)
            if base == move.old_path:
                if any(c.type == "wildcard_import" for c in node.children):
                    scan.stars.append(node)
                for item in node.children_by_field_name("name"):
                    inner = item.child_by_field_name("name") if item.type == "aliased_import" else item
                    if inner is not None and text_of(inner) == move.name:
                        scan.from_imports.append((node, item, level))
                continue
            for item in node.children_by_field_name("name"):
                inner = item.child_by_field_name("name") if item.type == "aliased_import" else item
                alias = item.child_by_field_name("alias") if item.type == "aliased_import" else None
                if inner is None:
                    continue
                sub = _resolve(mods, src.path, level, f"{dotted}.{text_of(inner)}" if dotted else text_of(inner))
                local = text_of(alias) if alias is not None else text_of(inner)
                if sub == move.old_path and sub != base:
                    scan.modules.setdefault(local, []).append((node, "from", level))
                elif sub == move.new_path and sub != base:
                    scan.new_locals.add(local)
    return scan


def importer_edits(move: SymbolMove, src: SourceText, root: Any, inserts: Insertions) -> ImporterResult:
    """Edits in ``src`` (any file but the old module) that keep its uses of the symbol bound."""
    result = ImporterResult()
    scan = _scan(move, src, root)
    is_dest = src.path == move.new_path
    by_stmt: dict[int, list[tuple[Any, Any, int]]] = {}
    for stmt, item, level in scan.from_imports:
        by_stmt.setdefault(stmt.id, []).append((stmt, item, level))
    for group in by_stmt.values():
        stmt, _, level = group[0]
        names = list(stmt.children_by_field_name("name"))
        moving = {item.id for _, item, _ in group}
        kept = [n for n in names if n.id not in moving]
        if is_dest:
            result.removed_self_imports += 1
            if not kept:
                result.edits.append(delete_statement(src, stmt))
            else:
                result.edits += [(delete_list_item(src, names, item, "import"), "high") for _, item, _ in group]
            continue
        new_from = render_module(move.mods, src.path, move.new_module, level > 0)
        if not kept:
            module_node = stmt.child_by_field_name("module_name")
            result.edits.append((src.edit_for_node(module_node, new_from, "import"), "high"))
            continue
        for _, item, _ in group:
            result.edits.append((delete_list_item(src, names, item, "import"), "high"))
            inserts.after(src, stmt, f"from {new_from} import {text_of(item)}")
    _attribute_edits(move, src, root, scan, inserts=inserts, result=result)
    # A star import that provided the name keeps providing it — to the file's own uses and to whoever
    # imports it from there (``attrs/setters.py`` is ``from attr.setters import *``).
    stars = [s for s in scan.stars if move.star_exported and (s.parent is None or s.parent.type == "module"
                                                              or _uses_name(root, move.name))]
    if not is_dest and stars:
        for stmt in stars:
            level = _star_level(stmt)
            inserts.after(src, stmt, f"from {render_module(move.mods, src.path, move.new_module, level > 0)} "
                                     f"import {move.name}", "star_import")
        result.warnings.append(f"{src.path} star-imports {move.old_module}; an explicit import of {move.name} "
                               f"from {move.new_module} is added (medium)")
    # The file's own ``old.f`` lookups now read ``new.f``: a patch of ``old.f`` there goes along with them.
    result.edits += dotted_mentions(move, src, follows=any(e.reason == "module_attribute" for e, _ in result.edits))
    return result


def _star_level(stmt: Any) -> int:
    module_node = stmt.child_by_field_name("module_name")
    return module_part(module_node)[0] if module_node is not None else 0


def _uses_name(root: Any, name: str) -> bool:
    for node in walk(root):
        if node.type == "identifier" and text_of(node) == name:
            parent = node.parent
            if parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") == node:
                continue
            return True
    return False


def _attribute_edits(move: SymbolMove, src: SourceText, root: Any, scan: _Scan, *, inserts: Insertions,
                     result: ImporterResult) -> None:
    if not scan.modules and not scan.roots:
        return
    stem = move.new_module.rpartition(".")[2]
    chosen: dict[str, str] = {}
    #: Binding statement id -> (statement, the local name it binds, uses of it rewritten away).
    rewritten: dict[int, tuple[Any, str, int]] = {}
    for node in walk(root):
        if node.type in ("import_statement", "import_from_statement") or node.type != "attribute":
            continue
        attr = node.child_by_field_name("attribute")
        obj = node.child_by_field_name("object")
        if attr is None or obj is None or text_of(attr) != move.name:
            continue
        receiver = "".join(text_of(obj).split())
        binding = _visible(scan.modules.get(receiver, []), node)
        root_stmt = _visible([(s, "chain", 0) for s in scan.roots.get(receiver.split(".")[0], [])], node)
        if binding is None and "." in receiver and root_stmt is not None and \
                move.mods.resolve_module(receiver) == move.old_path:
            # ``import click`` then ``click.utils.f``: the submodule is an attribute of its imported package.
            binding = root_stmt
        if binding is None:
            continue
        stmt, how, level = binding
        local_name = receiver.split(".")[0] if how == "chain" else receiver
        rewritten[stmt.id] = (stmt, local_name, rewritten.get(stmt.id, (stmt, local_name, 0))[2] + 1)
        parent = node.parent
        if parent is not None and parent.type in ("assignment", "augmented_assignment") and \
                parent.child_by_field_name("left") == node:
            result.warnings.append(f"{src.path}:{node.start_point[0] + 1} assigns {receiver}.{move.name}: after the "
                                   f"move that sets {move.new_module}.{move.name}; a module that imported the name "
                                   "keeps its own binding")
        if src.path == move.new_path:
            result.edits.append((src.edit_for_node(node, move.name, "module_attribute"), "high"))
            continue
        if how == "chain":
            local = move.new_module
            if move.new_module not in scan.plain_imports:
                inserts.after(src, stmt, f"import {move.new_module}")
        else:
            local = chosen.get(receiver) or _new_local(scan, stem)
            chosen[receiver] = local
            if local not in scan.new_locals:
                parent = move.new_module.rpartition(".")[0]
                alias = "" if local == stem else f" as {local}"
                if parent:
                    # ``from pkg import mod`` rather than ``import pkg.mod as mod`` (ruff PLR0402): the same binding
                    # (both look ``mod`` up on ``pkg`` since Python 3.7), written as a person writes it.
                    relative = how == "from" and level > 0
                    line = f"from {render_module(move.mods, src.path, parent, relative)} import {stem}{alias}"
                else:
                    line = f"import {stem} as {local}" if alias else f"import {stem}"
                inserts.after(src, stmt, line)
        result.edits.append((src.edit_for_node(obj, local, "module_attribute"), "high"))
    for stmt, name, count in rewritten.values():
        _drop_if_unused(src, root, stmt, name, count, inserts=inserts, result=result)


def _drop_if_unused(src: SourceText, root: Any, stmt: Any, name: str, rewritten: int, *, inserts: Insertions,
                    result: ImporterResult) -> None:
    """The module import whose every use was rewritten goes (ruff's F401 would flag it): only a statement binding
    that one name, which nothing else in the file names (a string spelling it, ``__all__``, keeps it). An import
    the move inserted after it takes its place (an insertion inside a deleted span would overlap it)."""
    names = [c for c in stmt.named_children if c.type in ("dotted_name", "aliased_import")] \
        if stmt.type == "import_statement" else stmt.children_by_field_name("name")
    if len(names) != 1 or re.search(rf"[\'\"]{re.escape(name)}[\'\".]", src.text):
        return  # ``__all__``, or a string annotation ("pkg.a.Thing") a type checker resolves through it
    uses = 0
    for node in walk(root):
        if node.type != "identifier" or text_of(node) != name:
            continue
        parent = node.parent
        if parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") == node:
            continue
        inside = parent
        while inside is not None and inside.type not in ("import_statement", "import_from_statement"):
            inside = inside.parent
        uses += inside is None
    if uses > rewritten:
        return
    line, col, end_line, end_col = src.node_span(stmt)
    key = inserts.position_after(src, stmt)
    texts = inserts.by_position.pop(key, None)
    if not texts:
        result.edits.append(delete_statement(src, stmt))
        return
    inserts.reasons.pop(key, None)
    joined = "".join(texts) + inserts.trailers.pop(key, "")
    lead = "\n" + src.line_text(line)[:col]
    replacement = joined[len(lead):] if joined.startswith(lead) else joined.lstrip("\n")
    result.edits.append((SpanEdit(src.path, line, col, end_line, end_col, src.slice(line, col, end_line, end_col),
                                  replacement, "import"), "high"))


def _visible(bindings: list[tuple[Any, str, int]], use: Any) -> tuple[Any, str, int] | None:
    """The binding statement in effect at ``use``: the innermost enclosing function's own import before the
    use, else a module-level one (imports inside other functions do not bind here)."""
    scopes: list[int] = []
    current = use.parent
    while current is not None:
        if current.type in ("function_definition", "module"):
            scopes.append(current.id)
        current = current.parent
    best: tuple[int, int, tuple[Any, str, int]] | None = None
    for binding in bindings:
        owner = binding[0].parent
        while owner is not None and owner.type not in ("function_definition", "module"):
            owner = owner.parent
        if owner is None or owner.id not in scopes:
            continue
        depth = scopes.index(owner.id)
        before = binding[0].start_byte <= use.start_byte or owner.type == "module"
        rank = (-depth, binding[0].start_byte if before else -1)
        if before and (best is None or rank > best[:2]):
            best = (rank[0], rank[1], binding)
    return best[2] if best is not None else None


def _new_local(scan: _Scan, stem: str) -> str:
    if scan.new_locals:
        return sorted(scan.new_locals)[0]
    for candidate in (stem, f"{stem}_module", f"_{stem}_module"):
        if candidate not in scan.identifiers:
            return candidate
    return f"_{stem}_moved"


def dotted_mentions(move: SymbolMove, src: SourceText, *, follows: bool = False) -> list[tuple[SpanEdit, Certainty]]:
    """``pkg.old.f`` spelled in strings and comments (``mock.patch`` targets, docs). ``follows``: ``src``'s own
    lookups of ``pkg.old.f`` are rewritten to the new module."""
    if not move.old_module:
        return []
    dotted = f"{move.old_module}.{move.name}"
    pattern = re.compile(r"(?<![\w.])" + re.escape(dotted) + r"(?!\w)")
    offsets = [m.start() for m in pattern.finditer(src.text)]
    if not offsets:
        return []
    contexts = classify(src.text, src.path, offsets)
    out: list[tuple[SpanEdit, Certainty]] = []
    new = f"{move.new_module}.{move.name}"
    for off, context in zip(offsets, contexts, strict=True):
        if context == "code":
            continue  # attribute chains through imports are handled above
        line, col = src.position(off)
        before = src.text[off - 1] if off else ""
        after = src.text[off + len(dotted)] if off + len(dotted) < len(src.text) else ""
        exact = context == "string" and before in "'\"" and after in "'\"" and before != "" and after != ""
        reason = "dotted_path_string" if context == "string" else "comment"
        if exact and move.used_in_old and not follows:
            # ``mock.patch("pkg.old.f")`` patches where the old module's code looks ``f`` up, which still holds after
            # the move (it imports ``f`` back): the string may be right as it is (unittest.mock's "where to patch").
            # Unless the file itself looks up ``pkg.old.f`` (then ``pkg.new.f``): which lookup it meant is unsaid,
            # and its own is the one the file shows.
            reason, exact = "looked_up_in_old_module", False
        out.append((SpanEdit(src.path, line, col, line, col + len(dotted), dotted, new, reason),
                    "medium" if exact else "low"))
    return out
