"""Keep every importer of a moved JS/TS declaration working (issue 20): exact spans, never a line replace.

``import { f } from './old'`` (aliases, ``type`` imports, default imports for a default export) and
``export { f } from './old'`` get the new specifier, or lose ``f`` and gain a statement for it when they import
more; ``ns.f`` through ``import * as ns`` becomes ``f`` with an added import (``medium``); ``export * from
'./old'`` gains ``export { f } from './new'`` (``medium``). In the destination itself the import goes. A package
specifier (``'@acme/a'``, ``'#internal'``) becomes one of its kind naming the destination (:mod:`jsspecifiers`), or,
when there is none, stays, listed in ``unreached`` for the old module to go on exporting the symbol.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from codeplane.refactor.assemble import Draft
from codeplane.refactor.facts import Def
from codeplane.refactor.jsimports import Specifiers, Unreached, render_specifier, resolve_specifier
from codeplane.refactor.jsstatements import (
    TopStatement,
    declared_names,
    delete_statement_lines,
    fragment,
    fragment_node,
    import_bindings,
    insert_after_imports,
    node_text,
    top_statement,
    walk_code,
)
from codeplane.refactor.pyimporters import Insertions, delete_list_item
from codeplane.refactor.spans import SourceText, SpanEdit


@dataclass
class JsImporters:
    """Rewrites the importers of ``target`` (moving to ``dest``) into the move's draft and insertions."""

    target: Def
    dest: str
    files: frozenset[str]
    keep_reexport: bool
    draft: Draft
    inserts: Insertions
    #: The moved declaration is a type alone (an interface, a type alias): what imports or re-exports it from
    #: the new module says so (``import type``, ``export type``), as ``isolatedModules`` requires of a re-export.
    moved_type_only: bool = False
    #: Whether a module re-exports the moved symbol (a barrel): the destination's import of it through one goes.
    dest_barrel: Callable[[str], bool] | None = None
    #: ``tsconfig`` path aliases (``@lib/format``) and package.json specifiers (``@acme/a``, ``#internal``):
    #: importers through one are rewritten too, by one of the same kind (:mod:`jsspecifiers`).
    specifiers: Specifiers | None = None
    #: Importers whose specifier no specifier of its kind can turn into one naming the destination: left as they
    #: are, for the old module to go on exporting the symbol to them.
    unreached: list[Unreached] = field(default_factory=list)

    def _kind(self, keyword: str, statement_type_only: bool, item: str) -> str:
        """``import``/``export``, with ``type`` for a type-only statement or moved declaration (never around an
        item that carries its own ``type``)."""
        typed = (statement_type_only or self.moved_type_only) and not item.startswith("type ")
        return f"{keyword} type" if typed else keyword

    def edits(self, src: SourceText, root: Any, moved: TopStatement) -> None:
        """Plan the rewrites in one file (``moved``: the moved statement, as it stood in the old module)."""
        is_dest = src.path == self.dest
        imported_name = "default" if moved.default else self.target.name
        #: Namespace imports of the old module: local name -> the specifier as written.
        namespaces: dict[str, str] = {}
        for stmt in walk_code(root):
            if stmt.type not in ("import_statement", "export_statement"):
                continue
            source = stmt.child_by_field_name("source")
            spec = fragment(source)
            resolved = self._resolve(src.path, spec) if spec is not None else None
            if spec is None or (resolved != self.target.path and not (
                    is_dest and stmt.type == "import_statement" and resolved and self.dest_barrel is not None
                    and self.dest_barrel(resolved))):
                continue
            new_spec = self._new_spec(src.path, spec)
            type_only = any(c.type == "type" for c in stmt.children)
            if stmt.type == "export_statement":
                if new_spec is None:
                    self._unreached(src, stmt, spec)
                else:
                    self._reexport(src, stmt, imported_name, spec, new_spec)
                continue
            clause = next((c for c in stmt.named_children if c.type == "import_clause"), None)
            if clause is None:
                continue
            parts = list(clause.named_children)
            items: list[Any] = []
            for part in parts:
                if part.type == "named_imports":
                    items = [i for i in part.named_children if i.type == "import_specifier"]
                elif part.type == "namespace_import":
                    ident = next((c for c in part.named_children if c.type == "identifier"), None)
                    if ident is not None and not moved.default:
                        namespaces.setdefault(node_text(ident), spec)
            hits = [i for i in items if node_text(i.child_by_field_name("name")) == imported_name]
            default_hit = next((p for p in parts if p.type == "identifier"), None) if moved.default else None
            taken = [*hits, *([default_hit] if default_hit is not None else [])]
            if not taken:
                continue
            if new_spec is None and not is_dest:
                self._unreached(src, stmt, spec)
                continue
            others = len(items) - len(hits) + sum(1 for p in parts if p.type == "namespace_import") + \
                (1 if any(p.type == "identifier" for p in parts) and default_hit is None else 0)
            if others == 0:
                if is_dest:
                    self.draft.code.append((delete_statement_lines(src, stmt), "high"))
                elif new_spec is not None:
                    frag = fragment_node(source)
                    self.draft.code.append((src.edit_for_node(frag, new_spec, "import"), "high"))
                continue
            for item in hits:
                named = [i for i in items]
                if len(named) > 1:
                    self.draft.code.append((delete_list_item(src, named, item, "import"), "high"))
                else:  # ``import d, { f } from`` -> ``import d from``: the braces go with the only name
                    brace = item.parent
                    prev = brace.prev_sibling
                    line, col = src.node_span(prev)[:2] if prev is not None and prev.type == "," else \
                        src.node_span(brace)[:2]
                    end_line, end_col = src.node_span(brace)[2:]
                    self.draft.code.append((SpanEdit(src.path, line, col, end_line, end_col,
                                                     src.slice(line, col, end_line, end_col), "", "import"), "high"))
                if not is_dest:
                    kind = self._kind("import", type_only, node_text(item))
                    self.inserts.after(src, stmt, f"{kind} {{ {node_text(item)} }} from '{new_spec}';")
            if default_hit is not None:
                nxt = default_hit.next_sibling
                end_line, end_col = src.node_span(nxt.next_sibling if nxt is not None and nxt.type == "," and
                                                  nxt.next_sibling is not None else default_hit)[:2] \
                    if nxt is not None and nxt.type == "," else src.node_span(default_hit)[2:]
                line, col = src.node_span(default_hit)[:2]
                self.draft.code.append((SpanEdit(src.path, line, col, end_line, end_col,
                                                 src.slice(line, col, end_line, end_col), "", "import"), "high"))
                if not is_dest:
                    kind = self._kind("import", type_only, "")
                    self.inserts.after(src, stmt, f"{kind} {node_text(default_hit)} from '{new_spec}';")
        if namespaces:
            self._namespace_members(src, root, namespaces, is_dest)

    def _resolve(self, importer: str, spec: str) -> str | None:
        if self.specifiers is not None:
            return self.specifiers.resolve(importer, spec, self.files)
        return resolve_specifier(importer, spec, self.files)

    def _new_spec(self, importer: str, spec: str) -> str | None:
        """``spec`` (naming the old module) rewritten to name the destination, of its kind (relative, alias,
        package); ``None`` when no specifier of that kind does."""
        if self.specifiers is not None:
            return self.specifiers.render(importer, spec, self.target.path, self.dest, self.files)
        return render_specifier(importer, self.target.path, self.dest, spec)

    def _unreached(self, src: SourceText, stmt: Any, spec: str) -> None:
        self.unreached.append(Unreached(src.path, stmt.start_point[0] + 1, spec, self.dest))

    def _reexport(self, src: SourceText, stmt: Any, imported_name: str, spec: str, new_spec: str) -> None:
        clause = next((c for c in stmt.named_children if c.type == "export_clause"), None)
        if clause is None:  # ``export * from './old'``
            if not self.keep_reexport and imported_name != "default" and not self._stars_dest(src, stmt.parent):
                line = f"{self._kind('export', False, '')} {{ {self.target.name} }} from '{new_spec}'"
                self.inserts.after(src, stmt, line + ";", "star_reexport")
                self.draft.warnings.append(f"{src.path} re-exports everything from {spec}; {line} is added (medium)")
            return
        items = [s for s in clause.named_children if s.type == "export_specifier"]
        hits = [s for s in items if node_text(s.child_by_field_name("name")) == imported_name]
        if not hits:
            return
        if len(hits) == len(items):
            frag = fragment_node(stmt.child_by_field_name("source"))
            self.draft.code.append((src.edit_for_node(frag, new_spec, "import"), "high"))
            return
        statement_type_only = any(c.type == "type" for c in stmt.children)
        for item in hits:
            self.draft.code.append((delete_list_item(src, items, item, "import"), "high"))
            kind = self._kind("export", statement_type_only, node_text(item))
            self.inserts.after(src, stmt, f"{kind} {{ {node_text(item)} }} from '{new_spec}';")

    def _stars_dest(self, src: SourceText, root: Any) -> bool:
        """The file already re-exports everything from the destination (immer's ``internal.ts`` has ``export *
        from "./utils/plugins"``): the moved symbol goes on being exported through it, nothing to add."""
        for node in root.named_children if root is not None else ():
            spec = fragment(node.child_by_field_name("source")) if node.type == "export_statement" else None
            if spec and not any(c.type in ("export_clause", "namespace_export") for c in node.named_children) and \
                    self._resolve(src.path, spec) == self.dest:
                return True
        return False

    def _namespace_members(self, src: SourceText, root: Any, namespaces: dict[str, str], is_dest: bool) -> None:
        # The bare name must not mean something else there: a declaration of it, or an import of it from a
        # module other than the old and new ones (an import of the moved symbol itself is fine).
        imported = import_bindings(root).get(self.target.name)
        other_import = imported is not None and self._resolve(src.path, imported.specifier) \
            not in (self.target.path, self.dest)
        declared = any(self.target.name in declared_names(st.declaration) for st in
                       (top_statement(n) for n in root.named_children) if st is not None and st.declaration is not None)
        conflict = other_import or declared
        already = imported is not None and not other_import
        hits: list[Any] = []
        for node in walk_code(root):
            if node.type != "member_expression":
                continue
            obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
            if obj is not None and prop is not None and obj.type == "identifier" and node_text(obj) in namespaces \
                    and node_text(prop) == self.target.name:
                hits.append(node)
        if not hits:
            return
        if conflict and not is_dest:
            self.draft.warnings.append(f"{src.path}: {len(hits)} use(s) of <namespace>.{self.target.name} not "
                                       f"rewritten: {self.target.name} is already a name there")
            return
        # In the style of the namespace import it replaces (``"./util.js"`` -> ``"./format.js"``), as a named
        # import's new specifier is; the file's other specifiers may be written otherwise.
        written = namespaces[node_text(hits[0].child_by_field_name("object"))]
        spec = self._new_spec(src.path, written)
        if spec is None and not is_dest:  # ``ns.f`` keeps working through the old module, which re-exports it
            self._unreached(src, hits[0], written)
            return
        for node in hits:
            self.draft.code.append((src.edit_for_node(node, self.target.name, "namespace_member"), "medium"))
        if not is_dest and not already:
            insert_after_imports(self.inserts, src, root,
                                 f"{self._kind('import', False, '')} {{ {self.target.name} }} from '{spec}';",
                                 reason="namespace_member")
