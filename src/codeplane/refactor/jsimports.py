"""Rewrite JS/TS relative module specifiers for a file move (spec §8.10, issue 9 item 4).

Covers ``import ... from``, ``export ... from``, ``require("...")`` and ``import("...")`` with a relative
string specifier. The specifier is resolved the way bundlers and ``tsc`` do (exact file, added extension,
``dir/index.*``, and a ``.js`` specifier naming a ``.ts`` source), then re-rendered from the importer's new
location in the same style: extensionless stays extensionless, directory imports stay directory imports.
Bare specifiers are rewritten only when a ``tsconfig`` path alias maps them to a moved file (``jsaliases``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Set
from dataclasses import dataclass
from typing import Any, Protocol

from codeplane.refactor.lexical import _parser, grammar_for
from codeplane.refactor.spans import SourceText, SpanEdit

JS_SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
#: A ``.js`` specifier may name a TypeScript source (NodeNext / ESM convention).
_JS_TO_TS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
_TS_TO_JS = {".ts": ".js", ".tsx": ".js", ".mts": ".mjs", ".cts": ".cjs"}


def ts_output_suffix(suffix: str) -> str | None:
    """The suffix a specifier writes for a TypeScript source of ``suffix`` (``.ts`` -> ``.js``), if it is one."""
    return _TS_TO_JS.get(suffix)


def is_js(path: str) -> bool:
    return path.endswith(JS_SUFFIXES)


def _suffix(path: str) -> str:
    if path.endswith(".d.ts"):
        return ".d.ts"
    return posixpath.splitext(path)[1]


def resolve_specifier(importer: str, spec: str, files: Set[str]) -> str | None:
    """The repository file a relative specifier in ``importer`` names, or ``None``."""
    if not spec.startswith("."):
        return None
    base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
    if base == ".." or base.startswith("../"):
        return None
    return resolve_path("" if base == "." else base, files)


def resolve_path(base: str, files: Set[str]) -> str | None:
    """The repository file a specifier's path (repository-relative, as written) names, or ``None``."""
    candidates = [base] if base else []
    candidates += [base + s for s in JS_SUFFIXES]
    stem, ext = posixpath.splitext(base)
    candidates += [stem + s for s in _JS_TO_TS.get(ext, ())]
    prefix = f"{base}/" if base else ""
    candidates += [f"{prefix}index{s}" for s in JS_SUFFIXES]
    for candidate in candidates:
        if candidate in files:
            return candidate
    return None


def render_specifier(importer_new: str, target_old: str, target_new: str, original: str) -> str:
    """A specifier from ``importer_new`` to ``target_new`` in the style of ``original``."""
    directory = posixpath.dirname(importer_new) or "."
    old_suffix = _suffix(target_old)
    new_suffix = _suffix(target_new)
    orig_suffix = _suffix(original)
    names_index = posixpath.basename(target_old).startswith("index.") and \
        not posixpath.basename(original).startswith("index")
    if names_index and posixpath.basename(target_new).startswith("index."):
        path = posixpath.dirname(target_new) or "."
    elif orig_suffix == old_suffix and orig_suffix:
        path = target_new
    elif orig_suffix in _JS_TO_TS and old_suffix in _JS_TO_TS[orig_suffix]:
        path = target_new[: -len(new_suffix)] + _TS_TO_JS.get(new_suffix, orig_suffix)
    else:
        path = target_new[: -len(new_suffix)] if new_suffix else target_new
    rel = posixpath.relpath(path, directory)
    return rel if rel.startswith("../") or rel == ".." else ("./" + rel if rel != "." else ".")


@dataclass(frozen=True)
class JsMove:
    files: frozenset[str]
    moved: dict[str, str]
    #: ``tsconfig`` path aliases (:mod:`jsaliases`): a specifier resolved through one is rewritten by it.
    aliases: AliasMap | None = None


class AliasMap(Protocol):
    def resolve(self, importer: str, spec: str, files: Set[str]) -> str | None: ...

    def render(self, importer: str, spec: str, old: str, new: str) -> str: ...


def _string_fragment(node: Any) -> Any | None:
    if node is None or node.type != "string":
        return None
    for child in node.named_children:
        if child.type == "string_fragment":
            return child
    return None


def _specifier_nodes(root: Any) -> list[Any]:
    """String-fragment nodes of every module specifier in the file."""
    out: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in ("import_statement", "export_statement"):
            fragment = _string_fragment(node.child_by_field_name("source"))
            if fragment is not None:
                out.append(fragment)
            continue
        if kind == "call_expression":
            func = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if func is not None and args is not None and (
                    func.type == "import" or (func.type == "identifier" and func.text == b"require")):
                first = args.named_children[0] if args.named_child_count else None
                fragment = _string_fragment(first)
                if fragment is not None:
                    out.append(fragment)
        stack.extend(node.children)
    return out


def js_move_edits(move: JsMove, src: SourceText) -> list[SpanEdit]:
    """Edits that keep ``src``'s relative specifiers naming the same files after the move (sorted)."""
    grammar = grammar_for(src.path)
    parser = _parser(grammar) if grammar else None
    if parser is None:
        return []
    root = parser.parse(src.data).root_node
    importer_new = move.moved.get(src.path, src.path)
    edits: list[SpanEdit] = []
    for fragment in _specifier_nodes(root):
        spec = bytes(fragment.text).decode("utf-8", errors="replace")
        target = resolve_specifier(src.path, spec, move.files)
        if target is None and move.aliases is not None:
            target = move.aliases.resolve(src.path, spec, move.files)
            if target is not None and target in move.moved:
                new_spec = move.aliases.render(src.path, spec, target, move.moved[target])
                if new_spec != spec:
                    edits.append(src.edit_for_node(fragment, new_spec, "import"))
            continue  # an alias names the same file from anywhere: a moved importer keeps it
        if target is None or (target not in move.moved and src.path not in move.moved):
            continue
        new_spec = render_specifier(importer_new, target, move.moved.get(target, target), spec)
        if new_spec != spec:
            edits.append(src.edit_for_node(fragment, new_spec, "import"))
    return sorted(edits)


def imported_files(files: Set[str], src: SourceText) -> set[str]:
    """Repository files ``src`` names with relative specifiers."""
    grammar = grammar_for(src.path)
    parser = _parser(grammar) if grammar else None
    if parser is None:
        return set()
    found: set[str] = set()
    for fragment in _specifier_nodes(parser.parse(src.data).root_node):
        target = resolve_specifier(src.path, bytes(fragment.text).decode("utf-8", errors="replace"), files)
        if target is not None:
            found.add(target)
    return found
