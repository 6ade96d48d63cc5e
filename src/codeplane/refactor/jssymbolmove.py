"""Plan moving one JS/TS top-level declaration to another module (issue 20): named and default exports.

The declaration's statement (with ``export``/``export default`` and the comments directly above) goes to
the end of the destination module (created when missing). Names it uses that the old module imports are
imported the same way in the destination (relative specifiers re-rendered); names the old module declares
are imported from it (``export`` is added to a declaration that lacked it). When the old module still needs the
moved symbol the two modules then import each other: allowed between ES modules when every use across them runs
inside a function (the preview warns), refused with 4009 when one runs as a module loads.

Between CommonJS modules (:mod:`jscommonjs`) the same move is written in their system: the ``require``
statements the code reads go with it, a new module ends with ``module.exports = { f }`` (an existing one with
``module.exports.f = f``), and the old module requires it back where it still uses it, so its own
``module.exports`` keeps exporting it and no importer changes. Moves between the two systems are refused (4008),
as is a CommonJS move that needs the old module's own names (it would have to export them by assignment).

Importers are rewritten by :mod:`jsimporters`. ``require()``, dynamic ``import()`` and ``import x = require()``
of the old module are listed as warnings by :mod:`jsdynamic` (their property access is not rewritten) unless
``keep_reexport`` keeps the symbol reachable through the old module.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.refactor.assemble import Draft
from codeplane.refactor.facts import Def
from codeplane.refactor.jscommonjs import (
    RequireBinding,
    exports_line,
    insert_after_requires,
    is_commonjs,
    legacy_style,
    rendered_with,
    require_bindings,
    require_line,
    strict_directive,
)
from codeplane.refactor.jsdynamic import Load, file_loads, load_warnings
from codeplane.refactor.jsimporters import JsImporters
from codeplane.refactor.jsimports import JS_SUFFIXES, Unreached, is_js, render_specifier, resolve_specifier
from codeplane.refactor.jsspecifiers import JsSpecifiers, resolution_paths
from codeplane.refactor.jsstatements import (
    NAME_NODES,
    ImportBinding,
    TopStatement,
    declared_names,
    delete_statement_lines,
    dest_specifier,
    export_after_comments,
    fragment,
    import_bindings,
    in_export_clause,
    insert_after_imports,
    node_text,
    parse_js,
    reexports,
    relative_specifiers,
    specifier_style,
    statement_text,
    top_statement,
    walk_code,
    with_overloads,
)
from codeplane.refactor.jsstyle import JsStyle, file_style
from codeplane.refactor.pyimporters import Insertions, merge_same_start
from codeplane.refactor.spans import SourceText, SpanEdit

Reader = Callable[[Iterable[str]], tuple[dict[str, SourceText], dict[str, str]]]
#: Importers a warning names before it says how many more there are.
_SHOWN = 5


@dataclass
class JsSymbolMove:
    """Plans one JS/TS symbol move over a fixed file set (read-only)."""

    target: Def
    dest: str
    files: frozenset[str]
    read: Reader
    candidates: set[str]
    keep_reexport: bool
    dest_exists: bool
    draft: Draft = field(default_factory=Draft)
    inserts: Insertions = field(default_factory=Insertions)
    #: Whether the old module (and so the destination) is CommonJS (:mod:`jscommonjs`).
    commonjs: bool = False
    sources: dict[str, SourceText] = field(default_factory=dict)
    roots: dict[str, Any] = field(default_factory=dict)
    specifiers: JsSpecifiers | None = None

    def plan(self) -> tuple[Draft, dict[str, SourceText], dict[str, str], list[str]]:
        old = self.target.path
        paths = sorted({p for p in self.candidates if p in self.files and is_js(p)} | {old}
                       | ({self.dest} if self.dest_exists else set()))
        sources, hashes = self.read(paths)
        old_src = sources[old]
        old_root = parse_js(old_src)
        if old_root is None:
            raise CodePlaneError(ErrorCode.REFACTOR_UNSUPPORTED, f"no grammar for {old}", details={"path": old})
        stmt = self._find(old_root)
        dest_src = sources.get(self.dest) if self.dest_exists else None
        dest_root = parse_js(dest_src) if dest_src is not None else None
        self.sources = sources

        def through_barrel(path: str) -> bool:
            """``path`` is a module that re-exports the target (``export * from``): ``import { f } from
            "../internal"`` in the destination is the moved symbol itself."""
            return path != self.target.path and reexports(path, self.target.name, self.target.path,
                                                          files=self.files, root_of=self._root_of)

        self._check_destination(dest_root, stmt, through_barrel)
        self.commonjs = self._module_system(old_src, old_root, dest_src, dest_root)
        old_imports = import_bindings(old_root)
        requires = require_bindings(old_root) if self.commonjs else {}
        old_decls = self._declarations(old_root)
        used = self._free_names(stmt)
        remaining = self._uses_outside(old_root, stmt)
        old_keeps = remaining > 0 or self.keep_reexport
        copied = sorted({old_imports[n] for n in used if n in old_imports}, key=lambda b: (b.specifier, b.local))
        from_old = sorted(n for n in used if n in old_decls and n not in old_imports and n not in requires)
        cycle_deferred = bool(from_old) and old_keeps and not self.commonjs and self._only_when_called(
            stmt, from_old, old_root)
        if from_old and old_keeps and not cycle_deferred:
            raise CodePlaneError(
                ErrorCode.REFACTOR_CIRCULAR_IMPORT,
                f"moving {self.target.name} would make {old} and {self.dest} import each other: it needs "
                f"{', '.join(from_old)} from {old}, which still needs it ({remaining} use(s) remain"
                f"{', keep_reexport' if self.keep_reexport else ''}). Move those first",
                details={"symbol": self.target.qualified_name, "reason": "circular import",
                         "needs_from_old_module": from_old})
        written = sorted(set(from_old) & self._assigned(stmt))
        if written:  # an imported binding is read-only: ``currentScope = ...`` in the destination is TS2632
            raise CodePlaneError(
                ErrorCode.REFACTOR_UNSUPPORTED,
                f"moving {self.target.name} would assign {', '.join(written)}, a variable of {old}, through an "
                "import, which is read-only. Move the variable with it, or assign it through a function of its module",
                details={"symbol": self.target.qualified_name, "reason": "assigns an old module variable",
                         "assigned": written})
        if from_old and self.commonjs:
            raise CodePlaneError(
                ErrorCode.REFACTOR_UNSUPPORTED,
                f"moving {self.target.name} needs {', '.join(from_old)} from {old}, a CommonJS module, which exports "
                "by assignment (module.exports), not written by a move. Move those first",
                details={"symbol": self.target.qualified_name, "reason": "commonjs module-level names",
                         "needs_from_old_module": from_old})
        if cycle_deferred:
            self.draft.warnings.append(
                f"{old} and {self.dest} now import each other ({', '.join(from_old)} one way, "
                f"{self.target.name} the other); every use across them runs inside a function, never while the "
                "modules load")
        for name in from_old:
            node, exported = old_decls[name]
            if not exported:  # the destination imports it from here: it has to be exported
                line, col = old_src.node_span(node)[:2]
                self.draft.code.append((SpanEdit(old, line, col, line, col, "", "export ", "export_for_move"),
                                        "high"))
        self._old_edits(old_src, old_root, stmt, remaining=remaining)
        if self.commonjs:
            creates = self._commonjs_dest_edits(old_src, old_root, stmt,
                                                sorted((requires[n] for n in used if n in requires),
                                                       key=lambda b: b.statement.start_byte),
                                                dest_src=dest_src, dest_root=dest_root)
        else:
            creates = self._dest_edits(old_src, stmt, copied, from_old=from_old, dest_src=dest_src,
                                       dest_root=dest_root, old_keeps=old_keeps)
        importers = JsImporters(self.target, self.dest, self.files, self.keep_reexport, self.draft, self.inserts,
                                moved_type_only=self._type_only(stmt), dest_barrel=through_barrel,
                                specifiers=self.specifiers)
        loads: list[Load] = []
        for path in paths:
            src = sources.get(path)
            if path == old or src is None:
                continue
            root = dest_root if path == self.dest else parse_js(src)
            if root is not None:
                importers.edits(src, root, stmt)
                # A CommonJS old module keeps exporting the moved name (its ``module.exports`` reads the new
                # ``require``): what loads it with ``require`` still finds it.
                if not self.keep_reexport and not self.commonjs:
                    loads += file_loads(src, root, self.files, old=old, dest=self.dest, name=self.target.name,
                                        specifiers=self.specifiers)
        if importers.unreached and not self.keep_reexport and not self.commonjs:
            # (A CommonJS old module goes on exporting the name anyway: it requires it back.) What loads the old
            # module at run time then finds the name there too.
            self._keep_exporting(old_src, old_root, stmt, importers.unreached, from_old=[] if old_keeps else from_old)
            loads = []
        self.draft.warnings += load_warnings(loads, old)
        # Every inserted text is a statement built here: each file gets them in its own quotes and semicolons.
        self._emptied_old_module(old_src, stmt)
        for (path, _, _), texts in self.inserts.by_position.items():
            src = sources.get(path)
            style = file_style(src.text if src is not None else old_src.text, self._project_style())
            texts[:] = [style.lines(text) for text in texts]
        self.draft.code += [(e, "medium" if e.reason in ("star_reexport", "namespace_member") else "high")
                            for e in self.inserts.edits()]
        self.draft.code = merge_same_start(self.draft.code)
        return self.draft, sources, hashes, creates

    # -- the moved statement ------------------------------------------------------------------------------
    def _find(self, root: Any) -> TopStatement:
        line = self.target.name_line
        for node in root.named_children:
            if not node.start_point[0] + 1 <= line <= node.end_point[0] + 1:
                continue
            stmt = top_statement(node)
            if stmt is not None and stmt.declaration is not None and \
                    self.target.name in (declared_names(stmt.declaration) or [self.target.name]):
                names = declared_names(stmt.declaration)
                if len(names) > 1:
                    raise CodePlaneError(ErrorCode.REFACTOR_UNSUPPORTED,
                                         f"{self.target.name} is declared together with "
                                         f"{', '.join(n for n in names if n != self.target.name)}; split the "
                                         "declaration first", details={"reason": "shared declaration"})
                return with_overloads(stmt, self.target.name)
            break
        raise CodePlaneError(ErrorCode.REFACTOR_UNSUPPORTED, f"{self.target.name} is not a top-level declaration",
                             details={"symbol": self.target.qualified_name, "reason": "not a top-level statement"})

    def _declarations(self, root: Any) -> dict[str, tuple[Any, bool]]:
        """Module-level declared name -> (its statement, whether it is exported)."""
        out: dict[str, tuple[Any, bool]] = {}
        exported: set[str] = set()
        for node in root.named_children:
            stmt = top_statement(node)
            if stmt is not None and stmt.declaration is not None:
                for name in declared_names(stmt.declaration):
                    out[name] = (node, stmt.exported)
            if node.type == "export_statement" and node.child_by_field_name("source") is None:
                for clause in node.named_children:
                    if clause.type == "export_clause":
                        exported |= {node_text(s.child_by_field_name("name")) for s in clause.named_children
                                     if s.type == "export_specifier" and s.child_by_field_name("name") is not None}
        # ``const Z = 1; export { Z };``: exported already, no ``export`` keyword to add.
        return {name: (node, done or name in exported) for name, (node, done) in out.items()}

    def _free_names(self, stmt: TopStatement) -> set[str]:
        names = {node_text(n) for part in stmt.nodes for n in walk_code(part) if n.type in NAME_NODES}
        return names - {self.target.name}

    def _root_of(self, path: str) -> Any | None:
        """A module's syntax tree (read when the move did not), for following re-exports."""
        if path not in self.roots:
            src = self.sources.get(path) or self.read([path])[0].get(path)
            self.roots[path] = parse_js(src) if src is not None else None
        return self.roots[path]

    def _bound_in_dest(self, dest_root: Any, local: str, module: str | None, imported: str, spec: str) -> bool:
        """Whether the destination already binds ``local`` to what the moved code reads under that name
        (``imported`` of ``module``, or of ``spec`` for a package): directly or through a barrel that re-exports
        it; then no import is added for it. 4007 when it binds the name to something else."""
        if local in self._declarations(dest_root):
            self._collision(None, f"declares {local}, which the moved code reads from elsewhere")
        found = import_bindings(dest_root).get(local)
        if found is None:
            return False
        resolved = self._resolve(self.dest, found.specifier)
        same = found.imported == imported and (resolved == module if module is not None else found.specifier == spec)
        if not same and resolved is not None and module is not None:
            same = reexports(resolved, imported, module, files=self.files, root_of=self._root_of) and (
                found.imported == imported)
        if not same:
            self._collision(None, f"imports {local} from {found.specifier}, and the moved code reads another {local}")
        return True

    @staticmethod
    def _assigned(stmt: TopStatement) -> set[str]:
        """Names the statement assigns (``x = …``, ``x += …``, ``x++``)."""
        out: set[str] = set()
        for node in walk_code(stmt.node):
            if node.type in ("assignment_expression", "augmented_assignment_expression"):
                target = node.child_by_field_name("left")
            elif node.type == "update_expression":
                target = node.child_by_field_name("argument")
            else:
                continue
            if target is not None and target.type == "identifier":
                out.add(node_text(target))
        return out

    def _project_style(self) -> JsStyle:
        """The import style most of the move's modules write, for a file that writes none of its own."""
        return file_style("\n".join(src.text for src in self.sources.values()))

    def _project_suffixed(self) -> bool:
        """Whether the modules this move reads write relative specifiers with their extension, most of them
        (``'./common.js'``): the style for a file that has no relative import to follow."""
        specs = [spec for path in sorted(self.sources) for spec in relative_specifiers(self._root_of(path))]
        return sum(1 for spec in specs if spec.endswith(JS_SUFFIXES)) * 2 > len(specs)

    def _node_esm(self, path: str) -> bool:
        return self.specifiers is not None and self.specifiers.node_esm(path)

    def _only_when_called(self, stmt: TopStatement, from_old: Iterable[str], old_root: Any) -> bool:
        """Whether the two ES modules may import each other: every use of ``from_old`` in the moved statement and
        every use of the moved symbol left in the old module lies inside a function, so nothing of either is read
        while the modules load (an import cycle is then harmless: ES bindings are live, TypeScript's and Babel's
        CommonJS output reads ``module_1.name`` when the function runs). A class's ``extends``, decorators and
        static fields, or a top-level call, run as the module loads: then 4009 stands."""
        needed = set(from_old)
        first, last = stmt.first.start_point[0], stmt.node.end_point[0]
        for node in walk_code(stmt.node):
            if node.type in NAME_NODES and node_text(node) in needed and not _inside_function(node, stmt.node):
                return False
        for node in walk_code(old_root):
            if node.type in NAME_NODES and node_text(node) == self.target.name and \
                    not first <= node.start_point[0] <= last and not in_export_clause(node) and \
                    not _inside_function(node, None) and not _in_import(node):
                return False
        return True

    def _uses_outside(self, root: Any, stmt: TopStatement) -> int:
        count = 0
        first, last = stmt.first.start_point[0], stmt.node.end_point[0]
        for node in walk_code(root):
            if node.type in ("import_statement",):
                continue
            if node.type in NAME_NODES and node_text(node) == self.target.name and \
                    not first <= node.start_point[0] <= last and not in_export_clause(node):
                count += 1
        return count

    def _check_destination(self, dest_root: Any | None, stmt: TopStatement,
                           through_barrel: Callable[[str], bool]) -> None:
        if dest_root is None:
            return
        for node in dest_root.named_children:
            other = top_statement(node)
            if other is not None and other.declaration is not None and \
                    self.target.name in declared_names(other.declaration):
                self._collision(node, "exists in destination")
            if stmt.default and other is not None and other.default:
                self._collision(node, "destination already has a default export")
        imported = import_bindings(dest_root).get(self.target.name)
        resolved = self._resolve(self.dest, imported.specifier) if imported is not None else None
        if imported is not None and resolved != self.target.path and not (resolved and through_barrel(resolved)):
            self._collision(None, "exists in destination")

    def _collision(self, node: Any | None, reason: str) -> None:
        line = node.start_point[0] + 1 if node is not None else 0
        raise CodePlaneError(ErrorCode.REFACTOR_COLLISION, f"{self.dest} already binds {self.target.name} "
                             f"(line {line}): {reason}", details={"path": self.dest, "line": line,
                                                                  "name": self.target.name, "reason": reason})

    # -- old module -------------------------------------------------------------------------------------
    def _module_system(self, old_src: SourceText, old_root: Any, dest_src: SourceText | None,
                       dest_root: Any | None) -> bool:
        """Whether the move is between CommonJS modules; 4008 when the two modules are of different systems."""
        old_cjs = is_commonjs(old_src, old_root)
        if dest_src is not None and dest_root is not None:
            dest_cjs = is_commonjs(dest_src, dest_root)
        else:
            dest_cjs = old_cjs if not self.dest.endswith((".cjs", ".mjs", ".ts", ".tsx", ".mts", ".cts")) \
                else self.dest.endswith(".cjs")
        if dest_cjs != old_cjs:
            systems = {True: "CommonJS", False: "an ES module"}
            raise CodePlaneError(
                ErrorCode.REFACTOR_UNSUPPORTED,
                f"{old_src.path} is {systems[old_cjs]} and {self.dest} {systems[dest_cjs]}: a move writes each "
                "module in its own system and cannot join the two", details={"reason": "module systems differ",
                                                                             "path": self.dest})
        return old_cjs

    def _old_edits(self, src: SourceText, root: Any, stmt: TopStatement, *, remaining: int) -> None:
        self.draft.code.append((delete_statement_lines(src, stmt.node, stmt.first), "high"))
        spec = dest_specifier(src.path, root, self.target.path, self.dest, project_suffixed=self._project_suffixed(),
                              node_esm=self._node_esm(src.path))
        if self.commonjs:
            if remaining or self.keep_reexport:
                insert_after_requires(self.inserts, src, root,
                                      require_line(self.target.name, spec, legacy=legacy_style(root)))
            return
        lines = []
        if remaining:
            lines.append(self._import_line(stmt, spec))
        if self.keep_reexport:
            keyword = "export type" if self._type_only(stmt) else "export"
            lines.append(f"{keyword} {{ {'default' if stmt.default else self.target.name} }} from '{spec}';")
        for line in lines:
            insert_after_imports(self.inserts, src, root, line)

    def _keep_exporting(self, src: SourceText, root: Any, stmt: TopStatement, unreached: list[Unreached], *,
                        from_old: list[str]) -> None:
        """Importers through a package specifier that cannot name the destination (``'@acme/a'`` while the
        package's ``"exports"`` has no entry for it) keep theirs: the old module re-exports the symbol, as a
        package's entry point keeps its public names. The warning says so: adding an ``"exports"`` entry instead
        is the agent's call (a warning keeps ``apply: true`` from applying it unseen)."""
        if from_old and not self._only_when_called(stmt, from_old, root):
            raise CodePlaneError(
                ErrorCode.REFACTOR_CIRCULAR_IMPORT,
                f"{len(unreached)} importer(s) reach {self.target.name} through a specifier that cannot name "
                f"{self.dest}, so {src.path} must re-export it, and the two modules would import each other while "
                "they load. Add an \"exports\" entry for the destination first",
                details={"symbol": self.target.qualified_name, "reason": "circular import",
                         "importers": sorted({u.path for u in unreached})})
        spec = dest_specifier(src.path, root, self.target.path, self.dest, project_suffixed=self._project_suffixed(),
                              node_esm=self._node_esm(src.path))
        keyword = "export type" if self._type_only(stmt) else "export"
        line = f"{keyword} {{ {'default' if stmt.default else self.target.name} }} from '{spec}';"
        insert_after_imports(self.inserts, src, root, line, reason="entry_reexport")
        if from_old:
            self.draft.warnings.append(
                f"{src.path} and {self.dest} now import each other ({', '.join(from_old)} one way, "
                f"{self.target.name} re-exported the other); every use across them runs inside a function")
        shown = ", ".join(f"{u.path}:{u.line} '{u.spec}'" for u in unreached[:_SHOWN])
        more = f" and {len(unreached) - _SHOWN} more" if len(unreached) > _SHOWN else ""
        self.draft.warnings.append(
            f"{src.path} keeps exporting {self.target.name} ({line}) for {shown}{more}: no specifier of their kind "
            f"names {self.dest} (an \"exports\"/\"imports\" entry for it would)")

    def _emptied_old_module(self, src: SourceText, stmt: TopStatement) -> None:
        """The moved statement was all the old module held: what is added there (an import, a re-export) ends
        the file as its one line, not followed by the blank lines meant to part it from code below."""
        key = (src.path, 1, 0)
        texts = self.inserts.by_position.get(key)
        first = stmt.first.start_point[0] + 1
        if not texts or any(src.line_text(n).strip() for n in range(1, len(src.lines) + 1)
                            if not first <= n <= stmt.node.end_point[0] + 1):
            return
        self.inserts.trailers.pop(key, None)
        texts[-1] = texts[-1].removesuffix("\n")

    def _import_line(self, stmt: TopStatement, spec: str) -> str:
        keyword = "import type" if self._type_only(stmt) else "import"
        if stmt.default:
            return f"{keyword} {self.target.name} from '{spec}';"
        return f"{keyword} {{ {self.target.name} }} from '{spec}';"

    @staticmethod
    def _type_only(stmt: TopStatement) -> bool:
        """An interface or type alias: a name of types alone, imported and re-exported with ``type``."""
        return stmt.declaration is not None and stmt.declaration.type in ("interface_declaration",
                                                                          "type_alias_declaration")

    # -- destination -------------------------------------------------------------------------------------
    def _dest_edits(self, old_src: SourceText, stmt: TopStatement, copied: list[ImportBinding], *,
                    from_old: list[str], dest_src: SourceText | None, dest_root: Any | None,
                    old_keeps: bool) -> list[str]:
        if dest_root is not None:  # what the destination already imports is not imported again
            copied = [b for b in copied if not self._bound_in_dest(
                dest_root, b.local, self._resolve(self.target.path, b.specifier), b.imported, b.specifier)]
            from_old = [n for n in from_old if not self._bound_in_dest(dest_root, n, self.target.path, n, "")]
        lines = [self._copy_import(b) for b in copied]
        lost = sorted({b.specifier for b in copied if self._moved_specifier(b.specifier) == b.specifier
                       and self._resolve(self.dest, b.specifier) != self._resolve(self.target.path, b.specifier)})
        if lost:
            self.draft.warnings.append(
                f"{', '.join(repr(s) for s in lost)} (imported with the moved code) name(s) another file or nothing "
                f"in {self.dest}, and no specifier of that kind names the file {self.target.path} means; fix it there")
        if from_old:
            style_root = dest_root if dest_root is not None else parse_js(old_src)
            spec = render_specifier(self.dest, self.target.path, self.target.path,
                                    specifier_style(self.dest, self.target.path, style_root,
                                                    project_suffixed=self._project_suffixed(),
                                                    node_esm=self._node_esm(self.dest)))
            lines.append(f"import {{ {', '.join(from_old)} }} from '{spec}';")
        lines = sorted(dict.fromkeys(lines))
        body = statement_text(old_src, stmt.node, stmt.first)
        if not stmt.exported and old_keeps and stmt.signatures:
            body = _export_each(old_src, stmt)
        elif not stmt.exported and old_keeps:
            body = "export " + body if not body.startswith(("/*", "//")) else export_after_comments(body)
        if dest_src is None or dest_root is None:
            header = file_style(old_src.text, self._project_style()).lines("\n".join(lines))
            content = (header + "\n\n" if header else "") + body + "\n"
            self.draft.code.append((SpanEdit(self.dest, 1, 0, 1, 0, "", content, "new_module"), "high"))
            return [self.dest]
        existing = {self._copy_import(b) for b in import_bindings(dest_root).values()}
        for line in lines:
            if line not in existing:
                insert_after_imports(self.inserts, dest_src, dest_root, line)
        last = max((n for n in range(1, len(dest_src.lines) + 1) if dest_src.line_text(n).strip()), default=0)
        if last == 0:
            self.draft.code.append((SpanEdit(self.dest, 1, 0, 1, 0, "", body + "\n", "moved_definition"), "high"))
        else:
            end = len(dest_src.line_text(last))
            self.draft.code.append((SpanEdit(self.dest, last, end, last, end, "", "\n\n" + body, "moved_definition"),
                                    "high"))
        return []

    def _commonjs_dest_edits(self, old_src: SourceText, old_root: Any, stmt: TopStatement,
                             needed: list[RequireBinding], *, dest_src: SourceText | None,
                             dest_root: Any | None) -> list[str]:
        """The destination of a CommonJS move: the ``require`` statements the moved code reads (specifiers
        re-rendered), the code, and its export (``module.exports = { f }`` in a new module, else
        ``module.exports.f = f`` after everything)."""
        lines = list(dict.fromkeys(rendered_with(old_src, b, self._moved_specifier(fragment(b.specifier) or ""))
                                   for b in needed))
        body = statement_text(old_src, stmt.node, stmt.first)
        name = self.target.name
        style = file_style(old_src.text if dest_src is None else dest_src.text)
        if dest_src is None or dest_root is None:
            directive = strict_directive(old_root)
            header = "\n\n".join(part for part in (directive, "\n".join(lines)) if part)
            content = (header + "\n\n" if header else "") + body + "\n\n" + style.line(exports_line(
                name, legacy=legacy_style(old_root))) + "\n"
            self.draft.code.append((SpanEdit(self.dest, 1, 0, 1, 0, "", content, "new_module"), "high"))
            return [self.dest]
        existing = {node_text(b.statement) for b in require_bindings(dest_root).values()}
        for line in lines:
            if line not in existing:
                insert_after_requires(self.inserts, dest_src, dest_root, line)
        last = max((n for n in range(1, len(dest_src.lines) + 1) if dest_src.line_text(n).strip()), default=0)
        tail = body + "\n\n" + style.line(f"module.exports.{name} = {name};")
        if last == 0:
            self.draft.code.append((SpanEdit(self.dest, 1, 0, 1, 0, "", tail + "\n", "moved_definition"), "high"))
        else:
            end = len(dest_src.line_text(last))
            self.draft.code.append((SpanEdit(self.dest, last, end, last, end, "", "\n\n" + tail,
                                             "moved_definition"), "high"))
        return []

    def _resolve(self, importer: str, spec: str) -> str | None:
        if self.specifiers is not None:
            return self.specifiers.resolve(importer, spec, self.files)
        return resolve_specifier(importer, spec, self.files)

    def _moved_specifier(self, spec: str) -> str:
        """A specifier of the old module, as the destination must write it (a ``#imports`` or package specifier
        that means something else from the destination's package becomes one of its kind that does, if any)."""
        if not spec.startswith("."):
            target = self._resolve(self.target.path, spec)
            if self.specifiers is None or target is None or self._resolve(self.dest, spec) == target:
                return spec
            return self.specifiers.render(self.dest, spec, target, target, self.files) or spec
        target = resolve_specifier(self.target.path, spec, self.files)
        if target is not None:
            return render_specifier(self.dest, target, target, spec)
        absolute = posixpath.normpath(posixpath.join(posixpath.dirname(self.target.path), spec))
        rel = posixpath.relpath(absolute, posixpath.dirname(self.dest) or ".")
        return rel if rel.startswith("..") else "./" + rel

    def _copy_import(self, binding: ImportBinding) -> str:
        spec = self._moved_specifier(binding.specifier)
        kind = "import type" if binding.type_only else "import"
        if binding.kind == "default":
            return f"{kind} {binding.local} from '{spec}';"
        if binding.kind == "namespace":
            return f"{kind} * as {binding.local} from '{spec}';"
        alias = f" as {binding.local}" if binding.local != binding.imported else ""
        return f"{kind} {{ {binding.imported}{alias} }} from '{spec}';"


def plan_js_move(target: Def, dest: str, files: Mapping[str, object], read: Reader, candidates: set[str], *,
                 keep_reexport: bool, dest_exists: bool) -> tuple[Draft, dict[str, SourceText], dict[str, str],
                                                                  list[str]]:
    """The JS/TS symbol move's draft, sources, hashes and the files it creates."""
    resolution, _ = read(resolution_paths(files))
    planner = JsSymbolMove(target, dest, frozenset(p for p in files if is_js(p)) | {dest}, read, candidates,
                           keep_reexport, dest_exists, specifiers=JsSpecifiers.of(resolution.values()))
    return planner.plan()


#: Nodes whose body runs when called, not when the module loads.
_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration", "function_expression",
                        "function", "generator_function", "arrow_function", "method_definition"})


def _inside_function(node: Any, stop: Any | None) -> bool:
    """Whether ``node`` lies in the parameters or body of a function (below ``stop``, the statement moved, which
    may itself be the function): its code runs when the function is called."""
    parent = node.parent
    while parent is not None:
        if parent.type in _FUNCTIONS and parent.child_by_field_name("name") is not node:
            return True
        if stop is not None and parent.id == stop.id:
            return False
        parent = parent.parent
    return False


def _export_each(src: SourceText, stmt: TopStatement) -> str:
    """The text of an overloaded function with ``export`` before each signature and the implementation (TS2383:
    overload signatures must all be exported or none)."""
    top = stmt.first.start_point[0]
    lines = statement_text(src, stmt.node, stmt.first).split("\n")
    offset = len(lines) - (stmt.node.end_point[0] - top + 1)  # the comment lines above the first signature
    for node in reversed(stmt.nodes):
        row = offset + node.start_point[0] - top
        column = src.char_column(node.start_point[0], node.start_point[1])
        lines[row] = lines[row][:column] + "export " + lines[row][column:]
    return "\n".join(lines)


def _in_import(node: Any) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in ("import_statement", "export_statement") and parent.child_by_field_name("source"):
            return True
        parent = parent.parent
    return False
