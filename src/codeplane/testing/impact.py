"""Impact-aware test selection (§11.9) from the structural index's ImportFact ``source_literal``.

Changed files become dotted modules (``path_to_module``). A reverse import walk finds every module that
imports an affected one, level by level, each level ONE SQL query with the three match types of §11.9.3:
exact (``source_literal = m``), parent (the literal is a prefix package of ``m``: an ``IN`` over all
prefixes) and child (``LIKE 'm.%'``). Test files reached are the selection; a test is ``high`` when an exact
chain links it to a change, ``low`` when only prefix matches do. The tier is ``complete`` only if every
changed file resolved to a module and no test-scope import has a NULL literal; otherwise ``partial``, and
nothing is silently added to make up for it (§11.9.7): the agent decides whether to widen.

Relative literals (``.models``) are resolved against the importing file's package, in Python, from the
(small) set of relative imports. Only Python is resolved; other languages' files are ``unresolved_files``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Literal

Confidence = Literal["high", "low"]
MatchType = Literal["exact", "parent", "child", "changed"]
#: §11.9.6: coverage gaps are capped.
UNCOVERED_CAP = 20
_MAX_LEVELS = 64
_CHUNK = 400
_PY_SUFFIXES = (".py", ".pyi")

#: Where the structural index keeps ImportFact rows (§7.3.5) and the file table.
IMPORTS_TABLE = "import_facts"
FILES_TABLE = "files"

ReadConnection = Callable[[], AbstractContextManager[sqlite3.Connection]]


@dataclass(frozen=True)
class TestMatch:
    __test__ = False

    test_file: str
    confidence: Confidence
    #: How the test reaches a change, e.g. ``imports attr._make (exact)``; at most 5, sorted.
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ImpactResult:
    changed_modules: tuple[str, ...]
    unresolved_files: tuple[str, ...]
    confidence: Literal["complete", "partial"]
    matches: tuple[TestMatch, ...]
    null_literal_imports: int = 0
    #: Source directories the selected tests import (``--cov=<dir>`` scoping, §11.9.5).
    source_dirs: tuple[str, ...] = ()
    uncovered_modules: tuple[str, ...] = ()
    uncovered_total: int = 0
    hint: str = ""

    @property
    def test_files(self) -> tuple[str, ...]:
        return tuple(m.test_file for m in self.matches)


@dataclass
class _ModuleIndex:
    """Per index epoch: which dirs are packages, every Python module, and resolved relative imports."""

    epoch: object
    packages: set[str]
    modules: dict[str, str]  # module -> path
    relative: list[tuple[str, str]] = field(default_factory=list)  # (importer path, absolute literal)


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def path_to_module(path: str, packages: set[str]) -> str | None:
    """``src/attr/_make.py`` → ``attr._make`` (walks up while the directory is a package).

    ``packages`` holds directories that contain ``__init__.py``. Not a Python file: None.
    """
    if not path.endswith(_PY_SUFFIXES):
        return None
    parts = path.rsplit(".", 1)[0].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
        if not parts:
            return None
    module = [parts[-1]]
    directory = parts[:-1]
    while directory and "/".join(directory) in packages:
        module.insert(0, directory[-1])
        directory = directory[:-1]
    return ".".join(module)


def _resolve_relative(literal: str, importer: str, packages: set[str]) -> str | None:
    """``..pkg.mod`` seen in ``a/b/c.py`` → ``a.pkg.mod`` (Python's rules for relative imports)."""
    dots = len(literal) - len(literal.lstrip("."))
    rest = literal[dots:]
    module = path_to_module(importer, packages)
    if module is None:
        return None
    is_package = importer.rsplit("/", 1)[-1].startswith("__init__.")
    base = module.split(".") if is_package else module.split(".")[:-1]
    if dots - 1 > len(base):
        return None
    base = base[: len(base) - (dots - 1)] if dots > 1 else base
    joined = ".".join([*base, rest] if rest else base)
    return joined or None


def _prefixes(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


class ImpactIndex:
    """Answers impact queries from the index's read connection. Thread-safe; caches per index epoch."""

    def __init__(self, read: ReadConnection) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._cache: _ModuleIndex | None = None

    def available(self) -> bool:
        try:
            with self._read() as conn:
                return _has_table(conn, IMPORTS_TABLE)
        except sqlite3.Error:
            return False

    def _modules(self, conn: sqlite3.Connection) -> _ModuleIndex:
        epoch = conn.execute("SELECT max(id) FROM epochs").fetchone() if _has_table(conn, "epochs") else None
        with self._lock:
            if self._cache is not None and self._cache.epoch == epoch:
                return self._cache
        paths = [row[0] for row in conn.execute(
            f"SELECT path FROM {FILES_TABLE} WHERE path LIKE '%.py' OR path LIKE '%.pyi'")]
        packages = {p.rsplit("/", 1)[0] if "/" in p else "" for p in paths
                    if p.rsplit("/", 1)[-1] in ("__init__.py", "__init__.pyi")}
        packages.discard("")
        modules: dict[str, str] = {}
        for path in sorted(paths):
            module = path_to_module(path, packages)
            if module is not None:
                modules.setdefault(module, path)
        relative = []
        for path, literal in conn.execute(
                f"SELECT f.path, i.source_literal FROM {IMPORTS_TABLE} i JOIN {FILES_TABLE} f ON f.id = i.file_id "
                "WHERE i.source_literal LIKE '.%'"):
            resolved = _resolve_relative(str(literal), str(path), packages)
            if resolved:
                relative.append((str(path), resolved))
        index = _ModuleIndex(epoch, packages, modules, relative)
        with self._lock:
            self._cache = index
        return index

    def affected(self, changed_files: Sequence[str], test_files: Sequence[str], *,
                 uncovered: bool = False) -> ImpactResult:
        """Test files (among ``test_files``) affected by changes to ``changed_files``."""
        with self._read() as conn:
            if not _has_table(conn, IMPORTS_TABLE):
                raise LookupError("the structural index has no import facts yet")
            index = self._modules(conn)
            return _Walk(conn, index, test_files).run(changed_files, uncovered=uncovered)


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


class _Walk:
    def __init__(self, conn: sqlite3.Connection, index: _ModuleIndex, test_files: Sequence[str]) -> None:
        self.conn = conn
        self.index = index
        self.tests = set(test_files)
        #: module → confidence; path → (confidence, reasons)
        self.modules: dict[str, Confidence] = {}
        self.files: dict[str, tuple[Confidence, set[str]]] = {}

    def run(self, changed_files: Sequence[str], *, uncovered: bool) -> ImpactResult:
        changed_modules: list[str] = []
        unresolved: list[str] = []
        for path in sorted(set(changed_files)):
            module = path_to_module(path, self.index.packages)
            if module is None:
                unresolved.append(path)
                continue
            changed_modules.append(module)
            self.modules[module] = "high"
            if path in self.tests:
                self._reach(path, "high", "changed test file")
        frontier = set(changed_modules)
        for _ in range(_MAX_LEVELS):
            if not frontier:
                break
            frontier = self._level(frontier)
        nulls = self._null_literals()
        matches = tuple(TestMatch(path, conf, tuple(sorted(reasons))[:5])
                        for path, (conf, reasons) in sorted(self.files.items()) if path in self.tests)
        confidence: Literal["complete", "partial"] = "complete" if not unresolved and not nulls else "partial"
        gaps, total = self._uncovered() if uncovered else ((), 0)
        return ImpactResult(
            changed_modules=tuple(changed_modules), unresolved_files=tuple(unresolved), confidence=confidence,
            matches=matches, null_literal_imports=nulls, source_dirs=self._source_dirs(m.test_file for m in matches),
            uncovered_modules=gaps, uncovered_total=total, hint=_hint(confidence, matches, unresolved, nulls))

    def _reach(self, path: str, confidence: Confidence, reason: str) -> bool:
        """Record that ``path`` is affected; True if this raised what we knew about it."""
        known = self.files.get(path)
        if known is None:
            self.files[path] = (confidence, {reason})
            return True
        reasons = known[1]
        if len(reasons) < 8:
            reasons.add(reason)
        if known[0] == "low" and confidence == "high":
            self.files[path] = ("high", reasons)
            return True
        return False

    def _level(self, frontier: set[str]) -> set[str]:
        """One reverse-import step: every importer of a frontier module, by exact/parent/child match."""
        rows: list[tuple[str, str]] = []
        ordered = sorted(frontier)
        for start in range(0, len(ordered), _CHUNK):
            chunk = ordered[start:start + _CHUNK]
            wanted = sorted(set(chunk) | {p for m in chunk for p in _prefixes(m)})
            likes = " OR ".join("i.source_literal LIKE ? ESCAPE '\\'" for _ in chunk)
            sql = (f"SELECT DISTINCT f.path, i.source_literal FROM {IMPORTS_TABLE} i "
                   f"JOIN {FILES_TABLE} f ON f.id = i.file_id "
                   f"WHERE i.source_literal IN ({','.join('?' * len(wanted))}) OR {likes}")
            rows += self.conn.execute(sql, [*wanted, *(_like_escape(m) + ".%" for m in chunk)]).fetchall()
        rows += [(path, literal) for path, literal in self.index.relative
                 if any(_matches(literal, m) for m in frontier)]
        grew: set[str] = set()
        for path, literal in rows:
            for module in frontier:
                kind = _matches(str(literal), module)
                if kind is None:
                    continue
                confidence: Confidence = "high" if kind == "exact" and self.modules.get(module) == "high" else "low"
                reason = f"imports {literal} ({kind}{'' if literal == module else ' of ' + module})"
                if self._reach(str(path), confidence, reason):
                    importer = path_to_module(str(path), self.index.packages)
                    if importer is not None and _better(confidence, self.modules.get(importer)):
                        self.modules[importer] = confidence
                        grew.add(importer)
        return grew

    def _null_literals(self) -> int:
        if not self.tests:
            return 0
        count = 0
        ordered = sorted(self.tests)
        for start in range(0, len(ordered), _CHUNK):
            chunk = ordered[start:start + _CHUNK]
            count += int(self.conn.execute(
                f"SELECT count(*) FROM {IMPORTS_TABLE} i JOIN {FILES_TABLE} f ON f.id = i.file_id "
                f"WHERE f.path IN ({','.join('?' * len(chunk))}) AND i.source_literal IS NULL", chunk).fetchone()[0])
        return count

    def _test_literals(self, test_files: Iterable[str]) -> set[str]:
        """``imported_sources`` (§11.9.2): every literal the given test files import, made absolute."""
        ordered = sorted(set(test_files))
        literals: set[str] = set()
        for start in range(0, len(ordered), _CHUNK):
            chunk = ordered[start:start + _CHUNK]
            literals |= {str(row[0]) for row in self.conn.execute(
                f"SELECT DISTINCT i.source_literal FROM {IMPORTS_TABLE} i JOIN {FILES_TABLE} f ON f.id = i.file_id "
                f"WHERE f.path IN ({','.join('?' * len(chunk))}) AND i.source_literal IS NOT NULL "
                "AND i.source_literal NOT LIKE '.%'", chunk)}
        wanted = set(ordered)
        literals |= {literal for path, literal in self.index.relative if path in wanted}
        return literals

    def _source_dirs(self, test_files: Iterable[str]) -> tuple[str, ...]:
        dirs = set()
        for literal in self._test_literals(test_files):
            path = self.index.modules.get(literal)
            if path is not None and path not in self.tests:
                dirs.add(path.rsplit("/", 1)[0] if "/" in path else ".")
        minimal = sorted(d for d in dirs if not any(d != o and (o == "." or d.startswith(o + "/")) for o in dirs))
        return tuple(minimal)

    def _uncovered(self) -> tuple[tuple[str, ...], int]:
        """Source modules no test file imports directly (exact or through a submodule), capped at 20."""
        literals = self._test_literals(self.tests)
        covered_prefixes = {p for lit in literals for p in (*_prefixes(lit), lit)}
        gaps = sorted(module for module, path in self.index.modules.items()
                      if path not in self.tests and module not in covered_prefixes
                      and not path.rsplit("/", 1)[-1].startswith(("conftest.", "test_"))
                      and "/tests/" not in f"/{path}")
        return tuple(gaps[:UNCOVERED_CAP]), len(gaps)


def _matches(literal: str, module: str) -> MatchType | None:
    if literal == module:
        return "exact"
    if module.startswith(literal + "."):
        return "parent"
    if literal.startswith(module + "."):
        return "child"
    return None


def _better(new: Confidence, old: Confidence | None) -> bool:
    return old is None or (old == "low" and new == "high")


def _hint(confidence: str, matches: Sequence[TestMatch], unresolved: Sequence[str], nulls: int) -> str:
    if not matches and not unresolved:
        return "No test imports the changed modules; consider adding tests (see uncovered_modules)."
    parts = []
    low = sum(1 for m in matches if m.confidence == "low")
    if low:
        parts.append(f"{low} test file(s) match only through a parent/child package import (low); "
                     "run them too unless inspect_affected_tests shows they are unrelated.")
    if unresolved:
        parts.append(f"{len(unresolved)} changed file(s) are not Python modules; CodePlane did not add tests for "
                     "them — choose tests for those yourself.")
    if nulls:
        parts.append(f"{nulls} test import(s) have no static source literal (dynamic imports).")
    if confidence == "complete" and not low:
        parts.append("Selection is complete: every match is an exact import chain.")
    return " ".join(parts)
