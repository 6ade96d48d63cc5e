"""Impact-aware test selection (§11.9) from the structural index's ImportFact rows (``st_import``).

Changed files become module keys (``py:attr._make``, ``js:web/src/sum``) from ``st_module_key``. A reverse
import walk then finds every file that imports an affected module, level by level, each level one SQL query
with the three match types of §11.9.3 over the import's module (its ``source_literal`` made absolute by the
index: ``target_key``): exact (``= m``), parent (the import names a package prefix of ``m``: an ``IN`` over
all prefixes) and child (the import names a submodule of ``m``: an index range ``m.`` … ``m/``, the
``LIKE 'm.%'`` of the spec without defeating the index). ``from pkg import mod`` also matches exactly through
``alt_key`` when the index resolved it to a module file — still module-level, never a symbol.

A test file is ``high`` when an exact chain links it to a change, ``low`` when only prefix matches do. The
tier is ``complete`` only if every changed file resolved to a module and no test-scope import has a NULL
literal; otherwise ``partial`` — and nothing is added to make up for it (§11.9.7): the agent decides.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal

from codeplane.index.languages import detect
from codeplane.index.structural.modules import file_keys

Confidence = Literal["high", "low"]
#: §11.9.6: coverage gaps are capped.
UNCOVERED_CAP = 20
_MAX_LEVELS = 64
_CHUNK = 200
_MAX_REASONS = 5

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


def _marks(count: int) -> str:
    return ",".join("?" * count)


def _chunks(items: Sequence[str], size: int = _CHUNK) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _parents(key: str) -> list[str]:
    """``py:a.b.c`` → ``py:a``, ``py:a.b`` (only dotted Python modules have packages)."""
    if not key.startswith("py:"):
        return []
    parts = key[3:].split(".")
    return [f"py:{'.'.join(parts[:i])}" for i in range(1, len(parts))]


def _display(key: str) -> str:
    return key.split(":", 1)[1] if ":" in key else key


def _relation(imported: str, module: str) -> str | None:
    if imported == module:
        return "exact"
    if module.startswith(imported + ".") and imported.startswith("py:"):
        return "parent"
    if imported.startswith(module + ".") and module.startswith("py:"):
        return "child"
    return None


class ImpactIndex:
    """Answers impact queries over the index's read connection (a consistent snapshot per query)."""

    def __init__(self, read: ReadConnection) -> None:
        self._read = read

    def affected(self, changed_files: Sequence[str], test_files: Sequence[str], *,
                 uncovered: bool = False) -> ImpactResult:
        """Test files (among ``test_files``) affected by changes to ``changed_files``.

        Raises ``LookupError`` when the index holds no import facts, and whatever the read connection raises
        (3004 while the index is not running).
        """
        with self._read() as conn:
            exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'st_import'")
            if exists.fetchone() is None:
                raise LookupError("the index has no import facts (structural index not built)")
            return _Walk(conn, test_files).run(changed_files, uncovered=uncovered)


class _Walk:
    def __init__(self, conn: sqlite3.Connection, test_files: Sequence[str]) -> None:
        self.conn = conn
        self.tests = set(test_files)
        #: module key → confidence; path → (confidence, reasons)
        self.modules: dict[str, Confidence] = {}
        self.files: dict[str, tuple[Confidence, set[str]]] = {}
        #: Module keys that name a package (``__init__``): only those have submodules.
        self.packages: set[str] = set()

    # -- changed files → module keys -----------------------------------------------------------------
    def _keys_of(self, paths: Sequence[str]) -> dict[str, list[str]]:
        keys: dict[str, list[str]] = {}
        for chunk in _chunks(sorted(set(paths))):
            for path, key in self.conn.execute(
                    f"SELECT f.path, k.key FROM st_module_key k JOIN st_file f ON f.file_id = k.file_id "
                    f"WHERE f.path IN ({_marks(len(chunk))}) ORDER BY k.rank, k.key", list(chunk)):
                keys.setdefault(str(path), []).append(str(key))
        return keys

    def _keys_of_missing(self, path: str) -> list[str]:
        """Keys of a file the index no longer has (deleted): what it was named by, from its path."""
        init_dirs = {str(p).rpartition("/")[0] for (p,) in self.conn.execute(
            "SELECT path FROM st_file WHERE path LIKE '%/__init__.py' OR path LIKE '%/__init__.pyi'")}
        info = detect(path)
        return [k for k, _ in file_keys(path, info.language if info else None, None, init_dirs)]

    def run(self, changed_files: Sequence[str], *, uncovered: bool) -> ImpactResult:
        changed = sorted({p.strip().removeprefix("./") for p in changed_files if p.strip()})
        known = self._keys_of(changed)
        changed_modules: list[str] = []
        unresolved: list[str] = []
        frontier: set[str] = set()
        for path in changed:
            keys = known.get(path) or self._keys_of_missing(path)
            if not keys:
                unresolved.append(path)
                continue
            for key in keys:
                if _is_init(path):
                    self.packages.add(key)
                changed_modules.append(_display(key))
                self.modules[key] = "high"
                frontier.add(key)
            self._reach(path, "high", "is a changed test file" if path in self.tests else "is a changed file")
        for _ in range(_MAX_LEVELS):
            if not frontier:
                break
            frontier = self._level(frontier)
        self._conftests()
        nulls = self._null_literals()
        matches = tuple(TestMatch(path, conf, tuple(sorted(reasons))[:_MAX_REASONS])
                        for path, (conf, reasons) in sorted(self.files.items()) if path in self.tests)
        tier: Literal["complete", "partial"] = "complete" if not unresolved and not nulls else "partial"
        gaps, total = self._uncovered() if uncovered else ((), 0)
        return ImpactResult(
            changed_modules=tuple(sorted(set(changed_modules))), unresolved_files=tuple(unresolved),
            confidence=tier, matches=matches, null_literal_imports=nulls,
            source_dirs=self._source_dirs([m.test_file for m in matches]),
            uncovered_modules=gaps, uncovered_total=total, hint=_hint(tier, matches, unresolved, nulls))

    # -- the reverse walk ------------------------------------------------------------------------------
    def _reach(self, path: str, confidence: Confidence, reason: str) -> bool:
        """Record that ``path`` is affected; True if this is news (new file or upgraded to high).

        Reasons are kept for the file's best confidence only, so a ``high`` match explains itself.
        """
        known = self.files.get(path)
        if known is None or (known[0] == "low" and confidence == "high"):
            self.files[path] = (confidence, {reason})
            return True
        if known[0] == confidence and len(known[1]) < 2 * _MAX_REASONS:
            known[1].add(reason)
        return False

    def _conftests(self) -> None:
        """pytest imports every ``conftest.py`` above a test file before the test: an affected conftest affects
        every test below its directory, with the conftest's own confidence."""
        for path, (confidence, _) in sorted(self.files.items()):
            directory, _, name = path.rpartition("/")
            if name != "conftest.py":
                continue
            for test in sorted(self.tests):
                if test.endswith(".py") and (not directory or test.startswith(directory + "/")):
                    self._reach(test, confidence, f"runs under {path} (affected conftest.py)")

    def _level(self, frontier: set[str]) -> set[str]:
        """One reverse-import step: every importer of a frontier module, by exact/parent/child match."""
        ordered = sorted(frontier)
        rows: list[tuple[int, str, str | None, str | None]] = []
        for chunk in _chunks(ordered):
            wanted = sorted(set(chunk) | {p for key in chunk for p in _parents(key)})
            # Child matches only exist below packages (an ``__init__``): one index range each.
            packages = [key for key in chunk if key in self.packages]
            ranges = "".join(" UNION ALL SELECT file_id, target_key, NULL FROM st_import "
                             "WHERE target_key > ? AND target_key < ?" for _ in packages)
            sql = (f"SELECT file_id, target_key, NULL FROM st_import WHERE target_key IN ({_marks(len(wanted))}) "
                   f"UNION ALL SELECT file_id, NULL, alt_key FROM st_import WHERE alt_key IN ({_marks(len(chunk))}) "
                   f"AND resolved_alt_file_id IS NOT NULL{ranges}")
            params = [*wanted, *chunk, *(bound for key in packages for bound in (key + ".", key + "/"))]
            for file_id, target, alt in self.conn.execute(sql, params):
                rows.append((int(file_id), str(target or alt), target, alt))
        if not rows:
            return set()
        paths = self._paths({file_id for file_id, *_ in rows})
        grew: dict[int, Confidence] = {}
        for file_id, imported, target, _alt in rows:
            for module in frontier:
                kind = _relation(imported, module) if target is not None else (
                    "exact" if imported == module else None)
                if kind is None:
                    continue
                confidence: Confidence = "high" if kind == "exact" and self.modules.get(module) == "high" else "low"
                via = "" if imported == module else f" of {_display(module)}"
                weak = ", itself reached by a package match" if kind == "exact" and confidence == "low" else ""
                reason = f"imports {_display(imported)} ({kind}{via}{weak})"
                if self._reach(paths[file_id], confidence, reason) and grew.get(file_id) != "high":
                    grew[file_id] = confidence
        next_frontier: set[str] = set()
        if grew:
            for file_id, key in self._file_keys(sorted(grew)):
                if _is_init(paths[file_id]):
                    self.packages.add(key)
                if self.modules.get(key) is None or (self.modules[key] == "low" and grew[file_id] == "high"):
                    self.modules[key] = grew[file_id]
                    next_frontier.add(key)
        return next_frontier

    def _paths(self, file_ids: set[int]) -> dict[int, str]:
        found: dict[int, str] = {}
        ordered = sorted(file_ids)
        for start in range(0, len(ordered), _CHUNK):
            chunk = ordered[start:start + _CHUNK]
            found.update((int(i), str(p)) for i, p in self.conn.execute(
                f"SELECT file_id, path FROM st_file WHERE file_id IN ({_marks(len(chunk))})", chunk))
        return found

    def _file_keys(self, file_ids: Sequence[int]) -> list[tuple[int, str]]:
        found: list[tuple[int, str]] = []
        for start in range(0, len(file_ids), _CHUNK):
            chunk = list(file_ids[start:start + _CHUNK])
            found += [(int(i), str(k)) for i, k in self.conn.execute(
                f"SELECT file_id, key FROM st_module_key WHERE file_id IN ({_marks(len(chunk))})", chunk)]
        return found

    # -- test-scoped facts -----------------------------------------------------------------------------
    def _null_literals(self) -> int:
        count = 0
        for chunk in _chunks(sorted(self.tests)):
            count += int(self.conn.execute(
                f"SELECT count(*) FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
                f"WHERE f.path IN ({_marks(len(chunk))}) AND i.source_literal IS NULL", list(chunk)).fetchone()[0])
        return count

    def _imported_sources(self, test_files: Iterable[str]) -> list[str]:
        """``imported_sources`` (§11.9.2): repository files the given test files import directly."""
        found: set[str] = set()
        for chunk in _chunks(sorted(set(test_files))):
            found |= {str(p) for (p,) in self.conn.execute(
                f"SELECT DISTINCT rf.path FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
                f"JOIN st_file rf ON rf.file_id IN (i.resolved_file_id, i.resolved_alt_file_id) "
                f"WHERE f.path IN ({_marks(len(chunk))})", list(chunk))}
        return sorted(found)

    def _source_dirs(self, test_files: Sequence[str]) -> tuple[str, ...]:
        dirs = {p.rpartition("/")[0] or "." for p in self._imported_sources(test_files)
                if p not in self.tests and not _test_like(p)}
        minimal = sorted(d for d in dirs if not any(d != o and (o == "." or d.startswith(o + "/")) for o in dirs))
        return tuple(minimal)

    def _uncovered(self) -> tuple[tuple[str, ...], int]:
        """Python source modules that no test imports, directly or through a submodule; capped at 20."""
        imported = set()
        for chunk in _chunks(sorted(self.tests)):
            for target, alt, alt_resolved in self.conn.execute(
                    f"SELECT i.target_key, i.alt_key, i.resolved_alt_file_id IS NOT NULL FROM st_import i "
                    f"JOIN st_file f ON f.file_id = i.file_id WHERE f.path IN ({_marks(len(chunk))})", list(chunk)):
                if target:
                    imported.add(str(target))
                if alt and alt_resolved:
                    imported.add(str(alt))
        covered = {p for key in imported for p in (*_parents(key), key)}
        gaps = sorted({_display(key) for key, path in self.conn.execute(
            "SELECT k.key, f.path FROM st_module_key k JOIN st_file f ON f.file_id = k.file_id "
            "WHERE k.key LIKE 'py:%'") if key not in covered and path not in self.tests and not _test_like(path)})
        return tuple(gaps[:UNCOVERED_CAP]), len(gaps)


def _is_init(path: str) -> bool:
    return path.rsplit("/", 1)[-1].startswith("__init__.")


def _test_like(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.startswith(("test_", "conftest.")) or name.endswith("_test.py") or "/tests/" in f"/{path}"


def _hint(tier: str, matches: Sequence[TestMatch], unresolved: Sequence[str], nulls: int) -> str:
    if not matches and not unresolved:
        return "No test imports the changed modules; consider adding tests (see inspect_affected_tests)."
    parts = []
    low = sum(1 for m in matches if m.confidence == "low")
    if low:
        parts.append(f"{low} test file(s) match only through a parent/child package import (low confidence); "
                     "run them too unless inspect_affected_tests shows they are unrelated.")
    if unresolved:
        parts.append(f"{len(unresolved)} changed file(s) map to no importable module; CodePlane added no tests "
                     "for them: choose those yourself.")
    if nulls:
        parts.append(f"{nulls} test import(s) have no static source literal (dynamic imports).")
    if tier == "complete" and not low:
        parts.append("Selection is complete: every match is an exact import chain.")
    return " ".join(parts)
