"""``map_repo`` (§23.7): a repository's shape computed from the index tables only (never the filesystem).

Sections: ``structure`` (directory tree to a depth, as a pre-order list), ``languages``,
``entry_points`` (module-level ``main`` functions, conventional entry files, ``[project.scripts]`` and
``package.json`` ``bin``/``main``),
``dependencies`` (external modules from unresolved, non-relative ImportFacts), ``test_layout``,
``public_api`` (ExportEntries, scoped by a path) and ``contexts``. Every list is capped and counted; only
``structure`` paginates.
"""

from __future__ import annotations

import heapq
import json
import posixpath
import re
import sqlite3
import tomllib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from codeplane.index.languages import DATA_FAMILIES
from codeplane.index.structural import modules

MAX_ENTRY_POINTS = 50
MAX_DEPENDENCIES = 100
MAX_TEST_FILES = 100
MAX_PUBLIC_API = 150
#: Most export rows read when no module declares any (every package ``__init__``'s names).
_MAX_PUBLIC_API_ROWS = 5000
_ENTRY_FILES = frozenset({"__main__.py", "manage.py", "main.py", "cli.py", "wsgi.py", "asgi.py", "main.go",
                          "main.rs", "Program.cs", "index.js", "index.ts", "server.js", "server.ts"})
_TEST = re.compile(
    r"(^|/)(tests?|__tests__|spec|testing)/|(^|/)test_[^/]*\.py$|_test\.(py|go|rb|exs)$|\.(test|spec)\.[cm]?[jt]sx?$"
    r"|(Test|Tests|IT)\.(java|kt|cs)$|_spec\.rb$|Test\.php$|(^|/)src/test/")

#: A file table row as the map reads it: line count, language, family, parse status.
FileRow = tuple[int | None, str | None, str | None, str]


@dataclass(frozen=True, slots=True)
class TreeNode:
    path: str
    name: str
    is_dir: bool
    depth: int
    file_count: int | None
    line_count: int | None


@dataclass(frozen=True, slots=True)
class LanguageShare:
    language: str
    family: str | None
    file_count: int
    percentage: float


@dataclass(frozen=True, slots=True)
class EntryPoint:
    path: str
    kind: str
    name: str
    qualified_name: str | None
    evidence: str
    #: False for a declared file the index does not hold (package.json's ``main`` pointing at a build's output,
    #: ignored or not built yet).
    indexed: bool = True


@dataclass(frozen=True, slots=True)
class Dependencies:
    external_modules: tuple[tuple[str, int], ...]
    import_count: int
    truncated: bool
    #: External modules imported, listed or not.
    external_total: int = 0


@dataclass(frozen=True, slots=True)
class TestLayout:
    test_files: tuple[str, ...]
    test_count: int
    test_dirs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PublicApiEntry:
    path: str
    name: str
    def_uid: str | None
    certainty: str
    evidence: str


@dataclass(frozen=True, slots=True)
class PublicApi:
    entries: tuple[PublicApiEntry, ...]
    #: Modules and names in scope, shown or not.
    module_total: int
    name_total: int


def file_rows(conn: sqlite3.Connection) -> dict[str, FileRow]:
    """The file table's columns the map reads, by path."""
    return {path: (line_count, language, family, status) for path, line_count, language, family, status in
            conn.execute("SELECT path, line_count, language, family, status FROM st_file")}


def structure(conn: sqlite3.Connection, depth: int) -> tuple[list[TreeNode], int]:
    return structure_of(file_rows(conn), depth)


def structure_of(files: Mapping[str, FileRow], depth: int) -> tuple[list[TreeNode], int]:
    """Pre-order nodes (directories first, then files, by name) down to ``depth`` levels; total file count."""
    levels = _Levels(files, depth)
    return levels.nodes(lambda _directory: True), len(files)


def fitted_structure(files: Mapping[str, FileRow], depth: int, budget: int) -> list[TreeNode] | None:
    """The tree to ``depth`` folded to at most ``budget`` nodes, or ``None`` when the root alone holds more.

    Directories open most code first (files of a code language below them; then the shallower, then by path):
    one that would take the tree past ``budget`` stays folded, showing its file count, and smaller ones may still
    open. A first look at a repository then shows its code in one answer rather than a page of ``docs/_static``.
    """
    levels = _Levels(files, depth)
    if levels.width("") > budget:
        return None
    opened, size = {""}, levels.width("")
    waiting = [(-levels.code[d], 1, d) for d in levels.child_dirs("")]
    heapq.heapify(waiting)
    while waiting:
        _, level, directory = heapq.heappop(waiting)
        if level >= depth or size + levels.width(directory) > budget:
            continue
        opened.add(directory)
        size += levels.width(directory)
        for child in levels.child_dirs(directory):
            heapq.heappush(waiting, (-levels.code[child], level + 1, child))
    return levels.nodes(opened.__contains__)


def has_closed_directory(nodes: Sequence[TreeNode], depth: int) -> bool:
    """Whether a directory above ``depth`` is listed without its entries (pre-order: they would follow it)."""
    for i, node in enumerate(nodes):
        if node.is_dir and node.depth < depth and node.file_count and (
                i + 1 == len(nodes) or not nodes[i + 1].path.startswith(f"{node.path}/")):
            return True
    return False


class _Levels:
    """The first ``depth`` directory levels of ``files``: one pass that looks only at those levels of each path
    (the deeper ones are counted, never listed), slicing prefixes instead of joining parts."""

    def __init__(self, files: Mapping[str, FileRow], depth: int) -> None:
        self.depth = depth
        self.counts: Counter[str] = Counter()
        #: Files below each directory whose language is code (not data, docs or unknown).
        self.code: Counter[str] = Counter()
        self.subdirs: dict[str, set[str]] = {}
        self.listed: dict[str, list[tuple[str, int | None]]] = {}
        for path, row in files.items():
            is_code = row[2] is not None and row[2] not in DATA_FAMILIES
            parent, start, level = "", 0, 1
            while level <= depth:
                cut = path.find("/", start)
                if cut < 0:
                    self.listed.setdefault(parent, []).append((path[start:], row[0]))
                    break
                directory = path[:cut]
                self.counts[directory] += 1
                self.code[directory] += is_code
                self.subdirs.setdefault(parent, set()).add(path[start:cut])
                parent, start, level = directory, cut + 1, level + 1

    def child_dirs(self, prefix: str) -> list[str]:
        base = f"{prefix}/" if prefix else ""
        return [base + name for name in sorted(self.subdirs.get(prefix, ()))]

    def width(self, prefix: str) -> int:
        """Nodes that opening ``prefix`` lists."""
        return len(self.subdirs.get(prefix, ())) + len(self.listed.get(prefix, ()))

    def nodes(self, is_open: Callable[[str], bool]) -> list[TreeNode]:
        out: list[TreeNode] = []

        def walk(prefix: str, level: int) -> None:
            base = f"{prefix}/" if prefix else ""
            for name in sorted(self.subdirs.get(prefix, ())):
                path = base + name
                out.append(TreeNode(path, name, True, level, self.counts[path], None))
                if level < self.depth and is_open(path):
                    walk(path, level + 1)
            # Names are unique within a directory: the line count never decides the order.
            for name, line_count in sorted(self.listed.get(prefix, ()), key=lambda item: item[0]):
                out.append(TreeNode(base + name, name, False, level, None, line_count))

        walk("", 1)
        return out


def languages(conn: sqlite3.Connection) -> list[LanguageShare]:
    return languages_of(file_rows(conn))


def languages_of(files: Mapping[str, FileRow]) -> list[LanguageShare]:
    counts = Counter((row[1], row[2]) for row in files.values() if row[1] is not None)
    total = sum(counts.values()) or 1
    shares = [LanguageShare(lang, fam, count, round(100.0 * count / total, 2))
              for (lang, fam), count in counts.items() if lang is not None]
    return sorted(shares, key=lambda s: (-s.file_count, s.language, s.family or ""))


def entry_points(conn: sqlite3.Connection, entry_files: Sequence[EntryPoint] | None = None) -> list[EntryPoint]:
    """Declared scripts, ``main`` functions, then conventional entry files (``entry_files_of``, computed here
    unless given)."""
    found: list[EntryPoint] = []
    for path, text in conn.execute("SELECT path, text FROM st_marker WHERE text IS NOT NULL ORDER BY path"):
        found += _declared(conn, path, text)
    for path, kind, name, qualified in conn.execute(
            # name_lc first: the index st_def has (a scan of every definition otherwise)
            "SELECT f.path, d.kind, d.name, d.qualified_name FROM st_def d JOIN st_file f ON f.file_id = d.file_id "
            # a module's own ``main``: one nested in a function or a class is no way into the program
            "WHERE d.name_lc = 'main' AND d.name = 'main' AND d.kind = 'function' AND d.parent_uid IS NULL "
            "ORDER BY f.path, d.start_line "
            "LIMIT ?",
            (MAX_ENTRY_POINTS,)):
        found.append(EntryPoint(path, kind, name, qualified, "main_function"))
    found += entry_files if entry_files is not None else entry_files_of(file_rows(conn))
    unique = {(e.path, e.name, e.evidence): e for e in found}
    return sorted(unique.values(), key=lambda e: (e.evidence != "declared_script", e.path, e.name))[:MAX_ENTRY_POINTS]


def entry_files_of(files: Mapping[str, FileRow]) -> list[EntryPoint]:
    """Parsed files with a conventional entry name (``manage.py``, ``main.go``…), by path."""
    return [EntryPoint(path, "file", posixpath.basename(path), None, "conventional_file") for path in sorted(files)
            if files[path][3] == "parsed" and posixpath.basename(path) in _ENTRY_FILES]


def _declared(conn: sqlite3.Connection, path: str, text: str) -> list[EntryPoint]:
    name = posixpath.basename(path)
    base = posixpath.dirname(path)
    out: list[EntryPoint] = []
    if name == "pyproject.toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return []
        project = data.get("project", {})
        scripts: dict[str, object] = {}
        for table in (project.get("scripts"), project.get("gui-scripts"),
                      data.get("tool", {}).get("poetry", {}).get("scripts")):
            if isinstance(table, dict):
                scripts.update(table)
        for script, target in sorted(scripts.items()):
            if isinstance(target, str) and ":" in target:
                qualified = target.replace(":", ".").split("[", 1)[0].strip()
                row = conn.execute("SELECT f.path, d.kind FROM st_def d JOIN st_file f ON f.file_id = d.file_id "
                                   "WHERE d.qualified_name = ? ORDER BY f.path LIMIT 1", (qualified,)).fetchone()
                out.append(EntryPoint(row[0] if row else path, row[1] if row else "script", script, qualified,
                                      "declared_script"))
    elif name == "package.json":
        try:
            data = json.loads(text)
        except ValueError:
            return []
        if not isinstance(data, dict):
            return []
        bins = data.get("bin")
        targets = dict(bins) if isinstance(bins, dict) else ({str(data.get("name", "bin")): bins} if bins else {})
        if isinstance(data.get("main"), str):
            targets.setdefault("main", data["main"])
        for script, target in sorted(targets.items()):
            if isinstance(target, str):
                file = posixpath.normpath(posixpath.join(base, target))
                held = conn.execute("SELECT 1 FROM st_file WHERE path = ?", (file,)).fetchone() is not None
                out.append(EntryPoint(file, "file", script, None, "declared_script", held))
    return out


def dependencies(conn: sqlite3.Connection) -> Dependencies:
    total = int(conn.execute("SELECT count(*) FROM st_import").fetchone()[0])
    counts: Counter[str] = Counter()
    python: Counter[str] = Counter()
    for language, source, kind, count in conn.execute(
            "SELECT f.language, i.source_literal, i.import_kind, count(*) FROM st_import i "
            # "+": not through the source_literal index, whose range scan costs more than reading the table
            "JOIN st_file f ON f.file_id = i.file_id WHERE i.resolved_file_id IS NULL AND i.resolved_alt_file_id "
            "IS NULL AND +i.source_literal IS NOT NULL GROUP BY f.language, i.source_literal, i.import_kind"):
        if modules.is_external(language, source, kind):
            (python if language == "python" else counts)[modules.external_name(language, source)] += int(count)
    for name, count in python.items():
        if not _repo_top(conn, name):  # else a module of this repository that did not resolve (a namespace package)
            counts[name] += count
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return Dependencies(tuple(ranked[:MAX_DEPENDENCIES]), total, len(ranked) > MAX_DEPENDENCIES, len(ranked))


def _repo_top(conn: sqlite3.Connection, name: str) -> bool:
    """Whether a Python module key of this repository starts with the top-level name ``name``: two probes of the
    key index per name imported, not a read of every key ("/" follows "." in byte order)."""
    if "." in name:
        return False
    return conn.execute("SELECT 1 FROM st_module_key WHERE key = ? OR (key >= ? AND key < ?) LIMIT 1",
                        (f"py:{name}", f"py:{name}.", f"py:{name}/")).fetchone() is not None


def test_layout(conn: sqlite3.Connection) -> TestLayout:
    return test_layout_of(file_rows(conn))


def test_layout_of(files: Mapping[str, FileRow]) -> TestLayout:
    # Sorted by code point, which is the byte order of UTF-8 and so SQLite's ``ORDER BY path``.
    tests = sorted(path for path, row in files.items()
                   if row[1] is not None and row[2] not in DATA_FAMILIES and _TEST.search(path))
    dirs = Counter(posixpath.dirname(p) for p in tests)
    top_dirs = tuple(d for d, _ in sorted(dirs.items(), key=lambda i: (-i[1], i[0]))[:20])
    return TestLayout(tuple(tests[:MAX_TEST_FILES]), len(tests), top_dirs)


def public_api(conn: sqlite3.Connection, under: str | None = None) -> PublicApi:
    """Declared exports (``__all__``, ``export``), else a package ``__init__``'s resolved module-level names;
    ``under`` keeps the modules at or below that path.

    Modules come whole, a package's ``__init__`` first, then the shallowest (``django/db/models/__init__.py``
    before ``django/test/utils.py``: a package's face before its parts), until :data:`MAX_PUBLIC_API` names;
    only a first module longer than that is cut. The counts say how much more the scope holds.
    """
    columns = "f.path, e.exported_name, e.def_uid, e.certainty, e.evidence_kind"
    where, args = ("", ()) if not under else \
        (" AND (f.path = ? OR f.path LIKE ? ESCAPE '\\')", (under.strip("/"), _like_prefix(under.strip("/"))))
    rows = conn.execute(
        f"SELECT {columns} FROM st_export_entry e JOIN st_file f ON f.file_id = e.file_id "
        f"WHERE e.evidence_kind IN ('__all__literal', 'explicit_export'){where}", args).fetchall()
    if len(rows) < MAX_PUBLIC_API:
        # Two queries rather than one with ``OR``: the declared ones scan the export table alone, and this one
        # runs only when they leave room, starting from the ``__init__.py`` files.
        rows += conn.execute(
            f"SELECT {columns} FROM st_file f CROSS JOIN st_export_entry e ON e.file_id = f.file_id "
            "WHERE (f.path LIKE '%/__init__.py' OR f.path = '__init__.py') AND e.evidence_kind = 'default_module' "
            f"AND +e.def_uid IS NOT NULL{where} LIMIT ?", (*args, _MAX_PUBLIC_API_ROWS)).fetchall()
    modules: dict[str, list[PublicApiEntry]] = {}
    for row in rows:
        modules.setdefault(row[0], []).append(PublicApiEntry(*row))
    shown: list[PublicApiEntry] = []
    for path in sorted(modules, key=_api_order):
        names = sorted(modules[path], key=lambda e: e.name)
        if shown and len(shown) + len(names) > MAX_PUBLIC_API:
            break
        shown += names[:MAX_PUBLIC_API]
    return PublicApi(tuple(shown), len(modules), sum(len(names) for names in modules.values()))


def _api_order(path: str) -> tuple[bool, int, str]:
    return posixpath.basename(path) != "__init__.py", path.count("/"), path


def _like_prefix(path: str) -> str:
    escaped = path.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"{escaped}/%"
