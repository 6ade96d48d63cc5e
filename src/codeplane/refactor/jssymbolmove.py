"""Plan moving one JS/TS top-level declaration to another module (issue 20): named and default exports.

The declaration's statement (with ``export``/``export default`` and the comments directly above) goes to
the end of the destination module (created when missing). Names it uses that the old module imports are
imported the same way in the destination (relative specifiers re-rendered); names the old module declares
are imported from it (``export`` is added to a declaration that lacked it) — refused with 4009 when the
old module still needs the moved symbol, since the two modules would then import each other.

Importers: ``import { f } from './old'`` (aliases, ``type`` imports, default imports for a default export)
and ``export { f } from './old'`` get the new specifier, or lose ``f`` and gain a statement for it when
they import more; ``ns.f`` through ``import * as ns`` becomes ``f`` with an added import (``medium``);
``export * from './old'`` gains ``export { f } from './new'`` (``medium``). ``require()`` and dynamic
``import()`` of the old module are listed as warnings: their property access is not rewritten.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.refactor.assemble import Draft
from codeplane.refactor.facts import Def
from codeplane.refactor.jsimports import JS_SUFFIXES, is_js, render_specifier, resolve_specifier
from codeplane.refactor.lexical import _parser, grammar_for
from codeplane.refactor.pyimporters import Insertions, delete_list_item, merge_same_start
from codeplane.refactor.spans import SourceText, SpanEdit

Reader = Callable[[Iterable[str]], tuple[dict[str, SourceText], dict[str, str]]]
_DECLARATIONS = ("function_declaration", "generator_function_declaration", "class_declaration",
                 "abstract_class_declaration", "lexical_declaration", "variable_declaration",
                 "interface_declaration", "type_alias_declaration", "enum_declaration")
_NAME_NODES = ("identifier", "type_identifier", "shorthand_property_identifier")


def _text(node: Any) -> str:
    return bytes(node.text).decode("utf-8", errors="replace")


def parse_js(src: SourceText) -> Any | None:
    grammar = grammar_for(src.path)
    parser = _parser(grammar) if grammar else None
    return None if parser is None else parser.parse(src.data).root_node


def _declared_names(decl: Any) -> list[str]:
    if decl.type in ("lexical_declaration", "variable_declaration"):
        out = []
        for child in decl.named_children:
            name = child.child_by_field_name("name") if child.type == "variable_declarator" else None
            if name is not None and name.type == "identifier":
                out.append(_text(name))
        return out
    name = decl.child_by_field_name("name")
    return [_text(name)] if name is not None else []


@dataclass
class _Statement:
    node: Any
    declaration: Any | None
    exported: bool
    default: bool


def _statement(node: Any) -> _Statement | None:
    if node.type == "export_statement":
        decl = node.child_by_field_name("declaration")
        default = any(c.type == "default" for c in node.children)
        if decl is None and default:
            value = node.child_by_field_name("value")
            decl = value if value is not None and value.type in ("class", "function_expression") else None
        return _Statement(node, decl, True, default) if decl is not None else None
    if node.type in _DECLARATIONS:
        return _Statement(node, node, False, False)
    return None


@dataclass(frozen=True)
class _ImportBinding:
    """A module-level name bound by an import statement: ``kind`` is named/default/namespace."""

    local: str
    kind: str
    imported: str
    specifier: str
    type_only: bool


def _imports(root: Any) -> dict[str, _ImportBinding]:
    found: dict[str, _ImportBinding] = {}
    for stmt in root.named_children:
        if stmt.type != "import_statement":
            continue
        source = stmt.child_by_field_name("source")
        spec = _fragment(source)
        if spec is None:
            continue
        type_only = any(c.type == "type" for c in stmt.children)
        for clause in stmt.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    found[_text(part)] = _ImportBinding(_text(part), "default", "default", spec, type_only)
                elif part.type == "namespace_import":
                    ident = next((c for c in part.named_children if c.type == "identifier"), None)
                    if ident is not None:
                        found[_text(ident)] = _ImportBinding(_text(ident), "namespace", "*", spec, type_only)
                elif part.type == "named_imports":
                    for item in part.named_children:
                        if item.type != "import_specifier":
                            continue
                        name = item.child_by_field_name("name")
                        alias = item.child_by_field_name("alias")
                        if name is None:
                            continue
                        local = _text(alias) if alias is not None else _text(name)
                        found[local] = _ImportBinding(local, "named", _text(name), spec,
                                                      type_only or any(c.type == "type" for c in item.children))
    return found


def _fragment(node: Any) -> str | None:
    if node is None or node.type != "string":
        return None
    frag = next((c for c in node.named_children if c.type == "string_fragment"), None)
    return _text(frag) if frag is not None else None


def _fragment_node(node: Any) -> Any | None:
    if node is None or node.type != "string":
        return None
    return next((c for c in node.named_children if c.type == "string_fragment"), None)


def _walk(root: Any) -> Iterable[Any]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if node.type not in ("string", "comment", "template_string"):
            stack.extend(reversed(node.children))


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
        self._check_destination(dest_root, stmt)
        old_imports = _imports(old_root)
        old_decls = self._declarations(old_root)
        used = self._free_names(stmt)
        remaining = self._uses_outside(old_root, stmt)
        old_keeps = remaining > 0 or self.keep_reexport
        copied = sorted({old_imports[n] for n in used if n in old_imports}, key=lambda b: (b.specifier, b.local))
        from_old = sorted(n for n in used if n in old_decls and n not in old_imports)
        if from_old and old_keeps:
            raise CodePlaneError(
                ErrorCode.REFACTOR_CIRCULAR_IMPORT,
                f"moving {self.target.name} would make {old} and {self.dest} import each other: it needs "
                f"{', '.join(from_old)} from {old}, which still needs it ({remaining} use(s) remain"
                f"{', keep_reexport' if self.keep_reexport else ''}). Move those first",
                details={"symbol": self.target.qualified_name, "reason": "circular import",
                         "needs_from_old_module": from_old})
        for name in from_old:
            node, exported = old_decls[name]
            if not exported:  # the destination imports it from here: it has to be exported
                line, col = old_src.node_span(node)[:2]
                self.draft.code.append((SpanEdit(old, line, col, line, col, "", "export ", "export_for_move"),
                                        "high"))
        self._old_edits(old_src, old_root, stmt, remaining=remaining)
        creates = self._dest_edits(old_src, stmt, copied, from_old=from_old, dest_src=dest_src, dest_root=dest_root,
                                   old_keeps=old_keeps)
        for path in paths:
            src = sources.get(path)
            if path == old or src is None:
                continue
            root = dest_root if path == self.dest else parse_js(src)
            if root is not None:
                self._importer_edits(src, root, stmt)
        self.draft.code += [(e, "medium" if e.reason in ("star_reexport", "namespace_member") else "high")
                            for e in self.inserts.edits()]
        self.draft.code = merge_same_start(self.draft.code)
        return self.draft, sources, hashes, creates

    # -- the moved statement ------------------------------------------------------------------------------
    def _find(self, root: Any) -> _Statement:
        line = self.target.name_line
        for node in root.named_children:
            if not node.start_point[0] + 1 <= line <= node.end_point[0] + 1:
                continue
            stmt = _statement(node)
            if stmt is not None and stmt.declaration is not None and \
                    self.target.name in (_declared_names(stmt.declaration) or [self.target.name]):
                names = _declared_names(stmt.declaration)
                if len(names) > 1:
                    raise CodePlaneError(ErrorCode.REFACTOR_UNSUPPORTED,
                                         f"{self.target.name} is declared together with "
                                         f"{', '.join(n for n in names if n != self.target.name)}; split the "
                                         "declaration first", details={"reason": "shared declaration"})
                return stmt
            break
        raise CodePlaneError(ErrorCode.REFACTOR_UNSUPPORTED, f"{self.target.name} is not a top-level declaration",
                             details={"symbol": self.target.qualified_name, "reason": "not a top-level statement"})

    def _declarations(self, root: Any) -> dict[str, tuple[Any, bool]]:
        """Module-level declared name -> (its statement, whether it is exported)."""
        out: dict[str, tuple[Any, bool]] = {}
        exported: set[str] = set()
        for node in root.named_children:
            stmt = _statement(node)
            if stmt is not None and stmt.declaration is not None:
                for name in _declared_names(stmt.declaration):
                    out[name] = (node, stmt.exported)
            if node.type == "export_statement" and node.child_by_field_name("source") is None:
                for clause in node.named_children:
                    if clause.type == "export_clause":
                        exported |= {_text(s.child_by_field_name("name")) for s in clause.named_children
                                     if s.type == "export_specifier" and s.child_by_field_name("name") is not None}
        # ``const Z = 1; export { Z };``: exported already, no ``export`` keyword to add.
        return {name: (node, done or name in exported) for name, (node, done) in out.items()}

    def _free_names(self, stmt: _Statement) -> set[str]:
        names = {_text(n) for n in _walk(stmt.node) if n.type in _NAME_NODES}
        return names - {self.target.name}

    def _uses_outside(self, root: Any, stmt: _Statement) -> int:
        count = 0
        first, last = stmt.node.start_point[0], stmt.node.end_point[0]
        for node in _walk(root):
            if node.type in ("import_statement",):
                continue
            if node.type in _NAME_NODES and _text(node) == self.target.name and \
                    not first <= node.start_point[0] <= last and not _in_export_clause(node):
                count += 1
        return count

    def _check_destination(self, dest_root: Any | None, stmt: _Statement) -> None:
        if dest_root is None:
            return
        for node in dest_root.named_children:
            other = _statement(node)
            if other is not None and other.declaration is not None and \
                    self.target.name in _declared_names(other.declaration):
                self._collision(node, "exists in destination")
            if stmt.default and other is not None and other.default:
                self._collision(node, "destination already has a default export")
        imported = _imports(dest_root).get(self.target.name)
        if imported is not None and resolve_specifier(self.dest, imported.specifier, self.files) != self.target.path:
            self._collision(None, "exists in destination")

    def _collision(self, node: Any | None, reason: str) -> None:
        line = node.start_point[0] + 1 if node is not None else 0
        raise CodePlaneError(ErrorCode.REFACTOR_COLLISION, f"{self.dest} already binds {self.target.name} "
                             f"(line {line}): {reason}", details={"path": self.dest, "line": line,
                                                                  "name": self.target.name, "reason": reason})

    # -- old module -------------------------------------------------------------------------------------
    def _old_edits(self, src: SourceText, root: Any, stmt: _Statement, *, remaining: int) -> None:
        self.draft.code.append((_delete_statement_lines(src, stmt.node), "high"))
        spec = self._spec(src.path, root)
        lines = []
        if remaining:
            lines.append(self._import_line(stmt, spec))
        if self.keep_reexport:
            lines.append(f"export {{ {'default' if stmt.default else self.target.name} }} from '{spec}';")
        for line in lines:
            _insert_after_imports(self.inserts, src, root, line)

    def _import_line(self, stmt: _Statement, spec: str) -> str:
        if stmt.default:
            return f"import {self.target.name} from '{spec}';"
        return f"import {{ {self.target.name} }} from '{spec}';"

    def _spec(self, importer: str, root: Any | None) -> str:
        """Specifier from ``importer`` to the destination, in the file's style (extension or not)."""
        return render_specifier(importer, self.target.path, self.dest, self._style(importer, root))

    def _style(self, path: str, root: Any | None) -> str:
        """A stand-in specifier carrying the file's convention: with the target's extension when the file's
        relative specifiers have one (ESM ``.mjs``/NodeNext), extensionless otherwise."""
        suffix = posixpath.splitext(self.target.path)[1]
        specs = [s for s in (_fragment(n.child_by_field_name("source")) for n in (root.named_children if root else [])
                             if n.type in ("import_statement", "export_statement")) if s and s.startswith(".")]
        if specs:
            return "./x" + suffix if any(s.endswith(JS_SUFFIXES) for s in specs) else "./x"
        return "./x" + suffix if path.endswith((".mjs", ".cjs", ".mts", ".cts")) else "./x"

    # -- destination -------------------------------------------------------------------------------------
    def _dest_edits(self, old_src: SourceText, stmt: _Statement, copied: list[_ImportBinding], *,
                    from_old: list[str], dest_src: SourceText | None, dest_root: Any | None,
                    old_keeps: bool) -> list[str]:
        lines = [self._copy_import(b) for b in copied]
        if from_old:
            spec = render_specifier(self.dest, self.target.path, self.target.path,
                                    self._style(self.dest, dest_root if dest_root is not None else parse_js(old_src)))
            lines.append(f"import {{ {', '.join(from_old)} }} from '{spec}';")
        lines = sorted(dict.fromkeys(lines))
        body = _statement_text(old_src, stmt.node)
        if not stmt.exported and old_keeps:
            body = "export " + body if not body.startswith(("/*", "//")) else _export_after_comments(body)
        if dest_src is None or dest_root is None:
            header = "\n".join(lines)
            content = (header + "\n\n" if header else "") + body + "\n"
            self.draft.code.append((SpanEdit(self.dest, 1, 0, 1, 0, "", content, "new_module"), "high"))
            return [self.dest]
        existing = {self._copy_import(b) for b in _imports(dest_root).values()}
        for line in lines:
            if line not in existing:
                _insert_after_imports(self.inserts, dest_src, dest_root, line)
        last = max((n for n in range(1, len(dest_src.lines) + 1) if dest_src.line_text(n).strip()), default=0)
        if last == 0:
            self.draft.code.append((SpanEdit(self.dest, 1, 0, 1, 0, "", body + "\n", "moved_definition"), "high"))
        else:
            end = len(dest_src.line_text(last))
            self.draft.code.append((SpanEdit(self.dest, last, end, last, end, "", "\n\n" + body, "moved_definition"),
                                    "high"))
        return []

    def _copy_import(self, binding: _ImportBinding) -> str:
        spec = binding.specifier
        if spec.startswith("."):
            target = resolve_specifier(self.target.path, spec, self.files)
            if target is not None:
                spec = render_specifier(self.dest, target, target, spec)
            else:
                absolute = posixpath.normpath(posixpath.join(posixpath.dirname(self.target.path), spec))
                rel = posixpath.relpath(absolute, posixpath.dirname(self.dest) or ".")
                spec = rel if rel.startswith("..") else "./" + rel
        kind = "import type" if binding.type_only else "import"
        if binding.kind == "default":
            return f"{kind} {binding.local} from '{spec}';"
        if binding.kind == "namespace":
            return f"{kind} * as {binding.local} from '{spec}';"
        alias = f" as {binding.local}" if binding.local != binding.imported else ""
        return f"{kind} {{ {binding.imported}{alias} }} from '{spec}';"

    # -- importers -----------------------------------------------------------------------------------------
    def _importer_edits(self, src: SourceText, root: Any, moved: _Statement) -> None:
        is_dest = src.path == self.dest
        imported_name = "default" if moved.default else self.target.name
        namespaces: set[str] = set()
        for stmt in _walk(root):
            if stmt.type not in ("import_statement", "export_statement"):
                continue
            source = stmt.child_by_field_name("source")
            spec = _fragment(source)
            if spec is None or resolve_specifier(src.path, spec, self.files) != self.target.path:
                continue
            new_spec = render_specifier(src.path, self.target.path, self.dest, spec)
            type_only = any(c.type == "type" for c in stmt.children)
            if stmt.type == "export_statement":
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
                        namespaces.add(_text(ident))
            hits = [i for i in items if _text(i.child_by_field_name("name")) == imported_name]
            default_hit = next((p for p in parts if p.type == "identifier"), None) if moved.default else None
            taken = [*hits, *([default_hit] if default_hit is not None else [])]
            if not taken:
                continue
            others = len(items) - len(hits) + sum(1 for p in parts if p.type == "namespace_import") + \
                (1 if any(p.type == "identifier" for p in parts) and default_hit is None else 0)
            if others == 0:
                if is_dest:
                    self.draft.code.append((_delete_statement_lines(src, stmt), "high"))
                else:
                    frag = _fragment_node(source)
                    self.draft.code.append((src.edit_for_node(frag, new_spec, "import"), "high"))
                continue
            kind = "import type" if type_only else "import"
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
                    self.inserts.after(src, stmt, f"{kind} {{ {_text(item)} }} from '{new_spec}';")
            if default_hit is not None:
                nxt = default_hit.next_sibling
                end_line, end_col = src.node_span(nxt.next_sibling if nxt is not None and nxt.type == "," and
                                                  nxt.next_sibling is not None else default_hit)[:2] \
                    if nxt is not None and nxt.type == "," else src.node_span(default_hit)[2:]
                line, col = src.node_span(default_hit)[:2]
                self.draft.code.append((SpanEdit(src.path, line, col, end_line, end_col,
                                                 src.slice(line, col, end_line, end_col), "", "import"), "high"))
                if not is_dest:
                    self.inserts.after(src, stmt, f"{kind} {_text(default_hit)} from '{new_spec}';")
        if namespaces:
            self._namespace_members(src, root, namespaces, is_dest)

    def _reexport(self, src: SourceText, stmt: Any, imported_name: str, spec: str, new_spec: str) -> None:
        clause = next((c for c in stmt.named_children if c.type == "export_clause"), None)
        if clause is None:  # ``export * from './old'``
            if not self.keep_reexport and imported_name != "default":
                self.inserts.after(src, stmt, f"export {{ {self.target.name} }} from '{new_spec}';", "star_reexport")
                self.draft.warnings.append(f"{src.path} re-exports everything from {spec}; "
                                           f"export {{ {self.target.name} }} from '{new_spec}' is added (medium)")
            return
        items = [s for s in clause.named_children if s.type == "export_specifier"]
        hits = [s for s in items if _text(s.child_by_field_name("name")) == imported_name]
        if not hits:
            return
        if len(hits) == len(items):
            frag = _fragment_node(stmt.child_by_field_name("source"))
            self.draft.code.append((src.edit_for_node(frag, new_spec, "import"), "high"))
            return
        for item in hits:
            self.draft.code.append((delete_list_item(src, items, item, "import"), "high"))
            self.inserts.after(src, stmt, f"export {{ {_text(item)} }} from '{new_spec}';")

    def _namespace_members(self, src: SourceText, root: Any, namespaces: set[str], is_dest: bool) -> None:
        # The bare name must not mean something else there: a declaration of it, or an import of it from a
        # module other than the old and new ones (an import of the moved symbol itself is fine).
        imported = _imports(root).get(self.target.name)
        other_import = imported is not None and resolve_specifier(src.path, imported.specifier, self.files) \
            not in (self.target.path, self.dest)
        declared = any(self.target.name in _declared_names(st.declaration) for st in
                       (_statement(n) for n in root.named_children) if st is not None and st.declaration is not None)
        conflict = other_import or declared
        already = imported is not None and not other_import
        hits = []
        for node in _walk(root):
            if node.type != "member_expression":
                continue
            obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
            if obj is not None and prop is not None and obj.type == "identifier" and _text(obj) in namespaces \
                    and _text(prop) == self.target.name:
                hits.append(node)
        if not hits:
            return
        if conflict and not is_dest:
            self.draft.warnings.append(f"{src.path}: {len(hits)} use(s) of <namespace>.{self.target.name} not "
                                       f"rewritten: {self.target.name} is already a name there")
            return
        for node in hits:
            self.draft.code.append((src.edit_for_node(node, self.target.name, "namespace_member"), "medium"))
        if not is_dest and not already:
            _insert_after_imports(self.inserts, src, root, f"import {{ {self.target.name} }} from "
                                  f"'{self._spec(src.path, root)}';",
                                  reason="namespace_member")


def _in_export_clause(node: Any) -> bool:
    parent = node.parent
    return parent is not None and parent.type == "export_specifier"


def _statement_text(src: SourceText, node: Any) -> str:
    start = _first_line(src, node)
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


def _export_after_comments(body: str) -> str:
    lines = body.split("\n")
    for index, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped and not stripped.startswith(("/*", "*", "//")):
            lines[index] = "export " + line
            break
    return "\n".join(lines)


def _delete_statement_lines(src: SourceText, node: Any) -> SpanEdit:
    start = _first_line(src, node)
    end = node.end_point[0] + 1
    nxt = end + 1
    total = len(src.lines)
    while nxt <= total and not src.line_text(nxt).strip():
        nxt += 1
    if nxt <= total:
        return SpanEdit(src.path, start, 0, nxt, 0, src.slice(start, 0, nxt, 0), "", "moved_definition")
    prev = start - 1
    while prev >= 1 and not src.line_text(prev).strip():
        prev -= 1
    end_col = len(src.line_text(end))
    if prev >= 1:
        col = len(src.line_text(prev))
        return SpanEdit(src.path, prev, col, end, end_col, src.slice(prev, col, end, end_col), "", "moved_definition")
    return SpanEdit(src.path, start, 0, end, end_col, src.slice(start, 0, end, end_col), "", "moved_definition")


def _insert_after_imports(inserts: Insertions, src: SourceText, root: Any, line: str,
                          reason: str = "import") -> None:
    last = None
    for node in root.named_children:
        if node.type == "import_statement":
            last = node
        elif node.type != "comment":
            break
    if last is not None:
        inserts.after(src, last, line, reason)
    else:
        inserts.add(src.path, 1, 0, line + "\n", reason)
        if src.line_text(1).strip():
            inserts.trailers[(src.path, 1, 0)] = "\n"


def plan_js_move(target: Def, dest: str, files: Mapping[str, object], read: Reader, candidates: set[str], *,
                 keep_reexport: bool, dest_exists: bool) -> tuple[Draft, dict[str, SourceText], dict[str, str],
                                                                  list[str]]:
    """The JS/TS symbol move's draft, sources, hashes and the files it creates."""
    planner = JsSymbolMove(target, dest, frozenset(p for p in files if is_js(p)) | {dest}, read, candidates,
                           keep_reexport, dest_exists)
    return planner.plan()

