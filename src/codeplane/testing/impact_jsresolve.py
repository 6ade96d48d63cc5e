"""JS/TS imports that Node or the test runner resolve into the repository, though the index leaves them
unresolved (QA s53): the reverse walk then took them for other libraries' packages and answered ``complete``
without the tests that failed.

The index links relative specifiers, tsconfig ``paths`` and what the repository's ``package.json`` files make of a
specifier (``index/structural/jspackages.py``: ``#imports``, self-references and workspace members through
``"exports"``/``"main"``, a directory's ``"main"``) to module files. What is left to this module, at selection time:

- those same specifiers where they lead to a file that is no module (a JSON file) or where the index took no
  candidate, every target counting (a condition the index passed over may be the one the runner loads);
- a package of the repository that no workspace declares (a fixture named ``react``): followed, wider, never
  narrower, but naming no file of it proves nothing;
- Jest ``modulePaths`` and ``moduleDirectories`` (``require('k')`` for ``src/k.js``);
- a relative import of a JSON file (no module key).

A file resolves as Node does (the exact file, then each extension, then ``package.json`` ``"main"``, then
``index``). Each resolved import is an edge of a reverse walk from the changed files over the index's resolved
imports plus these edges; a test it reaches that the module walk had not selected is selected ``high`` (an exact
chain). What only the runner decides is selected ``low``: every test of a project runs after its
``setupFiles``/``setupFilesAfterEnv`` (Vitest ``setupFiles``) and whatever those import, a manual mock in
``__mocks__/`` replaces the module beside it for the tests that reach that module, and a snapshot belongs to its
test file. A bare specifier that names the repository's own package, a ``#`` subpath or a ``modulePaths``
directory yet resolves to no file makes the answer ``partial``, with that reason: never a narrower ``complete``.

Everything here but the walk is a function of the index epoch and the projects' configs, so it is kept
(``_Edges``, per checkout) and, for an epoch that only edited files (no file added, deleted or renamed, no
marker such as a ``package.json`` written, the same configs), carried over with only the edited files' import
rows read again, as the import graph is (``impact_graph.py``): a selection after an edit reads those rows, not
every JS import of the repository. Any other epoch is read whole, so a kept answer is never stale.
"""

from __future__ import annotations

import json
import posixpath
import re
import sqlite3
import threading
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from codeplane.index.structural import jspackages
from codeplane.index.structural.contexts.discovery import is_marker
from codeplane.testing.impact_graph import MAX_CARRIED_CHANGES, current_epoch

_JS_EXTS = (".js", ".ts", ".tsx", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_RESOLVE_EXTS = (*_JS_EXTS, ".json")
_JS_LANGUAGES = "('javascript', 'typescript', 'tsx')"
_MAX_READ = 200_000
_CHUNK = 500
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

    def key(self) -> tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        return self.directory, self.config, tuple(self.setup), tuple(self.module_paths), tuple(self.module_dirs)


class Resolver:
    """Node's and the runners' resolution of the specifiers the index leaves unresolved, over one index epoch:
    ``files`` are the index's paths (every language), ``packages`` its ``package.json`` facts."""

    def __init__(self, files: Iterable[str], packages: jspackages.Packages) -> None:
        self.files = set(files)
        self.dirs = {a for p in self.files for a in _ancestors(_parent(p))}
        self.packages = packages
        #: Packages whose imports must resolve: workspace roots and members, and the repository's own root.
        self.declared = packages.declared() | {""}

    def exists(self, path: str) -> bool:
        return path in self.files

    def file(self, path: str) -> str | None:
        """The file ``require(path)`` loads (repository-relative, normalised), or None."""
        path = posixpath.normpath(path)
        if path.startswith("../") or path in ("..", "/") or path.startswith("/"):
            return None
        path = "" if path == "." else path
        if path and self.exists(path):
            return path
        for ext in _RESOLVE_EXTS:
            if self.exists(path + ext):
                return path + ext
        package = self.packages.by_dir.get(path) if path in self.dirs else None
        if package is not None and package.main:  # Node reads ``main``, never ``types``
            found = self.file(posixpath.join(path, package.main))
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
            scoped = self.packages.resolve(importer, specifier)
            if scoped is None:
                return [], None
            edges = self._edges(scoped, specifier)
            config = _join(scoped.owner, "package.json")
            return edges, None if edges else f"'{specifier}', which matches no file of {config} imports"
        name, _ = jspackages.split(specifier)
        found_in = self.packages.resolve(importer, specifier)
        if found_in is None and name in self.packages.named:
            # A package no workspace declares (a fixture named ``react``) may well not be what loads: its edges
            # are followed (wider, never narrower), but naming no file of it proves nothing.
            found_in = self.packages.resolve(importer, specifier, self.packages.named[name][0])
        if found_in is not None:
            edges = self._edges(found_in, specifier)
            if edges or found_in.owner not in self.declared:
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

    def _edges(self, found: jspackages.Candidates, specifier: str) -> list[Edge]:
        """Every candidate that is a file: whichever condition the runner picks, its file is among them."""
        files = dict.fromkeys(f for p in found.paths if (f := self.file(p)) is not None)
        return [Edge(f, specifier, found.how) for f in files]


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


#: An importing file's edges: (target file, None for the index's own link or how this module resolved it).
_Out = tuple[tuple[str, Edge | None], ...]
_Memo = dict[tuple[str, str], tuple[tuple[Edge, ...], str | None]]


@dataclass(frozen=True)
class _Edges:
    """The edges of one index epoch under one set of project configs (see the module docstring)."""

    #: (epoch id, its publication time): an index built again restarts its epoch ids.
    stamp: tuple[int, int] | None
    projects: tuple[tuple[object, ...], ...]
    resolver: Resolver
    out: dict[str, _Out]
    #: importing file → why its specifiers may lead into the repository though they resolve to no file.
    unknown: dict[str, tuple[str, ...]]
    importers: dict[str, _Out]
    #: How many edges this module adds to the index's: none, and only runner-made edges need a walk.
    extra: int
    #: (importer directory, specifier) → its resolution: the same for every epoch with the same files.
    memo: _Memo


_KEPT: dict[str, _Edges] = {}
_KEPT_MAX = 4  # checkouts whose edges are kept (a server serves one; tests open many)
_LOCK = threading.Lock()


def _edges_for(conn: sqlite3.Connection, root: Path, projects: Sequence[Project]) -> _Edges:
    """This epoch's edges: kept, carried from the previous epoch's, or read whole (inside the caller's read)."""
    epoch = current_epoch(conn)
    row = conn.execute("SELECT published_ms FROM epochs WHERE id = ?", (epoch,)).fetchone() if epoch else None
    stamp = (epoch, int(row[0])) if epoch is not None and row is not None else None
    configs = tuple(p.key() for p in projects)
    with _LOCK:
        previous = _KEPT.get(str(root))
    if previous is not None and previous.stamp == stamp and stamp is not None and previous.projects == configs:
        return previous
    found = None
    if previous is not None and previous.stamp is not None and stamp is not None and previous.projects == configs \
            and stamp[0] > previous.stamp[0]:
        found = _carried(conn, stamp, previous, projects)
    if found is None:
        files = [str(p) for (p,) in conn.execute("SELECT path FROM st_file")]
        row = conn.execute("SELECT value FROM st_state WHERE key = 'js_packages'").fetchone()
        packages = jspackages.Packages.decode(row[0]) if row is not None else jspackages.Packages({})
        resolver = Resolver(files, packages)
        memo: _Memo = {}
        out, unknown = _rows(conn, resolver, projects, memo)
        importers: dict[str, list[tuple[str, Edge | None]]] = {}
        for importer, edges in out.items():
            for target, via in edges:
                importers.setdefault(target, []).append((importer, via))
        extra = sum(1 for edges in out.values() for _, via in edges if via is not None)
        found = _Edges(stamp, configs, resolver, out, unknown,
                       {t: tuple(sorted(e, key=_order)) for t, e in importers.items()}, extra, memo)
    if stamp is not None:
        with _LOCK:
            _KEPT.pop(str(root), None)
            _KEPT[str(root)] = found
            while len(_KEPT) > _KEPT_MAX:
                _KEPT.pop(next(iter(_KEPT)))
    return found


def _carried(conn: sqlite3.Connection, stamp: tuple[int, int], previous: _Edges,
             projects: Sequence[Project]) -> _Edges | None:
    """``previous`` with the edited files' rows read again, when every epoch since only edited files that decide
    nothing for others (no marker); else None."""
    assert previous.stamp is not None
    since = previous.stamp[0]
    count, moved = conn.execute("SELECT count(*), total(added + deleted + renamed) FROM epochs "
                                "WHERE id > ? AND id <= ?", (since, stamp[0])).fetchone()
    then = conn.execute("SELECT published_ms FROM epochs WHERE id = ?", (since,)).fetchone()
    if int(count) != stamp[0] - since or moved or then is None or int(then[0]) != previous.stamp[1]:
        return None  # a file came or went, or the epochs since are not all on record
    written = sorted(str(p) for (p,) in conn.execute("SELECT path FROM st_file WHERE epoch > ?", (since,)))
    if len(written) > MAX_CARRIED_CHANGES or any(is_marker(p) for p in written):
        return None
    out, unknown = dict(previous.out), dict(previous.unknown)
    fresh: dict[str, _Out] = {}
    fresh_unknown: dict[str, tuple[str, ...]] = {}
    for start in range(0, len(written), _CHUNK):
        chunk = written[start:start + _CHUNK]
        got, lost = _rows(conn, previous.resolver, projects, previous.memo,
                          where=f"AND f.path IN ({','.join('?' * len(chunk))})", params=chunk)
        fresh.update(got)
        fresh_unknown.update(lost)
    importers = dict(previous.importers)
    extra = previous.extra
    for path in written:
        old, new = previous.out.get(path, ()), fresh.get(path, ())
        extra += sum(1 for _, via in new if via is not None) - sum(1 for _, via in old if via is not None)
        for target in {t for t, _ in (*old, *new)}:
            kept = [e for e in importers.get(target, ()) if e[0] != path]
            kept += [(path, via) for t, via in new if t == target]
            if kept:
                importers[target] = tuple(sorted(kept, key=_order))
            else:
                importers.pop(target, None)
        if new:
            out[path] = new
        else:
            out.pop(path, None)
        if path in fresh_unknown:
            unknown[path] = fresh_unknown[path]
        else:
            unknown.pop(path, None)
    return _Edges(stamp, previous.projects, previous.resolver, out, unknown, importers, extra, previous.memo)


def _rows(conn: sqlite3.Connection, resolver: Resolver, projects: Sequence[Project], memo: _Memo, *,
          where: str = "", params: Sequence[str] = ()) -> tuple[dict[str, _Out], dict[str, tuple[str, ...]]]:
    """The JS import rows ``where`` selects as edges: the index's links, and this module's for the rest."""
    out: dict[str, dict[tuple[str, Edge | None], None]] = {}
    unknown: dict[str, dict[str, None]] = {}
    for importer, specifier, target in conn.execute(
            "SELECT f.path, i.source_literal, rf.path FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
            "LEFT JOIN st_file rf ON rf.file_id = i.resolved_file_id "
            f"WHERE f.language IN {_JS_LANGUAGES} {where} ORDER BY f.path, i.start_line", list(params)):
        if target is not None:
            out.setdefault(str(importer), {})[(str(target), None)] = None
            continue
        if specifier is None:
            continue
        # One answer per directory and specifier: a repository imports ``react`` from thousands of files.
        memo_key = (_parent(str(importer)), str(specifier))
        if memo_key not in memo:
            edges, why = resolver.resolve(str(importer), str(specifier), projects)
            memo[memo_key] = (tuple(edges), why)
        edges_found, why = memo[memo_key]
        for edge in edges_found:
            out.setdefault(str(importer), {})[(edge.target, edge)] = None
        if why:
            unknown.setdefault(str(importer), {})[why] = None
    return {p: tuple(e) for p, e in out.items()}, {p: tuple(u) for p, u in unknown.items()}


def _order(entry: tuple[str, Edge | None]) -> tuple[str, str, str]:
    importer, via = entry
    return (importer, via.specifier, via.how) if via is not None else (importer, "", "")


def reach(conn: sqlite3.Connection, root: Path, project_dirs: Sequence[str], changed: Sequence[str],
          test_files: Sequence[str]) -> Reach:
    """What the changed files reach through the edges this module adds (see the module docstring)."""
    projects = projects_of(root, project_dirs)
    edges = _edges_for(conn, root, projects)
    resolver = edges.resolver
    out = Reach(unknown=[f"{path} imports {why}" for path, reasons in sorted(edges.unknown.items())
                         for why in reasons])
    importers = edges.importers
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
    if not edges.extra and not setup and not any("/__mocks__/" in s for s in seeds) and not out.tests:
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
                if path in changed and not path.endswith(_JS_EXTS):
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
