"""Rewrite JS/TS relative module specifiers for a file move (spec §8.10, issue 9 item 4).

Covers ``import ... from``, ``export ... from``, ``require("...")`` and ``import("...")`` with a relative
string specifier. The specifier is resolved the way bundlers and ``tsc`` do (exact file, added extension,
``dir/index.*``, and a ``.js`` specifier naming a ``.ts`` source), then re-rendered from the importer's new
location in the same style: extensionless stays extensionless, directory imports stay directory imports.
A bare or ``#`` specifier is resolved and rewritten by :mod:`jsspecifiers` (``tsconfig`` path aliases, then the
``package.json`` files), keeping its kind; one no specifier of its kind can keep pointing at the file is reported
(:class:`Unreached`), never turned into a relative path across packages.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from functools import cached_property
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


class Specifiers(Protocol):
    """How specifiers name files beyond a relative path (:class:`codeplane.refactor.jsspecifiers.JsSpecifiers`)."""

    def resolve(self, importer: str, spec: str, files: Set[str]) -> str | None: ...

    def render(self, importer: str, spec: str, old: str, new: str, files: Set[str]) -> str | None: ...

    def directory_of(self, importer: str, spec: str, files: Set[str]) -> str | None: ...


@dataclass(frozen=True)
class JsMove:
    files: frozenset[str]
    moved: dict[str, str]
    #: Aliases and package.json specifiers before the move, and after it (its package.json edits made).
    before: Specifiers | None = None
    after: Specifiers | None = None
    #: Package directories the move relocates (a directory imported by its package.json ``main``).
    directories: Mapping[str, str] = field(default_factory=dict)

    @cached_property
    def files_after(self) -> frozenset[str]:
        return frozenset(self.moved.get(p, p) for p in self.files)


@dataclass(frozen=True)
class Unreached:
    """A specifier no specifier of its kind can turn into one naming the moved file (a package's ``exports``
    has no entry for the new path): left as written, and the preview says so."""

    path: str
    line: int
    spec: str
    new: str


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


def js_move_edits(move: JsMove, src: SourceText, unreached: list[Unreached] | None = None) -> list[SpanEdit]:
    """Edits that keep ``src``'s specifiers naming the same files after the move (sorted); package specifiers
    that cannot are added to ``unreached``."""
    grammar = grammar_for(src.path)
    parser = _parser(grammar) if grammar else None
    if parser is None:
        return []
    root = parser.parse(src.data).root_node
    importer_new = move.moved.get(src.path, src.path)
    edits: list[SpanEdit] = []
    for fragment in _specifier_nodes(root):
        spec = bytes(fragment.text).decode("utf-8", errors="replace")
        target = move.before.resolve(src.path, spec, move.files) if move.before is not None else \
            resolve_specifier(src.path, spec, move.files)
        if target is None or (target not in move.moved and src.path not in move.moved):
            continue
        target_new = move.moved.get(target, target)
        if spec.startswith("."):
            new_spec: str | None = _directory_spec(move, src.path, spec, importer_new, target_new) or \
                render_specifier(importer_new, target, target_new, spec)
        else:
            after = move.after or move.before
            assert after is not None  # a bare specifier resolved through one
            files = move.files_after
            # An alias or a package name means the same file from anywhere, unless the move changes that.
            new_spec = spec if after.resolve(importer_new, spec, files) == target_new else \
                after.render(importer_new, spec, target, target_new, files)
        if new_spec is None:
            if unreached is not None:
                unreached.append(Unreached(src.path, fragment.start_point[0] + 1, spec, target_new))
        elif new_spec != spec:
            edits.append(src.edit_for_node(fragment, new_spec, "import"))
    return sorted(edits)


def _directory_spec(move: JsMove, importer: str, spec: str, importer_new: str, target_new: str) -> str | None:
    """A relative specifier naming a directory by its package.json entry (``'../lib'``), pointed at where the
    directory then is, if its entry still names the file there."""
    directory = move.before.directory_of(importer, spec, move.files) if move.before is not None else None
    after = move.after
    if directory is None or after is None:
        return None
    moved = move.directories.get(directory, directory)
    rel = posixpath.relpath(moved or ".", posixpath.dirname(importer_new) or ".")
    candidate = rel if rel.startswith("..") else "./" + rel if rel != "." else "."
    return candidate if after.resolve(importer_new, candidate, move.files_after) == target_new else None


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
