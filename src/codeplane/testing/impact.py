"""Impact-aware test selection (§11.9) from the structural index's ImportFact rows (``st_import``).

Changed files become module keys (``py:attr._make``, ``js:web/src/sum``) from ``st_module_key``. A reverse
import walk then finds every file that imports an affected module, level by level, with the three match
types of §11.9.3 over the import's module (its ``source_literal`` made absolute by the index: ``target_key``):
exact (``= m``), parent (the import names a package prefix of ``m``) and child (the import names a submodule
of ``m``, the spec's ``LIKE 'm.%'``, here a range of the sorted keys). ``from pkg import mod`` also matches
exactly through ``alt_key`` when the index resolved it to a module file — still module-level, never a symbol.
The walk runs over the epoch's reverse graph (``impact_graph.py``); the test-scoped questions (dynamic
imports, imported sources, coverage gaps) are SQL queries scoped with ``WHERE path IN (test files)``.

A test file is ``high`` when an exact chain links it to a change, ``low`` when only prefix matches do, and
every ``conftest.py`` above a test counts as imported by it. The tier is ``complete`` only if every changed
file resolved to a module and no test-scope import has a NULL literal; otherwise ``partial`` — and nothing
is added to make up for it (§11.9.7): the agent decides.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Literal

from codeplane.core.logging import get_logger
from codeplane.index.languages import detect
from codeplane.index.structural.modules import file_keys
from codeplane.testing.impact_code import ReadLines
from codeplane.testing.impact_go import GoSelection, is_go_test, package_dir, select_go
from codeplane.testing.impact_graph import ImportGraph, build_graph, current_epoch
from codeplane.testing.impact_local import Affected, ImportRow, import_rows, local_cases
from codeplane.testing.impact_reach import CoverageUse, Reach, SymbolSelection
from codeplane.testing.impact_symbols import SymbolWalk
from codeplane.testing.impact_walkfacts import WalkFacts

Confidence = Literal["high", "low"]
#: §11.9.6: coverage gaps are capped.
UNCOVERED_CAP = 20
_MAX_LEVELS = 64
_CHUNK = 200
_MAX_REASONS = 5
#: The symbol walk stops once module-level selection holds all test files but one in this many (which are then
#: selected whole too, so stopping never narrows): Django's test files that import no repository code are
#: never reached by imports, and without this the walk would run on through thousands of definitions.
_NEARLY_ALL = 100
#: ... in a repository with at least this many test files: a walk that stops leaves no ``reached`` definitions
#: for coverage evidence to tell which tests led to the change (``coverage_select.py`` then keeps every test
#: recorded after it ran), and a small repository's walk is fast anyway.
_STOP_MIN_TESTS = 200

ReadConnection = Callable[[], AbstractContextManager[sqlite3.Connection]]
log = get_logger(__name__)


@dataclass(frozen=True)
class CaseMatch:
    """A selected test case (``test_x``, ``TestC::test_x``, or a whole class ``TestC``) and how it is reached."""

    case: str
    confidence: Confidence
    #: From the test to a changed definition, e.g. ``tests/t.py::test_x → helper → pkg.mod.f (changed)``.
    chain: tuple[str, ...]
    #: ``graph``: reached through the reference graph; ``coverage``: recorded running a changed definition.
    source: Literal["graph", "coverage"] = "graph"


@dataclass(frozen=True)
class TestMatch:
    __test__ = False

    test_file: str
    confidence: Confidence
    #: How the test reaches a change, e.g. ``imports attr._make (exact)``; at most 5, sorted.
    reasons: tuple[str, ...]
    #: The cases to run (symbol-level selection); empty: the whole file.
    cases: tuple[CaseMatch, ...] = ()

    @property
    def node_ids(self) -> tuple[str, ...]:
        """What to hand the runner: ``file::case`` per selected case, or the file."""
        return tuple(f"{self.test_file}::{c.case}" for c in self.cases) or (self.test_file,)


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
    #: Imports of a changed module's own top-level package that resolve to no file (``path imports module``,
    #: at most 20): edges the walk cannot follow, so the tier is ``partial``.
    unresolved_imports: tuple[str, ...] = ()
    #: Changed definitions the symbol-level walk started from (qualified names).
    changed_symbols: tuple[str, ...] = ()
    #: ``path: reason`` for each change the symbol graph could not follow (module-level selection instead).
    fallbacks: tuple[str, ...] = ()
    #: What recorded coverage evidence did to the selection (None: none recorded).
    coverage: CoverageUse | None = None
    #: (path, qualified name) of the definitions the symbol walk reached through resolved references (None: no
    #: walk ran, or it failed).
    reached: frozenset[tuple[str, str]] | None = None

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


class ImpactIndex:
    """Answers impact queries over the index's read connection (a consistent snapshot per query).

    Thread-safe. The reverse import graph is cached per index epoch (``impact_graph.py``).
    """

    def __init__(self, read: ReadConnection) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._graph: ImportGraph | None = None
        self._facts: WalkFacts | None = None

    @property
    def read(self) -> ReadConnection:
        """The index's read connection (coverage evidence maps to its definitions)."""
        return self._read

    def _graph_for(self, conn: sqlite3.Connection) -> ImportGraph:
        epoch = current_epoch(conn)
        with self._lock:
            cached = self._graph
        if cached is not None and epoch is not None and cached.epoch == epoch:
            return cached
        graph = build_graph(conn, epoch)
        with self._lock:
            self._graph = graph
        return graph

    def _facts_for(self, graph: ImportGraph) -> WalkFacts:
        """The symbol walk's per-epoch facts (definitions per file...), shared by the walks of one epoch."""
        with self._lock:
            facts = self._facts
            if facts is None or graph.epoch is None or facts.epoch != graph.epoch:
                facts = WalkFacts(graph.epoch, graph.keys_of)
                if graph.epoch is not None:
                    self._facts = facts
            return facts

    def _sources_for(self, graph: ImportGraph) -> dict[str, tuple[str, ...]]:
        """Per-epoch memo of the files each test file imports directly (``source_dirs``); shared by the walks of
        one epoch like the graph (a fresh one without an epoch)."""
        facts = self._facts_for(graph)
        return facts.sources if graph.epoch is not None else {}

    def affected(self, changed_files: Sequence[str], test_files: Sequence[str], *, uncovered: bool = False,
                 ranges: Mapping[str, Sequence[tuple[int, int]]] | None = None,
                 read_lines: ReadLines | None = None, go_targets: Sequence[str] = ()) -> ImpactResult:
        """Test files (among ``test_files``) affected by changes to ``changed_files``.

        A Python file with changed line ranges (1-based, inclusive, in the file as it is now) is selected at
        symbol level (``impact_symbols.py``: test cases, each with its chain); any other file, and whatever
        that walk cannot follow, at module level. ``read_lines`` gives a file's current lines (decorators:
        fixtures, autouse, hooks); without it every fixture candidate selects its whole scope.

        ``go_targets``: the Go test targets (package directories, ``.`` for the root); a changed ``.go`` file
        selects their test functions (``impact_go.py``), as matches named by the target.

        Raises ``LookupError`` when the index holds no import facts, and whatever the read connection raises
        (3004 while the index is not running).
        """
        everything = sorted({p.strip().removeprefix("./") for p in changed_files if p.strip()})
        # Go changes with Go targets to select are Go's (below); Python's module walk cannot name them.
        changed = [p for p in everything if not (go_targets and p.endswith(".go"))]
        with self._read() as conn:
            exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'st_import'")
            if exists.fetchone() is None:
                raise LookupError("the index has no import facts (structural index not built)")
            graph = self._graph_for(conn)
            sharp = {p: tuple(ranges[p]) for p in changed if ranges and ranges.get(p) and p in graph.id_of
                     and p.endswith((".py", ".pyi"))}
            if not sharp:
                result = _Walk(conn, graph, test_files, self._sources_for(graph), read_lines).run(
                    changed, uncovered=uncovered)
            else:
                result = self._sharp(conn, graph, changed, sharp, test_files, uncovered=uncovered,
                                     read_lines=read_lines)
            go = {p: tuple((ranges or {}).get(p, ())) for p in everything if p.endswith(".go")}
            if go and go_targets:
                result = _with_go(result, _go_selection(conn, graph, go, read_lines), go_targets)
            return result

    def _sharp(self, conn: sqlite3.Connection, graph: ImportGraph, changed: Sequence[str],
               sharp: Mapping[str, Sequence[tuple[int, int]]], test_files: Sequence[str], *, uncovered: bool,
               read_lines: ReadLines | None) -> ImpactResult:
        walk = _Walk(conn, graph, test_files, self._sources_for(graph), read_lines)
        # The module-level part is walked as the symbol walk falls back, so that walk can stop once every
        # test file is selected whole: nothing it could still find would change the answer (Django: a change
        # deep in the framework reaches a URL conf's import-time call early, then walks thousands more).
        whole = walk.add([p for p in changed if p not in sharp])
        try:
            symbols = SymbolWalk(conn, graph.id_of, graph.path_of, test_files, read_lines or _unreadable,
                                 facts=self._facts_for(graph))
            symbols.saturated = walk.add
            selection = symbols.run(sharp) if not whole else SymbolSelection(stopped=True)
        except Exception as exc:  # a walk that fails must never narrow the selection
            # Facts the walk did not expect: select all of it at module level, and say so.
            log.exception("symbol-level impact selection failed", files=len(sharp))
            selection = SymbolSelection(fallbacks=[(p, f"symbol-level selection failed ({type(exc).__name__})")
                                                   for p in sorted(sharp)])
        walk.add(p for p, _ in selection.fallbacks)
        if selection.stopped:
            walk.select_rest("selected whole: the symbol walk stopped once module-level selection held (nearly) "
                             "every test file")
        result = walk.finish(uncovered=uncovered)
        return _merge(result, selection, walk, changed)


_RANGES = re.compile(r"^(?P<path>.+?):(?P<ranges>\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)$")


def parse_changes(items: Sequence[str]) -> tuple[list[str], dict[str, list[tuple[int, int]]]]:
    """``path`` or ``path:12-30,41`` (changed lines of the file as it is now) → (paths, line ranges by path)."""
    paths: list[str] = []
    ranges: dict[str, list[tuple[int, int]]] = {}
    for item in items:
        text = item.strip().removeprefix("./")
        found = _RANGES.match(text)
        if found is None:
            paths.append(text)
            continue
        path = found["path"]
        paths.append(path)
        for part in found["ranges"].split(","):
            start, _, end = part.partition("-")
            ranges.setdefault(path, []).append((int(start), int(end or start)))
    return paths, ranges


def _unreadable(path: str) -> Sequence[str]:
    return ()


def _merge(blunt: ImpactResult, sharp: SymbolSelection, walk: _Walk, changed: Sequence[str]) -> ImpactResult:
    """The module-level answer for the blunt part plus the symbol walk's cases (a whole file wins)."""
    matches = {m.test_file: m for m in blunt.matches}
    for test_file, cases in sorted(sharp.cases.items()):
        if test_file not in walk.tests:
            continue
        best: Confidence = "high" if any(r.confidence == "high" for r in cases.values()) else "low"
        chains = tuple(" → ".join(r.chain) for _, r in sorted(cases.items()))
        known = matches.get(test_file)
        if known is not None and not known.cases:
            continue  # already selected whole
        if "" in cases:
            matches[test_file] = TestMatch(test_file, best, chains[:_MAX_REASONS])
            continue
        picked = {case: CaseMatch(case, r.confidence, r.chain) for case, r in cases.items()}
        if known is not None:  # tests whose own imports reach a module-level change (``impact_local.py``)
            best = "high" if "high" in (best, known.confidence) else "low"
            picked = {c.case: c for c in known.cases} | picked
        matches[test_file] = TestMatch(test_file, best, chains[:_MAX_REASONS], tuple(
            picked[case] for case in sorted(picked)))
    names = sorted({name for p in changed for name in walk.primary_names(p)})
    unresolved = tuple(p for p in changed if not walk.primary_names(p))
    broken = walk.unresolved_imports_of(names)
    tier: Literal["complete", "partial"] = (
        "complete" if not unresolved and not blunt.null_literal_imports and not broken else "partial")
    ordered = tuple(matches[k] for k in sorted(matches))
    fallbacks = tuple(f"{p}: {why}" for p, why in sharp.fallbacks)
    hint = _hint(tier, ordered, unresolved, blunt.null_literal_imports, len(broken))
    case_count = sum(len(m.cases) for m in ordered)
    hint = (f"Symbol-level selection: {case_count} test case(s) and {sum(1 for m in ordered if not m.cases)} whole "
            f"file(s) reach the changed definitions" + (f"; {len(fallbacks)} change(s) fell back to module-level "
                                                        "selection (see fallbacks)" if fallbacks else "")
            + (" (the walk stopped there: module-level selection held nearly every test file, all selected whole)"
               if sharp.stopped else "") + ". " + hint)
    return replace(blunt, changed_modules=tuple(names), unresolved_files=unresolved, confidence=tier,
                   matches=ordered, source_dirs=walk.source_dirs([m.test_file for m in ordered]),
                   unresolved_imports=broken[:UNCOVERED_CAP], changed_symbols=tuple(sharp.seeds),
                   reached=frozenset(sharp.reached_defs) if sharp.seeds and not sharp.stopped else None,
                   fallbacks=fallbacks, hint=hint)


def _go_selection(conn: sqlite3.Connection, graph: ImportGraph, changes: Mapping[str, Sequence[tuple[int, int]]],
                  read_lines: ReadLines | None) -> GoSelection:
    try:
        return select_go(conn, graph.id_of, graph.path_of, changes, read_lines or _unreadable)
    except Exception as exc:  # never narrower than is safe: every Go test package runs whole
        log.exception("Go test selection failed", files=len(changes))
        why = f"Go test selection failed ({type(exc).__name__})"
        return GoSelection(cases={package_dir(p): {"": Reach("high", (why,))} for p in graph.id_of
                                  if is_go_test(p)}, fallbacks=[(p, why) for p in sorted(changes)])


def _with_go(result: ImpactResult, go: GoSelection, targets: Sequence[str]) -> ImpactResult:
    """``result`` plus the Go targets ``go`` reached, as matches named by the target (cases: ``-run``)."""
    by_dir = {("" if t == "." else t): t for t in targets}
    matches = {m.test_file: m for m in result.matches}
    for directory, cases in sorted(go.cases.items()):
        target = by_dir.get(directory)
        if target is None:
            continue
        best: Confidence = "high" if any(r.confidence == "high" for r in cases.values()) else "low"
        chains = tuple(" → ".join(r.chain) for _, r in sorted(cases.items()))[:_MAX_REASONS]
        matches[target] = TestMatch(target, best, chains, () if "" in cases else tuple(
            CaseMatch(case, r.confidence, r.chain) for case, r in sorted(cases.items())))
    fallbacks = tuple(f"{p}: {why}" for p, why in go.fallbacks)
    picked = [matches[t] for t in sorted(set(matches) & set(targets))]
    hint = (f"Go: {sum(len(m.cases) for m in picked)} test function(s) and {sum(1 for m in picked if not m.cases)} "
            f"whole package(s) reach the changed Go code" + (f" ({len(fallbacks)} change(s) selected by package "
                                                             "imports, see fallbacks)" if fallbacks else "") + ".")
    rest = result.hint if result.matches or result.changed_modules or result.unresolved_files else ""
    return replace(result, matches=tuple(matches[k] for k in sorted(matches)), hint=f"{hint} {rest}".strip(),
                   changed_symbols=(*result.changed_symbols, *go.seeds), fallbacks=(*result.fallbacks, *fallbacks))


class _Walk:
    def __init__(self, conn: sqlite3.Connection, graph: ImportGraph, test_files: Sequence[str],
                 sources: dict[str, tuple[str, ...]] | None = None, read_lines: ReadLines | None = None) -> None:
        self.conn = conn
        #: A file's current lines; None: no test file is narrowed to the tests holding its imports.
        self.read_lines = read_lines
        #: test file → the repository files it imports directly (a memo).
        self.sources = sources if sources is not None else {}
        self.graph = graph
        self.tests = set(test_files)
        #: module key → confidence; path → (confidence, reasons)
        self.modules: dict[str, Confidence] = {}
        self.files: dict[str, tuple[Confidence, set[str]]] = {}
        #: Best confidence known per file id (a file already ``high`` cannot learn anything new).
        self.by_id: dict[int, Confidence] = {}
        #: Parent and child matches are always ``low``: each prefix and each package range is visited once.
        self.visited_prefixes: set[str] = set()
        self.visited_ranges: set[str] = set()
        #: What ``add`` was given, and what it made of it.
        self.added: set[str] = set()
        self.changed_modules: list[str] = []
        self.unresolved: list[str] = []
        #: The test files among ``files`` (every one of them: nothing can add to a module-level answer).
        self.tests_reached: set[str] = set()
        #: conftest.py → the confidence its tests were selected with (``_conftests`` runs after every ``add``).
        self.expanded: dict[str, Confidence] = {}
        #: Test files reached otherwise than by one of their imports (changed, under a conftest, the rest): whole.
        self.whole: set[str] = set()
        self.affected: Affected | None = None

    # -- changed files → module keys -----------------------------------------------------------------
    def _keys_of(self, path: str) -> list[str]:
        file_id = self.graph.id_of.get(path)
        return list(self.graph.keys_of.get(file_id, ())) if file_id is not None else []

    def _keys_of_missing(self, path: str) -> list[str]:
        """Keys of a file the index no longer has (deleted): what it was named by, from its path."""
        init_dirs = {p.rpartition("/")[0] for p in self.graph.id_of if p.endswith(("/__init__.py", "/__init__.pyi"))}
        info = detect(path)
        return [k for k, _ in file_keys(path, info.language if info else None, None, init_dirs)]

    def primary_names(self, path: str) -> list[str]:
        keys = self._keys_of(path) or self._keys_of_missing(path)
        return [_display(keys[0])] if keys else []

    def run(self, changed_files: Sequence[str], *, uncovered: bool) -> ImpactResult:
        self.add(changed_files)
        return self.finish(uncovered=uncovered)

    def add(self, changed_files: Iterable[str]) -> bool:
        """Walk the importers of more changed files (the walk is monotone: adding files one batch at a time
        reaches what adding them at once does). True when every test file is selected by now."""
        changed = sorted({p.strip().removeprefix("./") for p in changed_files if p.strip()} - self.added)
        self.added.update(changed)
        frontier: set[str] = set()
        for path in changed:
            keys = self._keys_of(path) or self._keys_of_missing(path)
            if not keys:
                self.unresolved.append(path)
                continue
            self.changed_modules.append(_display(keys[0]))  # the primary name; the others are aliases
            for key in keys:
                self.modules[key] = "high"
                frontier.add(key)
            self._reach(path, "high", "is a changed test file" if path in self.tests else "is a changed file")
        for _ in range(_MAX_LEVELS):
            if not frontier:
                break
            frontier = self._level(frontier)
        if len(self.tests_reached) < len(self.tests):
            self._conftests()
        return len(self.tests) >= _STOP_MIN_TESTS and (
            len(self.tests) - len(self.tests_reached) <= len(self.tests) // _NEARLY_ALL)

    def select_rest(self, why: str) -> None:
        """Select whole every test file not reached yet (what a walk that stopped early could have reached)."""
        for test in sorted(self.tests - self.tests_reached):
            self._reach(test, "low", why)

    def finish(self, *, uncovered: bool) -> ImpactResult:
        changed_modules, unresolved = self.changed_modules, self.unresolved
        self._conftests()
        nulls = self._null_literals()
        broken = self.unresolved_imports_of(changed_modules)
        narrowable = self._narrowable()
        matches = tuple(self._match(path, conf, tuple(sorted(reasons))[:_MAX_REASONS], narrowable)
                        for path, (conf, reasons) in sorted(self.files.items()) if path in self.tests)
        tier: Literal["complete", "partial"] = (
            "complete" if not unresolved and not nulls and not broken else "partial")
        gaps, total = self._uncovered() if uncovered else ((), 0)
        return ImpactResult(
            changed_modules=tuple(sorted(set(changed_modules))), unresolved_files=tuple(unresolved),
            confidence=tier, matches=matches, null_literal_imports=nulls,
            source_dirs=self.source_dirs([m.test_file for m in matches]),
            uncovered_modules=gaps, uncovered_total=total,
            hint=_hint(tier, matches, unresolved, nulls, len(broken)), unresolved_imports=broken[:UNCOVERED_CAP])

    def _narrowable(self) -> dict[int, list[ImportRow]]:
        """The imports of each test file reached through its imports only (candidates for ``_match``)."""
        if self.read_lines is None:
            return {}
        ids = [f for p in self.files if p in self.tests and p not in self.whole and p.endswith(".py")
               and (f := self.graph.id_of.get(p)) is not None]
        if not ids:
            return {}
        self.affected = Affected(self.modules, {keys[0] for p in self.files if (keys := self._keys_of(p))})
        return import_rows(self.conn, ids)

    def _match(self, path: str, confidence: Confidence, reasons: tuple[str, ...],
               narrowable: Mapping[int, list[ImportRow]]) -> TestMatch:
        """A test file reached only through imports inside its test functions needs only those tests
        (``impact_local.py``); any other the whole file."""
        file_id = self.graph.id_of.get(path)
        rows = narrowable.get(file_id) if file_id is not None else None
        if rows is None or self.affected is None or self.read_lines is None:
            return TestMatch(path, confidence, reasons)
        cases = local_cases(self.conn, file_id, rows, self.affected) if file_id is not None else None
        if not cases:
            return TestMatch(path, confidence, reasons)
        lines = self.read_lines(path)
        if not lines or self.affected.spelled(lines):
            return TestMatch(path, confidence, reasons)
        why = reasons[0] if reasons else "imports an affected module"
        return TestMatch(path, confidence, reasons, tuple(
            CaseMatch(case, confidence, (f"{path}::{case} (imports inside the test)", why)) for case in cases))

    def unresolved_imports_of(self, changed_modules: Sequence[str]) -> tuple[str, ...]:
        """Imports of the changed modules' top-level packages that name no file: the module naming or the
        repository layout left an edge the walk cannot follow (never assumed harmless)."""
        tops = sorted({m.split(".", 1)[0] for m in changed_modules})
        found = {f"{self.graph.path_of.get(file_id, '?')} imports {_display(key)}"
                 for top in tops for file_id, key in self.graph.unresolved.get(top, ())}
        return tuple(sorted(found))

    # -- the reverse walk ------------------------------------------------------------------------------
    def _reach(self, path: str, confidence: Confidence, reason: str, *, imported: bool = False) -> bool:
        """Record that ``path`` is affected; True if this is news (new file or upgraded to high).

        Reasons are kept for the file's best confidence only, so a ``high`` match explains itself.
        ``imported``: reached through one of its imports (a test file then may need only some of its tests).
        """
        if not imported and path in self.tests:
            self.whole.add(path)
        known = self.files.get(path)
        if known is None or (known[0] == "low" and confidence == "high"):
            self.files[path] = (confidence, {reason})
            if path in self.tests:
                self.tests_reached.add(path)
            return True
        if known[0] == confidence and len(known[1]) < 2 * _MAX_REASONS:
            known[1].add(reason)
        return False

    def _conftests(self) -> None:
        """pytest imports every ``conftest.py`` above a test file before the test: an affected conftest affects
        every test below its directory, with the conftest's own confidence."""
        for path, (confidence, _) in sorted(self.files.items()):
            directory, _, name = path.rpartition("/")
            if name != "conftest.py" or self.expanded.get(path) == confidence:
                continue
            self.expanded[path] = confidence
            for test in sorted(self.tests):
                if test.endswith(".py") and (not directory or test.startswith(directory + "/")):
                    self._reach(test, confidence, f"runs under {path} (affected conftest.py)")

    def _level(self, frontier: set[str]) -> set[str]:
        """One reverse-import step: every importer of a frontier module, by exact/parent/child match."""
        graph = self.graph
        grew: dict[int, Confidence] = {}

        def consider(file_id: int, kind: str, module: str, imported: str) -> None:
            exact_high = kind == "exact" and self.modules.get(module) == "high"
            confidence: Confidence = "high" if exact_high else "low"
            known = self.by_id.get(file_id)
            if known in (confidence, "high"):
                return
            via = "" if imported == module else f" of {_display(module)}"
            weak = ", itself reached by a package match" if kind == "exact" and not exact_high else ""
            if self._reach(graph.path_of[file_id], confidence, f"imports {_display(imported)} ({kind}{via}{weak})",
                           imported=True):
                self.by_id[file_id] = grew[file_id] = confidence

        for module in sorted(frontier):
            for file_id in (*graph.importers(module), *graph.alt_importers(module)):
                consider(file_id, "exact", module, module)
            for prefix in _parents(module):
                if prefix not in self.visited_prefixes:
                    self.visited_prefixes.add(prefix)
                    for file_id in graph.importers(prefix):
                        consider(file_id, "parent", module, prefix)
            if module in graph.packages and module not in self.visited_ranges:
                self.visited_ranges.add(module)
                for key in graph.submodule_imports(module):
                    for file_id in graph.importers(key):
                        consider(file_id, "child", module, key)
        next_frontier: set[str] = set()
        for file_id in sorted(grew):
            for key in graph.keys_of.get(file_id, ()):
                if self.modules.get(key) is None or (self.modules[key] == "low" and grew[file_id] == "high"):
                    self.modules[key] = grew[file_id]
                    next_frontier.add(key)
        return next_frontier

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
        wanted = sorted(set(test_files))
        missing = [p for p in wanted if p not in self.sources]
        for chunk in _chunks(missing):
            by_test: dict[str, set[str]] = {p: set() for p in chunk}
            for test, path in self.conn.execute(
                    f"SELECT DISTINCT f.path, rf.path FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
                    f"JOIN st_file rf ON rf.file_id IN (i.resolved_file_id, i.resolved_alt_file_id) "
                    f"WHERE f.path IN ({_marks(len(chunk))})", list(chunk)):
                by_test[str(test)].add(str(path))
            self.sources.update((p, tuple(sorted(found))) for p, found in by_test.items())
        return sorted({path for p in wanted for path in self.sources.get(p, ())})

    def source_dirs(self, test_files: Sequence[str]) -> tuple[str, ...]:
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


def _test_like(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.startswith(("test_", "conftest.")) or name.endswith("_test.py") or "/tests/" in f"/{path}"


def _hint(tier: str, matches: Sequence[TestMatch], unresolved: Sequence[str], nulls: int, broken: int = 0) -> str:
    if not matches and not unresolved and not broken:
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
    if broken:
        parts.append(f"{broken} import(s) of the changed package resolve to no file (see unresolved_imports); "
                     "tests reaching the change through them may be missing.")
    if tier == "complete" and not low:
        parts.append("Selection is complete: every match is an exact import chain.")
    return " ".join(parts)
