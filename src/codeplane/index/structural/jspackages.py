"""What the repository's ``package.json`` files make of a JS/TS specifier: the files Node and TypeScript load
for it, so that linking resolves these imports into links exactly like relative ones, and test selection
(``testing/impact_jsresolve.py``) follows the same edges.

- ``#k`` (``package.json`` ``"imports"``): the package scope of the importer (the nearest ``package.json`` at or
  above it) maps it; targets that are themselves packages (``"#dep": "lodash"``) stay external;
- a package by its name: the importer's own package scope when its name matches and it has ``"exports"`` (Node's
  self-reference), else a member of an npm/yarn/pnpm workspace (``"workspaces"`` globs, ``pnpm-workspace.yaml``)
  whose root holds the importer, which the package manager links into ``node_modules``. A name two members of
  one workspace share resolves to nothing (never a guess). A ``package.json`` that no workspace declares (a test
  fixture named ``react``) is not what an import of that name loads, so it is not followed here;
- through ``"exports"`` (a subpath, the longest ``*`` pattern, nested conditions and fallback arrays, in the
  file's order; ``null`` excludes) or, without ``"exports"``, ``"types"``/``"typings"`` then ``"main"`` then the
  directory's ``index`` for the package itself and the subpath as a file for the rest;
- a relative import of a directory holding a ``package.json`` with ``"types"``/``"main"`` (before its
  ``index``).

The answer is a list of candidate paths in the order the runtime tries them (extension as the ``package.json``
writes it); the linker takes the first one a file holds. Only what linking needs is kept (``Package``), so a
``package.json`` edit that changes none of it (a version bump) relinks nothing. Pure: no IO here.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

PACKAGE_JSON = "package.json"
PNPM_WORKSPACE = "pnpm-workspace.yaml"
MARKER_NAMES = (PACKAGE_JSON, PNPM_WORKSPACE)
_PNPM_ITEM = re.compile(r"""^\s*-\s*['"]?([^'"#\n]+?)['"]?\s*$""", re.MULTILINE)


@dataclass(frozen=True)
class Package:
    """What resolution reads of one ``package.json`` (JSON values as written)."""

    name: str = ""
    exports: Any = None
    imports: Any = None
    #: ``types`` (or ``typings``): what TypeScript reads before ``main`` for a package without ``exports``.
    types: str = ""
    main: str = ""
    #: Workspace globs (``"workspaces"``, yarn's ``{"packages": [...]}``, ``pnpm-workspace.yaml``).
    workspaces: tuple[str, ...] = ()

    @property
    def entries(self) -> tuple[str, ...]:
        """The entries of a package without ``exports``, in TypeScript's order."""
        return tuple(e for e in (self.types, self.main) if e)


@dataclass(frozen=True)
class Candidates:
    """Where a specifier may lead: ``paths`` in the order tried, ``how`` the ``package.json`` field naming them."""

    paths: tuple[str, ...]
    how: str
    #: The directory of the package the specifier names (its scope for ``#`` imports).
    owner: str


class Packages:
    """Every ``package.json`` of the repository that matters to resolution, by directory (``""``: the root)."""

    def __init__(self, packages: Mapping[str, Package]) -> None:
        self.by_dir = dict(sorted(packages.items()))
        #: name → the directories of every package.json with that name (declared or not), shallowest first.
        self.named: dict[str, list[str]] = {}
        for directory in sorted(self.by_dir, key=lambda d: (d.count("/"), d)):
            if self.by_dir[directory].name:
                self.named.setdefault(self.by_dir[directory].name, []).append(directory)
        #: workspace root → {member name: member directory}, names two members share left out.
        self.members: dict[str, dict[str, str]] = {}
        for root, package in self.by_dir.items():
            patterns = [_glob(_join(root, g)) for g in package.workspaces if not g.startswith("!")]
            if not patterns:
                continue
            found: dict[str, list[str]] = {}
            for directory, member in self.by_dir.items():
                if member.name and directory != root and any(p.fullmatch(directory) for p in patterns):
                    found.setdefault(member.name, []).append(directory)
            self.members[root] = {n: d[0] for n, d in sorted(found.items()) if len(d) == 1}

    @classmethod
    def from_texts(cls, texts: Mapping[str, str]) -> Packages:
        """From ``package.json``/``pnpm-workspace.yaml`` paths and texts; unreadable ones are left out."""
        parsed: dict[str, Package] = {}
        pnpm: dict[str, tuple[str, ...]] = {}
        for path, text in sorted(texts.items()):
            directory, _, name = path.rpartition("/")
            if name == PNPM_WORKSPACE:
                pnpm[directory] = tuple(m.group(1) for m in _PNPM_ITEM.finditer(text))
            elif name == PACKAGE_JSON:
                package = parse(text)
                if package is not None:
                    parsed[directory] = package
        for directory, globs in pnpm.items():
            package = parsed.get(directory, Package())
            parsed[directory] = replace(package, workspaces=tuple(dict.fromkeys((*package.workspaces, *globs))))
        return cls(parsed)

    def encode(self) -> str:
        return json.dumps({d: [p.name, p.exports, p.imports, p.types, p.main, list(p.workspaces)]
                           for d, p in self.by_dir.items()}, sort_keys=True)

    @classmethod
    def decode(cls, text: str) -> Packages:
        data = json.loads(text)
        return cls({d: Package(n, e, i, t, m, tuple(w)) for d, (n, e, i, t, m, w) in data.items()})

    def scope(self, directory: str) -> str | None:
        """The package scope of files in ``directory``: the nearest directory at or above with a package.json."""
        while True:
            if directory in self.by_dir:
                return directory
            if not directory:
                return None
            directory = directory.rpartition("/")[0]

    def declared(self) -> set[str]:
        """Workspace roots and members: packages a package manager links, so an import of theirs must resolve."""
        return {*self.members, *(d for m in self.members.values() for d in m.values())}

    def owner(self, importer: str, name: str) -> str | None:
        """The directory of the package ``name`` means in ``importer``: itself, or its workspace's member."""
        scope = self.scope(importer.rpartition("/")[0])
        if scope is not None and self.by_dir[scope].name == name and self.by_dir[scope].exports is not None:
            return scope
        for root in sorted(self.members, key=lambda r: (-r.count("/"), r)):  # the innermost workspace first
            if _inside(importer, root) and name in self.members[root]:
                return self.members[root][name]
        return None

    def resolve(self, importer: str, specifier: str, directory: str | None = None) -> Candidates | None:
        """Candidates for a bare or ``#`` specifier (see the module docstring); None when it is not the
        repository's. ``directory``: the package to read instead of the one the name means (testing's wider
        walk of undeclared packages)."""
        if specifier.startswith("#"):
            scope = self.scope(importer.rpartition("/")[0])
            imports = self.by_dir[scope].imports if scope is not None else None
            if scope is None or not isinstance(imports, dict):
                return None
            paths = _inside_paths(scope, subpath_targets(imports, specifier), exact=True)
            return Candidates(paths, f"{_join(scope, PACKAGE_JSON)} imports", scope)
        name, subpath = split(specifier)
        owner = directory if directory is not None else self.owner(importer, name)
        if owner is None:
            return None
        return self.entry(owner, subpath)

    def entry(self, directory: str, subpath: str) -> Candidates:
        """Candidates for ``subpath`` (``.``, ``./x``) of the package in ``directory``."""
        package = self.by_dir.get(directory, Package())
        exports = package.exports
        if exports is not None:
            if isinstance(exports, dict) and exports and all(str(k).startswith(".") for k in exports):
                targets = subpath_targets(exports, subpath)
            else:
                targets = flatten(exports) if subpath == "." else []
            how = f"{_join(directory, PACKAGE_JSON)} exports"
            return Candidates(_inside_paths(directory, targets, exact=True), how, directory)
        if subpath == ".":
            paths = (*_inside_paths(directory, package.entries), directory)
            return Candidates(tuple(dict.fromkeys(paths)), f"{_join(directory, PACKAGE_JSON)} main", directory)
        return Candidates(_inside_paths(directory, [subpath]), f"the package in {directory or '.'}", directory)

    def directory_entries(self, path: str) -> tuple[str, ...]:
        """``types``/``main`` of the package.json in directory ``path`` (a relative import of it), as paths."""
        package = self.by_dir.get(path)
        return _inside_paths(path, package.entries) if package is not None else ()


def parse(text: str) -> Package | None:
    """The resolution fields of one ``package.json``; None when it is not a JSON object."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None

    def field(key: str) -> str:
        value = data.get(key)
        return value if isinstance(value, str) else ""

    workspaces = data.get("workspaces")
    if isinstance(workspaces, dict):
        workspaces = workspaces.get("packages")
    return Package(field("name"), data.get("exports"),
                   data.get("imports") if isinstance(data.get("imports"), dict) else None,
                   field("types") or field("typings"), field("main"), tuple(_strings(workspaces)))


def subpath_targets(mapping: Mapping[str, Any], key: str) -> list[str]:
    """Targets of ``key`` in an ``exports``/``imports`` map: the exact key, else the ``*`` pattern with the
    longest prefix (Node's order); ``null`` excludes."""
    if key in mapping:
        return flatten(mapping[key])
    best: tuple[int, int, list[str]] | None = None
    for pattern, value in mapping.items():
        prefix, star, suffix = pattern.partition("*")
        if star and key.startswith(prefix) and key.endswith(suffix) and len(key) >= len(prefix) + len(suffix):
            middle = key[len(prefix):len(key) - len(suffix)]
            rank = (len(prefix), len(pattern))
            if best is None or rank > best[:2]:
                best = (*rank, [t.replace("*", middle) for t in flatten(value)])
    return best[2] if best else []


def flatten(value: Any) -> list[str]:
    """Every target of an ``exports`` value in the order a resolver tries them (conditions in the file's order,
    fallback arrays in order): whichever condition a tool picks, its file is among them."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return list(dict.fromkeys(t for v in value for t in flatten(v)))
    if isinstance(value, dict):
        return list(dict.fromkeys(t for v in value.values() for t in flatten(v)))
    return []


def split(specifier: str) -> tuple[str, str]:
    """``@scope/pkg/sub`` → (``@scope/pkg``, ``./sub``); ``pkg`` → (``pkg``, ``.``)."""
    parts = specifier.split("/")
    count = 2 if specifier.startswith("@") and len(parts) > 1 else 1
    rest = "/".join(parts[count:])
    return "/".join(parts[:count]), f"./{rest}" if rest else "."


def _inside_paths(directory: str, targets: Iterable[str], *, exact: bool = False) -> tuple[str, ...]:
    """Targets relative to ``directory`` as repository paths, none escaping it. ``exact``: ``exports``/``imports``
    targets, which must start with ``./`` (anything else names another package or is invalid); ``main`` need not."""
    out: list[str] = []
    for target in targets:
        if (exact and not target.startswith("./")) or target.startswith(("/", "../")) or "://" in target:
            continue
        joined = _join(directory, target)
        if joined != ".." and not joined.startswith("../") and (joined == directory or _inside(joined, directory)):
            out.append("" if joined == "." else joined)
    return tuple(dict.fromkeys(out))


def _glob(pattern: str) -> re.Pattern[str]:
    """A workspace glob (``packages/*``, ``apps/**``) as a regular expression over directories."""
    parts = re.split(r"(\*\*|\*)", pattern.rstrip("/"))
    return re.compile("".join(".*" if p == "**" else "[^/]*" if p == "*" else re.escape(p) for p in parts))


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _join(base: str, relative: str) -> str:
    joined = posixpath.normpath(posixpath.join(base, relative)) if base else posixpath.normpath(relative)
    return "" if joined == "." else joined


def _inside(path: str, directory: str) -> bool:
    return not directory or path.startswith(f"{directory}/")
