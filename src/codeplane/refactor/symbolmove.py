"""Plan moving one Python symbol (function, class, constant) to another module (issue 20, §23.4).

The definition's statement leaves the old module with the comment lines above it and lands in the
destination (created when missing) with what it needs from the old module (:mod:`pydestination`). Names the
old module defines itself (or binds conditionally) are imported *from* the old module: if the old module
still needs the symbol afterwards (other uses, or ``keep_reexport``), that would be a circular import:
refused with 4009 naming the names.

Every importer is rewritten by :mod:`pyimporters`; the old module's ``__all__`` entry goes (unless
``keep_reexport``), the destination's ``__all__`` gains it. When the old module imports the destination as it
loads (directly or through other modules), a module-level import back would fail at import, so a function
imports what it needs from the old module at the top of its body, when it runs (``pydestination.deferrable``:
not when a decorator, default or annotation uses those names). Other indirect cycles are reported as warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import resolve_in_repo
from codeplane.refactor.assemble import Draft
from codeplane.refactor.facts import Def, FactReader, FileInfo
from codeplane.refactor.jsimports import is_js
from codeplane.refactor.models import Certainty
from codeplane.refactor.pybindings import (
    Binding,
    ImportSpec,
    import_specs,
    module_bindings,
    parse_python,
    text_of,
    uses_relative_imports,
    wildcard_sources,
)
from codeplane.refactor.pyblock import Block, find_block, global_writes
from codeplane.refactor.pycycles import check_importer_cycles
from codeplane.refactor.pydestination import (
    IMPORT_STATEMENTS,
    Needs,
    annotated,
    block_needs,
    deferrable,
    destination_edits,
    lazy_annotations,
)
from codeplane.refactor.pyheader import (
    all_entry_removals,
    all_list,
    all_names,
    binding_item,
    delete_block,
    import_items,
    insert_import,
    item_local,
)
from codeplane.refactor.pyimporters import (
    Insertions,
    SymbolMove,
    ancestors,
    delete_list_item,
    delete_statement,
    importer_edits,
    merge_same_start,
    walk,
)
from codeplane.refactor.pymodules import PyModules, is_python
from codeplane.refactor.pystubs import plan_stubs, stub_paths
from codeplane.refactor.spans import SourceText, SpanEdit

Reader = Callable[[Iterable[str]], tuple[dict[str, SourceText], dict[str, str]]]
Candidates = Callable[[str], set[str]]
_MOVABLE = ("function", "class", "variable", "constant")
_CYCLE_HOPS = 4_000


def check_target(root: Path, universe: Mapping[str, FileInfo], target: Def, to_path: str) -> str:
    """The destination path after validation (5001 outside the repo, 4008 for what cannot move)."""
    dest = resolve_in_repo(root, to_path).rel
    python = is_python(target.path) and not target.path.endswith(".pyi")
    script = is_js(target.path) and not target.path.endswith(".d.ts")
    if not python and not script:
        raise CodePlaneError(ErrorCode.REFACTOR_UNSUPPORTED, "symbol moves are supported for Python and JS/TS "
                             f"modules only ({target.path})", details={"path": target.path, "reason": "language"})
    if (python and target.kind not in _MOVABLE) or "." in target.lexical_path:
        owner = target.lexical_path.rpartition(".")[0]
        raise CodePlaneError(ErrorCode.REFACTOR_UNSUPPORTED,
                             f"{target.qualified_name} is a {target.kind} inside {owner}" if owner
                             else f"a {target.kind} cannot be moved",
                             details={"symbol": target.qualified_name, "reason": "only module-level functions, "
                                      "classes and variables move"})
    if (python and not dest.endswith(".py")) or (script and (not is_js(dest) or dest.endswith(".d.ts"))):
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"the destination must be a {'.py' if python else 'JS/TS'} "
                             f"module: {dest!r}", details={"field": "to_path", "to_path": dest})
    if dest == target.path:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{target.name} is already in {dest}",
                             details={"field": "to_path", "to_path": dest})
    if (root / dest).exists() and dest not in universe:
        raise CodePlaneError(ErrorCode.REFACTOR_UNSUPPORTED, f"{dest} exists but is not indexed (.cplignore'd or "
                             "not text)", details={"path": dest, "reason": "destination not indexed"})
    return dest


class SymbolMovePlanner:
    """One symbol move over a fixed universe of files (read-only)."""

    def __init__(self, reader: FactReader, universe: Mapping[str, FileInfo], target: Def, dest: str, *,
                 read: Reader, candidates: Candidates, keep_reexport: bool, dest_exists: bool) -> None:
        self.reader = reader
        self.target = target
        self.name = target.name
        self.dest = dest
        self.read = read
        self.keep_reexport = keep_reexport
        self.dest_exists = dest_exists
        py = [p for p in universe if is_python(p)]
        self.mods = PyModules([*py, dest])
        old = target.path
        new_module = self.mods.module_of(dest) if dest_exists else self.mods.module_for_new_path(old, dest)
        self.move = SymbolMove(self.mods, self.name, old, self.mods.module_of(old), dest, new_module,
                               star_exported=not keep_reexport and not self.name.startswith("_"))
        self.paths = sorted({p for p in candidates(self.name) if p in universe and is_python(p)} | {old}
                            | ({dest} if dest_exists else set()) | stub_paths(universe, old, dest))
        self.draft = Draft()
        self.inserts = Insertions()
        #: Files the old module stops importing (imports only the moved block used).
        self.dropped_targets: set[str] = set()
        #: Files the old module still imports at import time after the move (not under ``TYPE_CHECKING``).
        self.old_runtime_imports: set[str] = set()

    # -- planning ---------------------------------------------------------------------------------------
    def plan(self) -> tuple[Draft, dict[str, SourceText], dict[str, str], list[str]]:
        sources, hashes = self.read(self.paths)
        old_src = sources.get(self.move.old_path)
        old_root = parse_python(old_src.data) if old_src is not None else None
        if old_src is None or old_root is None:
            raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{self.move.old_path} cannot be read",
                                 details={"path": self.move.old_path})
        block = find_block(old_src, old_root, self.name, self.target.name_line)
        listed = all_names(old_root) if all_list(old_root) is not None else None
        if listed is not None:
            # ``from old import *`` exports exactly ``__all__`` when there is one.
            self.move = replace(self.move, star_exported=not self.keep_reexport and self.name in listed)
        old_bindings = module_bindings(self.mods, self.move.old_path, old_root)
        dest_src = sources.get(self.dest) if self.dest_exists else None
        dest_root = parse_python(dest_src.data) if dest_src is not None else None
        dest_bindings = module_bindings(self.mods, self.dest, dest_root) if dest_root is not None else {}
        self._check_destination(dest_bindings)
        needs = block_needs(self.move, block, old_bindings, old_root, dest_bindings)
        remaining = _uses_outside(old_root, self.name, block)
        old_keeps = remaining > 0 or self.keep_reexport
        lazy = lazy_annotations(old_root)
        # The old module keeps importing the function, which needs some of its names: the function imports them
        # when it runs, unless they run with the ``def`` (a decorator, a default, an evaluated annotation).
        keeping_cycle = bool(needs.from_old) and old_keeps
        if keeping_cycle and not deferrable(block, needs.from_old, lazy_annotations=lazy):
            why = "keep_reexport leaves it imported there" if self.keep_reexport and not remaining else \
                f"{remaining} use(s) remain there"
            raise CodePlaneError(
                ErrorCode.REFACTOR_CIRCULAR_IMPORT,
                f"moving {self.name} would make {self.move.old_module} and {self.move.new_module} import each "
                f"other: {self.name} needs {', '.join(needs.from_old)} from {self.move.old_module}, and "
                f"{self.move.old_module} still needs {self.name} ({why}). Move those names too (first), or "
                "remove the remaining uses",
                details={"symbol": self.target.qualified_name, "reason": "circular import",
                         "needs_from_old_module": needs.from_old, "remaining_uses_in_old_module": remaining,
                         "keep_reexport": self.keep_reexport})
        staying = sorted(set(global_writes(block)) & set(needs.from_old))
        if staying:  # ``global COUNT`` in the destination is its own COUNT: the old module's would never change
            raise CodePlaneError(
                ErrorCode.REFACTOR_UNSUPPORTED,
                f"{self.name} assigns the global {', '.join(staying)} of {self.move.old_module}; moved, it would "
                f"assign {self.move.new_module}'s instead while {self.move.old_module} keeps reading its own. Move "
                "the variable with it, or assign it through a function of its module",
                details={"symbol": self.target.qualified_name, "reason": "assigns an old module variable",
                         "assigned": staying})
        self._old_module_edits(old_src, old_root, block, old_keeps=old_keeps, bindings=old_bindings, needs=needs)
        # The old module imports the destination at load time (directly or through others): the names the function
        # needs from the old module are imported when it runs, as werkzeug's get_content_type moved into http.py
        # must (http → utils → datastructures → http failed at import as a module-level import).
        from_old_later = bool(needs.from_old) and (keeping_cycle or self.dest in self.old_runtime_imports or (
            self._reaches(self.move.old_path, self.dest))) and deferrable(block, needs.from_old, lazy_annotations=lazy)
        deferred = [ImportSpec(self.move.old_module, n) for n in needs.from_old] if from_old_later else []
        if from_old_later and lazy:
            self._typing_imports(needs, block, dest_bindings)
        if from_old_later:
            self.draft.warnings.append(
                f"{', '.join(needs.from_old)} imported inside {self.name}: {self.move.old_module} imports "
                f"{self.move.new_module} when it loads"
                + (f" ({self.name} is still used there)" if keeping_cycle else "")
                + ", so a module-level import would be circular")
        self._refuse_direct_cycle(old_keeps, needs, dest_bindings, deferred=from_old_later)
        deferred += self._copied_cycles(needs, block)
        self._warn_cycles(old_keeps, bool(needs.from_old) and not from_old_later)
        for name in global_writes(block):
            self.draft.warnings.append(f"{self.name} assigns the global {name!r}; after the move that is "
                                       f"{self.move.new_module}.{name}, not {self.move.old_module}.{name}")
        if needs.unbound:
            stars = wildcard_sources(self.mods, self.move.old_path, old_root)
            source = f" (perhaps from the star import of {', '.join(stars)})" if stars else ""
            self.draft.warnings.append(f"{self.name} uses {', '.join(needs.unbound)}, not bound at module level in "
                                       f"{self.move.old_path}{source}; not imported in the destination")
        creates = destination_edits(self.move, old_src, block, needs, dest_src=dest_src, dest_root=dest_root,
                                    dest_exists=self.dest_exists, draft=self.draft, inserts=self.inserts,
                                    dropped=self._dropped_own_imports(dest_bindings),
                                    aliases=self._own_import_aliases(dest_bindings), deferred=deferred)
        self.move = replace(self.move, used_in_old=remaining > 0)
        for path in self.paths:
            src = sources.get(path)
            if path == self.move.old_path or src is None:
                continue
            root = dest_root if path == self.dest else parse_python(src.data)
            if root is None:
                continue
            result = importer_edits(self.move, src, root, self.inserts)
            self.draft.code += result.edits
            self.draft.warnings += result.warnings
        plan_stubs(self.move, sources, keep_reexport=self.keep_reexport, draft=self.draft, inserts=self.inserts)
        self.draft.code += [(e, "medium" if e.reason == "star_import" else "high") for e in self.inserts.edits()]
        self.draft.code = merge_same_start(self.draft.code)
        self.draft.warnings += check_importer_cycles(
            self.mods, self.draft.code, sources, old_path=self.move.old_path, dest=self.dest,
            symbol=self.target.qualified_name, target=self._spec_target, reaches=self._reaches)
        if any(e.reason == "looked_up_in_old_module" for e, _ in self.draft.code):
            self.draft.warnings.append(
                f"{self.move.old_module} still uses {self.name} (imported back from {self.move.new_module}), so a "
                f"string naming {self.move.old_module}.{self.name} (a mock.patch target) still patches what that "
                "code calls: listed low, not rewritten")
        return self.draft, sources, hashes, creates

    def _own_imports(self, dest_bindings: Mapping[str, list[Binding]]) -> list[tuple[str, Binding]]:
        """The destination's unconditional imports of the moved name from the old module, by local name."""
        return [(local, b) for local, found in dest_bindings.items() for b in found
                if b.kind == "import" and b.spec is not None and b.spec.module == self.move.old_module
                and b.spec.name == self.name and not b.conditional and not b.type_checking]

    def _own_import_aliases(self, dest_bindings: Mapping[str, list[Binding]]) -> list[str]:
        """Other local names the destination imported the moved name under (``from old import f as g``)."""
        return sorted({local for local, _ in self._own_imports(dest_bindings) if local != self.name})

    def _dropped_own_imports(self, dest_bindings: Mapping[str, list[Binding]]) -> set[int]:
        """Lines of the destination's statements that import only the moved name from the old module: the
        importer rewrite deletes them, so the definition must not be anchored to them."""
        own = self._own_imports(dest_bindings)
        statements = {id(b.statement): b.statement for _, b in own}
        locals_of = {id(b.statement): local for local, b in own}
        for name, found in dest_bindings.items():
            for b in found:
                if id(b.statement) in statements and name != locals_of[id(b.statement)]:
                    del statements[id(b.statement)]  # it binds another name too: rewritten, not deleted
        return {line for node in statements.values()
                for line in range(node.start_point[0] + 1, node.end_point[0] + 2)}

    def _check_destination(self, dest_bindings: Mapping[str, list[Binding]]) -> None:
        existing = dest_bindings.get(self.name, [])
        own = ImportSpec(self.move.old_module, self.name)
        if any(not (b.spec is not None and b.spec.module == own.module and b.spec.name == self.name)
               for b in existing):
            line = existing[0].statement.start_point[0] + 1
            raise CodePlaneError(ErrorCode.REFACTOR_COLLISION,
                                 f"{self.dest} already binds {self.name} (line {line}); rename one of them first",
                                 details={"path": self.dest, "line": line, "name": self.name,
                                          "reason": "exists in destination"})

    def _typing_imports(self, needs: Needs, block: Block, dest_bindings: Mapping[str, list[Binding]]) -> None:
        """Names from the old module that the function's (unevaluated) annotations use, imported under ``if
        TYPE_CHECKING:`` too: the function imports them when it runs, which a type checker reading the module's
        annotations does not see."""
        typed = annotated(block, needs.from_old)
        checking = ImportSpec("typing", "TYPE_CHECKING")
        found = dest_bindings.get("TYPE_CHECKING", [])
        if not typed or any(b.spec != checking for b in found):
            return  # the destination calls something else TYPE_CHECKING: leave its header alone
        needs.guarded.setdefault("TYPE_CHECKING", []).extend(ImportSpec(self.move.old_module, n) for n in typed)
        if not found and checking not in needs.copied:
            needs.copied.append(checking)

    def _refuse_direct_cycle(self, old_keeps: bool, needs: Needs, dest_bindings: Mapping[str, list[Binding]], *,
                             deferred: bool) -> None:
        """4009 when the two modules would import each other at import time (guarded imports aside; ``deferred``:
        the function imports what it needs from the old module when it runs)."""
        dest_imports_old = any(self._spec_target(b.spec) == self.move.old_path for found in dest_bindings.values()
                               for b in found if b.kind == "import" and b.spec is not None and not b.type_checking
                               and not (b.spec.module == self.move.old_module and b.spec.name == self.name))
        problem = None
        if needs.from_old and self.dest in self.old_runtime_imports and not deferred:
            problem = (f"{self.move.old_module} imports {self.move.new_module} at import time, and {self.name} "
                       f"needs {', '.join(needs.from_old)} from {self.move.old_module}")
        elif old_keeps and dest_imports_old:
            problem = (f"{self.move.new_module} imports {self.move.old_module} at import time, and "
                       f"{self.move.old_module} still needs {self.name}")
        if problem is not None:
            raise CodePlaneError(ErrorCode.REFACTOR_CIRCULAR_IMPORT,
                                 f"moving {self.name} would make the modules import each other: {problem}",
                                 details={"symbol": self.target.qualified_name, "reason": "circular import",
                                          "needs_from_old_module": needs.from_old,
                                          "keep_reexport": self.keep_reexport})

    def _copied_cycles(self, needs: Needs, block: Block) -> list[ImportSpec]:
        """The copied imports that must open the moved function's body: each names a module that imports the
        destination at import time (``_compat`` gaining ``from attr._make import Attribute`` while ``_make``
        imports ``_compat``), at the top of the destination it would stop it importing. 4009 when the block
        cannot take it there (not a function, or a decorator, default or annotation uses the name)."""
        later: list[ImportSpec] = []
        for spec in needs.copied:
            target = self._spec_target(spec)
            if target is None or target in (self.dest, self.move.old_path):
                continue
            sources, _ = self.read([target])
            src = sources.get(target)
            root = parse_python(src.data) if src is not None else None
            if root is None:
                continue
            back = [b for found in module_bindings(self.mods, target, root).values() for b in found
                    if b.kind == "import" and b.spec is not None and not b.type_checking
                    and self._spec_target(b.spec) == self.dest]
            if back and deferrable(block, [spec.local]):
                later.append(spec)
                self.draft.warnings.append(
                    f"{spec.local} imported inside {self.name}: {target} imports {self.dest} when it loads, so a "
                    "module-level import would be circular")
                continue
            if back:
                line = back[0].statement.start_point[0] + 1
                raise CodePlaneError(
                    ErrorCode.REFACTOR_CIRCULAR_IMPORT,
                    f"moving {self.name} would make {self.dest} import {target} (for {spec.local}), which imports "
                    f"{self.dest} at import time ({target}:{line}); pick another destination or move "
                    f"{spec.local}'s use first",
                    details={"symbol": self.target.qualified_name, "reason": "circular import", "via": target,
                             "line": line, "name": spec.local})
            if self._reaches(target, self.dest):
                if deferrable(block, [spec.local]):
                    later.append(spec)
                    self.draft.warnings.append(
                        f"{spec.local} imported inside {self.name}: {target} imports {self.dest} through other "
                        "modules when it loads, so a module-level import would be circular")
                else:
                    self.draft.warnings.append(f"circular-import risk: {self.dest} will import {target}, which "
                                               f"imports {self.dest} through other modules")
        return later

    def _warn_cycles(self, old_imports_dest: bool, dest_imports_old: bool) -> None:
        if old_imports_dest and self._reaches(self.dest, self.move.old_path):
            self.draft.warnings.append(
                f"circular-import risk: {self.dest} already imports {self.move.old_path} (directly or through other "
                f"modules), and {self.move.old_path} will import {self.name} from it")
        if dest_imports_old and self._reaches(self.move.old_path, self.dest):
            self.draft.warnings.append(
                f"circular-import risk: {self.move.old_path} already imports {self.dest} (directly or through "
                f"other modules), and {self.dest} will import from it")

    def _reaches(self, start: str, goal: str) -> bool:
        """Whether ``start`` imports ``goal`` through resolved imports (bounded breadth-first walk); the old
        module's imports are taken as they will be after the move (without the ones it drops)."""
        seen = {start}
        frontier = [start]
        while frontier and len(seen) < _CYCLE_HOPS:
            nxt: list[str] = []
            for path in frontier:
                for fact in self.reader.imports_in_file(path, 10_000):
                    target = fact.resolved_path
                    if path == self.move.old_path and target in self.dropped_targets:
                        continue
                    if target == goal:
                        return True
                    if target is not None and target not in seen:
                        seen.add(target)
                        nxt.append(target)
            frontier = nxt
        return False

    # -- the old module -----------------------------------------------------------------------------------
    def _old_module_edits(self, src: SourceText, root: Any, block: Block, *, old_keeps: bool,
                          bindings: Mapping[str, list[Binding]], needs: Needs) -> None:
        self.draft.code.append((delete_block(src, block), "high"))
        deleted = self._drop_unused_imports(src, root, block, bindings, needs)
        self.draft.code = _merged_deletions(self.draft.code, src)
        if old_keeps:
            relative = uses_relative_imports(root)
            line = ImportSpec(self.move.new_module, self.name).render(self.mods, src.path, self.move.old_module,
                                                                      relative)
            insert_import(self.inserts, src, root, line, skip=deleted)
        if not self.keep_reexport:
            for edit in all_entry_removals(src, root, self.name):
                self.draft.code.append((edit, "high"))

    def _drop_unused_imports(self, src: SourceText, root: Any, block: Block, bindings: Mapping[str, list[Binding]],
                             needs: Needs) -> set[int]:
        """Imports only the moved block used leave the old module (a stale ``from .dest import X`` would
        otherwise turn the move into an import cycle). Kept when listed in ``__all__`` or imported from the
        old module by another file (a re-export)."""
        exported = all_names(root)
        unused: dict[int, tuple[Any, list[Any]]] = {}
        for spec in needs.copied + needs.own + [s for specs in needs.guarded.values() for s in specs]:
            found = bindings.get(spec.local, [])
            if len(found) != 1 or spec.local in exported or _uses_outside(root, spec.local, block) \
                    or self._imported_from_old(spec.local):
                continue
            stmt = found[0].statement
            item = binding_item(stmt, spec.local)
            if item is not None:
                unused.setdefault(stmt.id, (stmt, []))[1].append(item)
        remaining_targets: set[str] = set()
        dropped_targets: set[str] = set()
        for stmt, items in unused.values():
            names = import_items(stmt)
            kept = [n for n in names if all(n.id != i.id for i in items)]
            if not kept:
                self.draft.code.append(delete_statement(src, stmt))
            elif len(items) == 1:
                self.draft.code.append((delete_list_item(src, names, items[0], "unused_import"), "high"))
            else:
                line, col = src.node_span(names[0])[:2]
                end_line, end_col = src.node_span(names[-1])[2:]
                self.draft.code.append((SpanEdit(src.path, line, col, end_line, end_col,
                                                 src.slice(line, col, end_line, end_col),
                                                 ", ".join(text_of(n) for n in kept), "unused_import"), "high"))
            for item in items:
                target = self._item_target(stmt, item)
                if target is not None:
                    dropped_targets.add(target)
        removed = {(stmt.id, i.id) for stmt, items in unused.values() for i in items}
        for found in bindings.values():
            for b in found:
                item = binding_item(b.statement, b.name) if b.kind == "import" else None
                if b.spec is not None and item is not None and (b.statement.id, item.id) not in removed:
                    target = self._spec_target(b.spec)
                    if target is not None:
                        remaining_targets.add(target)
                        if not b.type_checking:
                            self.old_runtime_imports.add(target)
        self.dropped_targets = dropped_targets - remaining_targets
        return {stmt.id for stmt, items in unused.values() if len(items) == len(import_items(stmt))}

    def _imported_from_old(self, name: str) -> bool:
        refs = [r for r in self.reader.refs_named(name, None, 20_000) if r.role == "IMPORT" and r.via_import_uid]
        facts = self.reader.imports_of([r.via_import_uid for r in refs if r.via_import_uid is not None])
        return any(f.resolved_path == self.move.old_path and f.path != self.move.old_path for f in facts)

    def _spec_target(self, spec: ImportSpec) -> str | None:
        if spec.name is not None:
            sub = self.mods.resolve_module(f"{spec.module}.{spec.name}")
            if sub is not None:
                return sub
        return self.mods.resolve_module(spec.module)

    def _item_target(self, stmt: Any, item: Any) -> str | None:
        for spec in import_specs(self.mods, self.move.old_path, stmt):
            if spec.local == item_local(item):
                return self._spec_target(spec)
        return None


def _merged_deletions(edits: list[tuple[SpanEdit, Certainty]], src: SourceText) -> list[tuple[SpanEdit, Certainty]]:
    """Deletions in ``src`` that overlap made one: a block at the end of a module whose only other statement is
    the import it used (``from lib.make import build`` above ``def split``) is deleted from the end of that
    import's line, which the import's own deletion covers too (two overlapping edits are a 4001 divergence)."""
    spans = sorted((e for e, _ in edits if e.path == src.path and not e.new_text), key=lambda e: (e.line, e.column))
    merged: list[SpanEdit] = []
    for edit in spans:
        last = merged[-1] if merged else None
        if last is not None and (edit.line, edit.column) < (last.end_line, last.end_column):
            end = max((last.end_line, last.end_column), (edit.end_line, edit.end_column))
            reason = last.reason if last.reason == "moved_definition" else edit.reason
            merged[-1] = SpanEdit(src.path, last.line, last.column, end[0], end[1],
                                  src.slice(last.line, last.column, end[0], end[1]), "", reason)
        else:
            merged.append(edit)
    if len(merged) == len(spans):
        return edits
    kept = [(e, c) for e, c in edits if e.path != src.path or e.new_text]
    return kept + [(e, "high") for e in merged]


def _uses_outside(root: Any, name: str, block: Block) -> int:
    """Plain-name uses of ``name`` outside the block and outside import statements."""
    count = 0
    for node in walk(root):
        if node.type in IMPORT_STATEMENTS:
            continue
        if node.type != "identifier" or text_of(node) != name:
            continue
        line = node.start_point[0] + 1
        if block.start_line <= line <= block.end_line:
            continue
        parent = node.parent
        if parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") == node:
            continue
        if parent is not None and parent.type == "keyword_argument" and parent.child_by_field_name("name") == node:
            continue
        if any(a.type in IMPORT_STATEMENTS for a in ancestors(node)):
            continue
        count += 1
    return count


