"""Every way a JS/TS specifier names a repository file in a move, as the index links it (s55).

A move resolves a specifier as :func:`codeplane.index.structural.modules.js_candidate_keys` does: a relative one
(a directory holding a ``package.json`` by its ``types``/``main`` before its ``index``), then a ``tsconfig`` path
alias (:mod:`jsaliases`), then the repository's ``package.json`` files (:mod:`codeplane.index.structural.jspackages`:
``#imports``, a workspace member or the package itself by name through ``"exports"`` or ``"types"``/``"main"``).

Rewriting keeps the mechanism the importer chose. An alias is re-rendered by :mod:`jsaliases`; a package
specifier becomes one of the same kind that names the new file (:meth:`JsSpecifiers.reach`: an ``"exports"`` key
or ``*`` pattern, an ``"imports"`` key, a subpath of a package without ``"exports"``), checked by resolving it
back. When none does, :meth:`JsSpecifiers.render` answers ``None``: a relative path across packages is not what
``"exports"`` allows, so the caller keeps the old module exporting the symbol or says it cannot.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping, Set
from dataclasses import dataclass, field, replace
from typing import Any

from codeplane.index.structural import jspackages, tspaths
from codeplane.refactor.jsaliases import TsAliases, config_paths
from codeplane.refactor.jsimports import (
    JS_SUFFIXES,
    render_specifier,
    resolve_path,
    resolve_specifier,
    ts_output_suffix,
)
from codeplane.refactor.spans import SourceText

_WORD = re.compile(r"[A-Za-z0-9_]+")


def manifest_paths(paths: Iterable[str]) -> list[str]:
    """The ``package.json``/``pnpm-workspace.yaml`` files among ``paths``."""
    return sorted(p for p in paths if posixpath.basename(p) in jspackages.MARKER_NAMES)


def resolution_paths(paths: Iterable[str]) -> list[str]:
    """Every file a move reads to resolve specifiers: project configs and package manifests."""
    listed = list(paths)
    return sorted({*config_paths(listed), *manifest_paths(listed)})


@dataclass(frozen=True)
class JsSpecifiers:
    """Resolves and re-renders specifiers for one state of the repository (before or after a file move)."""

    aliases: TsAliases = field(default_factory=TsAliases)
    packages: jspackages.Packages = field(default_factory=lambda: jspackages.Packages({}))
    #: By config directory, whether a config that states its module resolution states Node's own
    #: (``node16``/``nodenext``); the directories of packages whose ``.js``/``.ts`` files are ES modules.
    node_configs: Mapping[str, bool] = field(default_factory=dict)
    module_packages: frozenset[str] = frozenset()

    @classmethod
    def of(cls, sources: Iterable[SourceText]) -> JsSpecifiers:
        """From the texts of the ``resolution_paths`` (others are ignored)."""
        listed = list(sources)
        names = set(config_paths(s.path for s in listed))
        configs = [s for s in listed if s.path in names]
        texts = {s.path: s.text for s in configs}
        manifests = {s.path: s.text for s in listed if posixpath.basename(s.path) in jspackages.MARKER_NAMES}
        node = {posixpath.dirname(path): found for path in sorted(texts)
                if posixpath.basename(path) in tspaths.CONFIG_NAMES
                and (found := _resolves_like_node(path, texts)) is not None}
        modules = frozenset(posixpath.dirname(p) for p, text in manifests.items()
                            if posixpath.basename(p) == jspackages.PACKAGE_JSON and _module_type(text))
        return cls(TsAliases.of(configs), jspackages.Packages.from_texts(manifests), node, modules)

    def moved(self, manifests: Mapping[str, str]) -> JsSpecifiers:
        """The same project with the package.json texts ``manifests`` (after a move)."""
        return replace(self, packages=jspackages.Packages.from_texts(manifests))

    def node_esm(self, path: str) -> bool:
        """Whether ``path`` is an ES module compiled for Node's resolution, where a relative specifier needs its
        extension as Node loads it (``'./rates.js'`` for ``rates.ts``; TS2835 without)."""
        if path.endswith((".cts", ".cjs")):
            return False
        directory = posixpath.dirname(path)
        # The nearest config whose ``extends`` chain says decides; one whose chain says nothing is looked past.
        while directory not in self.node_configs:
            if not directory:
                return False
            directory = posixpath.dirname(directory)
        if not self.node_configs[directory]:
            return False
        scope = self.packages.scope(posixpath.dirname(path))
        return path.endswith((".mts", ".mjs")) or scope in self.module_packages

    def importer_words(self, moved: Iterable[str]) -> set[str]:
        """Words every importer of a moved file through a package spells (its name, its ``#imports`` keys, the
        directory a relative import of its ``main`` names): the files a move must read beyond its stems."""
        words: set[str] = set()
        declared = self.packages.declared()
        for path in moved:
            scope = self.packages.scope(posixpath.dirname(path))
            package = self.packages.by_dir.get(scope) if scope is not None else None
            if scope is None or package is None:
                continue
            if package.name and (scope in declared or package.exports is not None):
                words.add(_name_word(package.name))
            if isinstance(package.imports, dict):
                words |= {w for key in package.imports for w in _words(key)}
            if package.entries and scope:
                words |= _words(posixpath.basename(scope))
        return words

    # -- resolving ---------------------------------------------------------------------------------------
    def resolve(self, importer: str, spec: str, files: Set[str]) -> str | None:
        """The repository file ``spec`` in ``importer`` names, or ``None`` (another package, or nothing)."""
        if spec.startswith("."):
            found = resolve_specifier(importer, spec, files)
            entry = self._directory_entry(importer, spec, files)
            # TypeScript reads a directory's package.json before its index (a file of that name comes first).
            return entry if entry is not None and (found is None or _is_index(found)) else found
        if spec.startswith("/") or not spec:
            return None
        return self.aliases.resolve(importer, spec, files) or self._package_file(importer, spec, files)

    def _package_file(self, importer: str, spec: str, files: Set[str]) -> str | None:
        found = self.packages.resolve(importer, spec)
        for path in found.paths if found is not None else ():
            held = resolve_path(path, files)
            if held is not None:
                return held
        return None

    def _directory_entry(self, importer: str, spec: str, files: Set[str]) -> str | None:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        if joined == ".." or joined.startswith("../"):
            return None
        for path in self.packages.directory_entries("" if joined == "." else joined):
            held = resolve_path(path, files)
            if held is not None:
                return held
        return None

    # -- rendering ---------------------------------------------------------------------------------------
    def render(self, importer: str, spec: str, old: str, new: str, files: Set[str]) -> str | None:
        """``spec`` (in ``importer``, naming ``old``) rewritten to name ``new`` by the same mechanism; ``files``:
        the repository after the move. ``None``: a package specifier no specifier of its kind can turn into."""
        if spec.startswith("."):
            return render_specifier(importer, old, new, spec)
        if self.aliases.resolve(importer, spec, files | {old}) is not None:
            aliased = self.aliases.aliased(importer, spec, old, new)
            if aliased is not None or self._same_package(importer, new):
                return aliased or self.aliases.render(importer, spec, old, new)
            # A relative path into another package (``'../../a/src/tax'``) is no import a package makes of another:
            # through the package's name, if one names the file, else none.
            return self.reach(importer, spec, new, files)
        if self.resolve(importer, spec, files) == new:
            return spec
        return self.reach(importer, spec, new, files)

    def _same_package(self, importer: str, path: str) -> bool:
        return self.packages.scope(posixpath.dirname(importer)) == self.packages.scope(posixpath.dirname(path))

    def directory_of(self, importer: str, spec: str, files: Set[str]) -> str | None:
        """The directory a relative ``spec`` names by its ``package.json`` entry (``'../lib'``), if it does."""
        entry = self._directory_entry(importer, spec, files) if spec.startswith(".") else None
        if entry is None or self.resolve(importer, spec, files) != entry:
            return None
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        return "" if joined == "." else joined

    def reach(self, importer: str, spec: str, target: str, files: Set[str]) -> str | None:
        """A specifier of ``spec``'s kind (``#imports``, or a package by its name) naming ``target`` from
        ``importer``, checked by resolving it; ``None`` when none does."""
        return next((c for c in self._candidates(importer, spec, target) if self.resolve(importer, c, files) == target),
                    None)

    def _candidates(self, importer: str, spec: str, target: str) -> Iterator[str]:
        packages = self.packages
        forms = _forms(target, suffixed=spec.endswith(JS_SUFFIXES) or self.node_esm(importer))
        if spec.startswith("#"):
            scope = packages.scope(posixpath.dirname(importer))
            imports = packages.by_dir[scope].imports if scope is not None else None
            if scope is not None and isinstance(imports, dict):
                yield from _keys(imports, scope, forms)
            return
        owner = packages.scope(posixpath.dirname(target))
        package = packages.by_dir.get(owner) if owner is not None else None
        if owner is None or package is None or not package.name or packages.owner(importer, package.name) != owner:
            return
        exports = package.exports
        if exports is None:
            yield package.name
            yield from (f"{package.name}/{_relative(form, owner)}" for form in forms)
        elif isinstance(exports, dict) and exports and all(str(k).startswith(".") for k in exports):
            yield from (package.name + key[1:] for key in _keys(exports, owner, forms))
        else:
            yield package.name


def _resolves_like_node(path: str, texts: Mapping[str, str]) -> bool | None:
    """Whether config ``path`` resolves modules as Node does (``node16``/``nodenext``), through its ``extends``
    chain (``module`` decides when no config of it states ``moduleResolution``); ``None``: none says."""
    stated = tspaths.compiler_option(path, texts, "moduleResolution") or tspaths.compiler_option(path, texts, "module")
    return str(stated).lower() in ("node16", "nodenext", "node18", "node20") if stated else None


def _module_type(text: str) -> bool:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("type") == "module"


def _name_word(name: str) -> str:
    """The word every import of package ``name`` spells that fewest other files do: the longest of its own name
    (``kit`` of ``@acme/ui-kit``), else its scope's (``acme`` of ``@acme/a``)."""
    scope, _, bare = name.rpartition("/")
    own: list[str] = sorted(_WORD.findall(bare), key=lambda w: (-len(w), w))
    if own and len(own[0]) > 1:
        return own[0]
    outer: list[str] = sorted(_WORD.findall(scope), key=lambda w: (-len(w), w))
    return outer[0] if outer else (own[0] if own else name)


def _words(text: str) -> set[str]:
    found = _WORD.findall(text)
    return {w for w in found if len(w) > 1} or set(found)


def _is_index(path: str) -> bool:
    return posixpath.basename(path).startswith("index.")


def _forms(target: str, *, suffixed: bool) -> list[str]:
    """How a specifier may write ``target`` where a pattern or a subpath spells the file: as a TypeScript source
    is written for Node (``.js``) when specifiers there carry an extension, else without one; then as it is."""
    stem, suffix = posixpath.splitext(target)
    if target.endswith(".d.ts"):
        stem, suffix = target[:-5], ".d.ts"
    output = ts_output_suffix(suffix)
    first = (stem + output if output else target) if suffixed else stem
    return list(dict.fromkeys([first, target, stem]))


def _relative(path: str, directory: str) -> str:
    return posixpath.relpath(path, directory) if directory else path


def _keys(mapping: Mapping[str, Any], owner: str, forms: list[str]) -> Iterator[str]:
    """Keys of an ``exports``/``imports`` map that may name one of ``forms`` (the package in ``owner``): exact keys
    in the file's order, then each ``*`` pattern with the middle that maps it there."""
    yield from (key for key in mapping if "*" not in key)
    for key, value in mapping.items():
        prefix, star, suffix = key.partition("*")
        if not star:
            continue
        for target in jspackages.flatten(value):
            if "*" not in target or not target.startswith("./"):
                continue
            head, _, tail = posixpath.normpath(posixpath.join(owner, target) if owner else target).partition("*")
            for form in forms:
                if form.startswith(head) and form.endswith(tail) and len(form) > len(head) + len(tail):
                    yield prefix + form[len(head):len(form) - len(tail)] + suffix
