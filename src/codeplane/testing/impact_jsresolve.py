"""JS/TS imports that Node or the test runner resolve into the repository, though the index leaves them
unresolved (QA s53): the reverse walk then took them for other libraries' packages and answered ``complete``
without the tests that failed.

The index (``modules.js_import_key``) resolves relative specifiers to module files and tsconfig ``paths``. At
selection time, from the repository's ``package.json`` files and the Jest/Vitest configs, this module resolves
the rest of what a test run loads as Node and the runners do:

- ``package.json`` ``"imports"`` (``require('#k')``), from the nearest ``package.json`` above the importer;
- a package of the repository by its name: a package importing itself, or an npm/yarn/pnpm workspace member
  (``require('@acme/a')``), through its ``"exports"`` (subpaths, ``*`` patterns, conditions: every target counts)
  or else ``"main"`` and the subpath as a file;
- Jest ``modulePaths`` and ``moduleDirectories`` (``require('k')`` for ``src/k.js``);
- a relative import of a directory whose ``package.json`` has ``"main"``, or of a JSON file (no module key).

A file resolves as Node does (the exact file, then each extension, then ``package.json`` ``"main"``, then
``index``). Each resolved import is an edge of a reverse walk from the changed files over the index's resolved
imports plus these edges; a test it reaches that the module walk had not selected is selected ``high`` (an exact
chain). What only the runner decides is selected ``low``: every test of a project runs after its
``setupFiles``/``setupFilesAfterEnv`` (Vitest ``setupFiles``) and whatever those import, a manual mock in
``__mocks__/`` replaces the module beside it for the tests that reach that module, and a snapshot belongs to its
test file. A bare specifier that names the repository's own package, a ``#`` subpath or a ``modulePaths``
directory yet resolves to no file makes the answer ``partial``, with that reason: never a narrower ``complete``.
"""

from __future__ import annotations

import json
import posixpath
import re
import sqlite3
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_JS_EXTS = (".js", ".ts", ".tsx", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_RESOLVE_EXTS = (*_JS_EXTS, ".json")
_CONDITIONS = ("node", "require", "import", "module", "default", "browser", "types")
_MAX_READ = 200_000
_SETUP_KEYS = re.compile(r"\b(setupFiles|setupFilesAfterEnv)\s*:\s*(\[[^\]]*\]|'[^']*'|\"[^\"]*\")")
_LIST_KEYS = re.compile(r"\b(modulePaths|moduleDirectories)\s*:\s*(\[[^\]]*\])")
_STRING = re.compile(r"""'([^']*)'|"([^"]*)"|`([^`$]*)`""")
_CONFIG_NAMES = tuple(f"{stem}{suffix}" for stem in ("jest.config", "vitest.config", "vite.config")
                      for suffix in (".js", ".ts", ".mjs", ".cjs", ".mts", ".cts", ".json"))


@dataclass(frozen=True)
class Edge:
    target: str
    specifier: str
    how: str


@dataclass
class Project:
    """One Jest/Vitest project: its directory, setup files, and module directories (``modulePaths`` …)."""

    directory: str
    config: str = ""
    setup: list[str] = field(default_factory=list)
    module_paths: list[str] = field(default_factory=list)
    module_dirs: list[str] = field(default_factory=list)


class Resolver:
    """Node's and the runners' resolution of the specifiers the index leaves unresolved, over one checkout."""

    def __init__(self, root: Path, files: Iterable[str]) -> None:
        self.root = root
        self.files = set(files)
        self._packages: dict[str, dict[str, object] | None] = {}
        #: package name → its directory: any package.json of the repository with a name.
        self.named: dict[str, str] = {}
        #: The directories of declared workspace members and of packages holding workspaces (or the root's).
        self.declared: set[str] = {""}
        patterns: list[re.Pattern[str]] = []
        for directory in sorted({a for p in self.files for a in _ancestors(_parent(p))},
                                key=lambda d: (d.count("/"), d)):
            data = self.package(directory)
            if data is None:
                continue
            name = data.get("name")
            if isinstance(name, str) and name:
                self.named.setdefault(name, directory)
            globs = _workspaces(data.get("workspaces")) + _pnpm_workspaces(root / directory)
            if globs:
                self.declared.add(directory)
            patterns += [_glob(_join(directory, g)) for g in globs if not g.startswith("!")]
        self.declared |= {d for d in self.named.values() if any(p.fullmatch(d) for p in patterns)}

    def package(self, directory: str) -> dict[str, object] | None:
        if directory not in self._packages:
            text = _read(self.root / directory / "package.json" if directory else self.root / "package.json")
            try:
                data = json.loads(text) if text else None
            except ValueError:
                data = None
            self._packages[directory] = data if isinstance(data, dict) else None
        return self._packages[directory]

    def exists(self, path: str) -> bool:
        return path in self.files or (not path.endswith(_JS_EXTS) and (self.root / path).is_file())

    def file(self, path: str) -> str | None:
        """The file ``require(path)`` loads (repository-relative, normalised), or None."""
        path = posixpath.normpath(path)
        if path.startswith("../") or path in ("..", "/") or path.startswith("/"):
            return None
        path = "" if path == "." else path
        if path and self.exists(path) and not (self.root / path).is_dir():
            return path
        for ext in _RESOLVE_EXTS:
            if self.exists(path + ext):
                return path + ext
        data = self.package(path) if (self.root / path).is_dir() else None
        main = data.get("main") if data else None
        if isinstance(main, str) and main:
            found = self.file(posixpath.join(path, main))
            if found is not None and found != path:
                return found
        for ext in _RESOLVE_EXTS:
            candidate = posixpath.join(path, "index" + ext) if path else "index" + ext
            if self.exists(candidate):
                return candidate
        return None

    def resolve(self, importer: str, specifier: str, projects: Sequence[Project]) -> tuple[list[Edge], str | None]:
        """(edges into the repository, why the specifier may lead into it though none was found)."""
        if specifier.startswith(("./", "../")) or specifier in (".", ".."):
            found = self.file(posixpath.join(_parent(importer), specifier))
            return ([Edge(found, specifier, "a directory's package.json main" if not found.endswith(".json")
                          else "a JSON file")] if found else []), None
        if specifier.startswith("#"):
            owner = next((d for d in _ancestors(_parent(importer)) if self.package(d) is not None), None)
            data = self.package(owner) if owner is not None else None
            imports = data.get("imports") if data else None
            if owner is None or not isinstance(imports, dict):
                return [], None
            targets = _subpath(imports, specifier)
            edges = [Edge(f, specifier, f"{_join(owner, 'package.json')} imports") for t in targets
                     if t.startswith("./") and (f := self.file(_join(owner, t)))]
            config = _join(owner, "package.json")
            return edges, None if edges else f"'{specifier}', which matches no file of {config} imports"
        name, subpath = _split(specifier)
        directory = self.named.get(name)
        if directory is not None:
            edges = self._package_edges(directory, subpath, specifier)
            if edges or directory not in self.declared:
                # A package no workspace declares (a fixture named ``react``) may well not be what loads: its
                # edges are followed (wider, never narrower), but naming no file of it proves nothing.
                return edges, None
            return [], f"'{specifier}', which names the repository's package {name} but no file of it"
        for project in projects:
            if not _inside(importer, project.directory):
                continue
            for base in project.module_paths:
                found = self.file(_join(base, specifier))
                if found:
                    return [Edge(found, specifier, f"{project.config} modulePaths")], None
            for entry in project.module_dirs:
                for ancestor in _ancestors(_parent(importer)):
                    found = self.file(_join(_join(ancestor, entry), specifier))
                    if found:
                        return [Edge(found, specifier, f"{project.config} moduleDirectories")], None
        return [], None

    def _package_edges(self, directory: str, subpath: str, specifier: str) -> list[Edge]:
        data = self.package(directory) or {}
        how = f"{_join(directory, 'package.json')} exports"
        exports = data.get("exports")
        if exports is not None:
            if isinstance(exports, dict) and exports and all(k.startswith(".") for k in exports):
                targets = _subpath(exports, subpath)
            else:
                targets = _targets(exports) if subpath == "." else []
            return [Edge(f, specifier, how) for t in targets
                    if t.startswith("./") and (f := self.file(_join(directory, t)))]
        main = data.get("main")
        if subpath == ".":
            found = self.file(_join(directory, main)) if isinstance(main, str) and main else self.file(directory)
            return [Edge(found, specifier, f"{_join(directory, 'package.json')} main")] if found else []
        found = self.file(_join(directory, subpath))
        return [Edge(found, specifier, f"the package in {directory or '.'}")] if found else []


def projects_of(root: Path, directories: Iterable[str]) -> list[Project]:
    """Setup files and module directories of the Jest/Vitest projects in ``directories`` ('.': the root)."""
    found: list[Project] = []
    for directory in sorted(set(directories)):
        base = "" if directory == "." else directory
        project = Project(directory)
        package = root / base / "package.json"
        try:
            data = json.loads(_read(package) or "{}")
        except ValueError:
            data = {}
        jest = data.get("jest") if isinstance(data, dict) else None
        if isinstance(jest, dict):
            project.config = _join(base, "package.json")
            _from_mapping(project, base, jest)
        for name in _CONFIG_NAMES:
            text = _read(root / base / name)
            if not text:
                continue
            project.config = project.config or _join(base, name)
            for key, value in (*_SETUP_KEYS.findall(text), *_LIST_KEYS.findall(text)):
                items = [a or b or c for a, b, c in _STRING.findall(value)]
                _from_mapping(project, base, {key: items})
        found.append(project)
    return found


def _from_mapping(project: Project, base: str, config: Mapping[str, object]) -> None:
    def rooted(entry: str) -> str:
        entry = entry.replace("<rootDir>", ".")
        return posixpath.normpath(_join(base, entry.removeprefix("./") if entry != "." else ""))

    for key in ("setupFiles", "setupFilesAfterEnv"):
        for entry in _strings(config.get(key)):
            project.setup.append(rooted(entry))
    for entry in _strings(config.get("modulePaths")):
        project.module_paths.append(rooted(entry))
    for entry in _strings(config.get("moduleDirectories")):
        if entry != "node_modules":
            project.module_dirs.append(entry.replace("<rootDir>/", ""))


@dataclass
class Reach:
    """Tests the walk over resolved and runner-made edges selects, and what it could not resolve."""

    #: test file → (confidence, reason)
    tests: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: ``path imports 'spec'``: specifiers that may lead into the repository yet resolve to nothing.
    unknown: list[str] = field(default_factory=list)
    #: Changed files (without a module key) that the walk found loaded: no longer unknown.
    loaded: set[str] = field(default_factory=set)


def reach(conn: sqlite3.Connection, root: Path, project_dirs: Sequence[str], changed: Sequence[str],
          test_files: Sequence[str]) -> Reach:
    """What the changed files reach through the edges this module adds (see the module docstring)."""
    rows = conn.execute(
        "SELECT f.path, i.source_literal, rf.path FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
        "LEFT JOIN st_file rf ON rf.file_id = i.resolved_file_id "
        "WHERE f.language IN ('javascript', 'typescript', 'tsx') ORDER BY f.path, i.start_line").fetchall()
    files = [str(p) for (p,) in conn.execute(
        "SELECT path FROM st_file WHERE language IN ('javascript', 'typescript', 'tsx')")]
    resolver = Resolver(root, files)
    projects = projects_of(root, project_dirs)
    importers: dict[str, list[tuple[str, Edge | None]]] = {}
    out = Reach()
    extra = False
    memo: dict[tuple[str, str], tuple[list[Edge], str | None]] = {}
    for importer, specifier, target in rows:
        if target is not None:
            importers.setdefault(str(target), []).append((str(importer), None))
            continue
        if specifier is None:
            continue
        # One answer per directory and specifier: a repository imports ``react`` from thousands of files.
        memo_key = (_parent(str(importer)), str(specifier))
        if memo_key not in memo:
            memo[memo_key] = resolver.resolve(str(importer), str(specifier), projects)
        edges, unknown = memo[memo_key]
        for edge in edges:
            extra = True
            importers.setdefault(edge.target, []).append((str(importer), edge))
        if unknown:
            out.unknown.append(f"{importer} imports {unknown}")
    tests = set(test_files)
    seeds: dict[str, tuple[str, str]] = {}
    for path in changed:
        seeds[path] = ("high", "")
    for path in changed:
        name = path.rsplit("/", 1)[-1]
        if "/__snapshots__/" in f"/{path}" and name.endswith(".snap"):
            test = _join(_parent(_parent(path)), name.removesuffix(".snap"))
            if test in tests:
                out.tests[test] = ("high", f"its snapshot {path} changed")
                out.loaded.add(path)
        if "/__mocks__/" in f"/{path}":
            mocked = resolver.file(_join(_parent(_parent(path)), name.rsplit(".", 1)[0]))
            if mocked is not None:
                seeds.setdefault(mocked, ("low", f"{path} is the manual mock of {mocked} (jest.mock)"))
            if mocked is None:  # a node module's mock: any test of the project may use it
                owner = _owner(path, projects)
                for test in sorted(t for t in tests if owner is not None and _inside(t, owner.directory)):
                    out.tests.setdefault(test, ("low", f"{path} mocks a package for its project's tests"))
    setup = {s: p for p in projects for s in p.setup}
    if not extra and not setup and not any("/__mocks__/" in s for s in seeds) and not out.tests:
        return out
    seen: dict[str, tuple[str, str]] = {}
    queue = deque(sorted(seeds.items()))
    while queue:
        path, (confidence, reason) = queue.popleft()
        known = seen.get(path)
        if known is not None and (known[0] == "high" or known[0] == confidence):
            continue
        seen[path] = (confidence, reason)
        if path in setup and (project := setup[path]) is not None:
            why = reason or (f"{path} changed" if path in seeds else "it imports the change")
            for test in sorted(t for t in tests if _inside(t, project.directory)):
                _select(out, test, "low", f"runs after {path} ({project.config} setup files; {why})")
        if path in tests and reason:
            _select(out, path, confidence, reason)
        for importer, via in importers.get(path, ()):
            if via is not None:
                why = f"{importer} imports '{via.specifier}' ({via.how}: {via.target})"
                if path in changed and path not in resolver.files:
                    out.loaded.add(path)
            else:
                why = reason
            queue.append((importer, (confidence, why)))
    return out


def _select(out: Reach, test: str, confidence: str, reason: str) -> None:
    known = out.tests.get(test)
    if known is None or (known[0] == "low" and confidence == "high"):
        out.tests[test] = (confidence, reason)


def _owner(path: str, projects: Sequence[Project]) -> Project | None:
    return max((p for p in projects if _inside(path, p.directory)), key=lambda p: len(p.directory), default=None)


def _subpath(mapping: Mapping[str, object], key: str) -> list[str]:
    """Targets of ``key`` in an ``exports``/``imports`` map (exact key first, then the longest ``*`` pattern)."""
    if key in mapping:
        return _targets(mapping[key])
    best: tuple[int, list[str]] | None = None
    for pattern, value in mapping.items():
        prefix, star, suffix = pattern.partition("*")
        if star and key.startswith(prefix) and key.endswith(suffix) and len(key) >= len(prefix) + len(suffix):
            middle = key[len(prefix):len(key) - len(suffix)]
            if best is None or len(prefix) > best[0]:
                best = (len(prefix), [t.replace("*", middle) for t in _targets(value)])
    return best[1] if best else []


def _targets(value: object) -> list[str]:
    """Every file a target names under any condition (a change to any of them may reach the importer)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in _targets(v)]
    if isinstance(value, dict):
        ordered = sorted(value, key=lambda k: (_CONDITIONS.index(k) if k in _CONDITIONS else len(_CONDITIONS), k))
        return list(dict.fromkeys(t for k in ordered for t in _targets(value[k])))
    return []


def _split(specifier: str) -> tuple[str, str]:
    """``@scope/pkg/sub`` → (``@scope/pkg``, ``./sub``); ``pkg`` → (``pkg``, ``.``)."""
    parts = specifier.split("/")
    count = 2 if specifier.startswith("@") and len(parts) > 1 else 1
    rest = "/".join(parts[count:])
    return "/".join(parts[:count]), f"./{rest}" if rest else "."


def _workspaces(value: object) -> list[str]:
    """npm/yarn ``"workspaces"``: a list of globs, or yarn's ``{"packages": [...]}``."""
    if isinstance(value, dict):
        value = value.get("packages")
    return _strings(value) if isinstance(value, list) else []


def _pnpm_workspaces(directory: Path) -> list[str]:
    """The ``packages:`` globs of a ``pnpm-workspace.yaml`` (its list items, quoted or not)."""
    text = _read(directory / "pnpm-workspace.yaml")
    return [m.group(1) for m in re.finditer(r"""^\s*-\s*['"]?([^'"#\n]+?)['"]?\s*$""", text, re.MULTILINE)]


def _glob(pattern: str) -> re.Pattern[str]:
    """A workspace glob (``packages/*``, ``apps/**``) as a regular expression over directories."""
    parts = re.split(r"(\*\*|\*)", pattern.rstrip("/"))
    return re.compile("".join(".*" if p == "**" else "[^/]*" if p == "*" else re.escape(p) for p in parts))


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def _ancestors(directory: str) -> list[str]:
    out = [directory]
    while directory:
        directory = directory.rpartition("/")[0]
        out.append(directory)
    return out


def _join(base: str, relative: str) -> str:
    return posixpath.normpath(posixpath.join(base, relative)) if base else posixpath.normpath(relative)


def _inside(path: str, directory: str) -> bool:
    return directory in (".", "") or path.startswith(f"{directory}/")


def _read(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return handle.read(_MAX_READ).decode("utf-8", "replace")
    except OSError:
        return ""
