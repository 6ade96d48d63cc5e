"""Impact-aware test selection (§11.9): which tests a change reaches, as one :class:`ImpactResult`.

:class:`ImpactIndex` is the entry point. Changed files without changed lines (and what the finer walks cannot
follow) are selected at module level by the reverse import walk (``impact_modules.py``); a Python file with
changed lines at symbol level (``impact_symbols.py``), the two merged here (a whole file wins); a Go file with
changed lines by ``impact_go.py``, as matches named by the Go target.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from typing import Literal

from codeplane.core.collector import collector_paused
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.core.paths import canonicalize
from codeplane.testing.impact_code import ReadLines
from codeplane.testing.impact_go import GoSelection, is_go_test, select_go
from codeplane.testing.impact_goreceivers import package_dir
from codeplane.testing.impact_graph import ImportGraph, build_graph, current_epoch
from codeplane.testing.impact_models import (
    MAX_REASONS,
    UNCOVERED_CAP,
    CaseMatch,
    Confidence,
    ImpactResult,
    TestMatch,
)
from codeplane.testing.impact_modules import ModuleWalk, selection_hint
from codeplane.testing.impact_reach import Reach, SymbolSelection
from codeplane.testing.impact_symbols import SymbolWalk
from codeplane.testing.impact_walkfacts import CodeStringScans, WalkFacts

__all__ = ["CaseMatch", "ImpactIndex", "ImpactResult", "ReadConnection", "TestMatch", "parse_changes"]

ReadConnection = Callable[[], AbstractContextManager[sqlite3.Connection]]
log = get_logger(__name__)


class ImpactIndex:
    """Answers impact queries over the index's read connection (a consistent snapshot per query).

    Thread-safe. The reverse import graph is cached per index epoch (``impact_graph.py``).
    """

    def __init__(self, read: ReadConnection) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._graph: ImportGraph | None = None
        self._facts: WalkFacts | None = None
        #: id of a ``WalkFacts`` → how many walks hold it now (``_facts_for``).
        self._walkers: dict[int, int] = {}
        self._scans = CodeStringScans()

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
        graph = build_graph(conn, epoch, cached)
        with self._lock:
            self._graph = graph
        return graph

    @contextmanager
    def _facts_for(self, graph: ImportGraph) -> Iterator[WalkFacts]:
        """The symbol walk's per-epoch facts (definitions per file...), shared by the walks of one epoch, held for
        the caller's walk; what the files an edit left alone answered is carried from the previous epoch's
        (``WalkFacts.carry``), whose maps are taken over when no walk holds them any more."""
        with self._lock:
            facts = self._facts
            if facts is None or graph.epoch is None or facts.epoch != graph.epoch:
                fresh = WalkFacts(graph.epoch, graph.keys_of, self._scans)
                if facts is not None and facts.epoch is not None and facts.epoch == graph.carried_from:
                    fresh.carry(facts, graph.changed, graph.path_of, take=self._walkers.get(id(facts), 0) == 0)
                facts = fresh
                if graph.epoch is not None:
                    self._facts = facts
            self._walkers[id(facts)] = self._walkers.get(id(facts), 0) + 1
        try:
            yield facts
        finally:
            with self._lock:
                left = self._walkers.pop(id(facts)) - 1
                if left:
                    self._walkers[id(facts)] = left

    def _module_walk(self, conn: sqlite3.Connection, graph: ImportGraph, facts: WalkFacts,
                     test_files: Sequence[str], read_lines: ReadLines | None) -> ModuleWalk:
        """A module walk with the epoch's memos of what each test file imports (directly: ``source_dirs``; inside
        its functions: narrowing), shared by the walks of one epoch like the graph (fresh ones without an epoch)."""
        if graph.epoch is None:
            return ModuleWalk(conn, graph, test_files, {}, read_lines, local_imports={})
        return ModuleWalk(conn, graph, test_files, facts.sources, read_lines, local_imports=facts.local_imports)

    def affected(self, changed_files: Sequence[str], test_files: Sequence[str], *, uncovered: bool = False,
                 ranges: Mapping[str, Sequence[tuple[int, int]]] | None = None,
                 read_lines: ReadLines | None = None, go_targets: Sequence[str] = (),
                 budget_sec: float | None = None) -> ImpactResult:
        """Test files (among ``test_files``) affected by changes to ``changed_files``.

        A Python file with changed line ranges (1-based, inclusive, in the file as it is now) is selected at
        symbol level (``impact_symbols.py``: test cases, each with its chain); any other file, and whatever
        that walk cannot follow, at module level. ``read_lines`` gives a file's current lines (decorators:
        fixtures, autouse, hooks); without it every fixture candidate selects its whole scope.

        ``go_targets``: the Go test targets (package directories, ``.`` for the root); a changed ``.go`` file
        selects their test functions (``impact_go.py``), as matches named by the target.

        ``budget_sec``: how long the symbol walk may run; past it, the changes it started from are selected at
        module level (wider, never narrower), each with that reason.

        Raises ``LookupError`` when the index holds no import facts, and whatever the read connection raises
        (3004 while the index is not running).
        """
        everything = sorted({p.strip().removeprefix("./") for p in changed_files if p.strip()})
        # Go changes with Go targets to select are Go's (below); Python's module walk cannot name them.
        changed = [p for p in everything if not (go_targets and p.endswith(".go"))]
        # A walk fills its epoch's memos with objects that all stay alive: collecting meanwhile frees nothing.
        with self._read() as conn, collector_paused():
            exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'st_import'")
            if exists.fetchone() is None:
                raise LookupError("the index has no import facts (structural index not built)")
            graph = self._graph_for(conn)
            sharp = {p: tuple(ranges[p]) for p in changed if ranges and ranges.get(p) and p in graph.id_of
                     and p.endswith((".py", ".pyi"))}
            with self._facts_for(graph) as facts:
                if not sharp:
                    result = self._module_walk(conn, graph, facts, test_files, read_lines).run(
                        changed, uncovered=uncovered)
                else:
                    result = self._sharp(conn, graph, facts, changed, sharp, test_files=test_files, uncovered=uncovered,
                                         read_lines=read_lines, budget_sec=budget_sec)
            go = {p: tuple((ranges or {}).get(p, ())) for p in everything if p.endswith(".go")}
            if go and go_targets:
                result = _with_go(result, _go_selection(conn, graph, go, read_lines), go_targets)
            return result

    def _sharp(self, conn: sqlite3.Connection, graph: ImportGraph, facts: WalkFacts, changed: Sequence[str],
               sharp: Mapping[str, Sequence[tuple[int, int]]], *, test_files: Sequence[str], uncovered: bool,
               read_lines: ReadLines | None, budget_sec: float | None = None) -> ImpactResult:
        walk = self._module_walk(conn, graph, facts, test_files, read_lines)
        # The module-level part is walked as the symbol walk falls back, so that walk can stop once every
        # test file is selected whole: nothing it could still find would change the answer (Django: a change
        # deep in the framework reaches a URL conf's import-time call early, then walks thousands more).
        whole = walk.add([p for p in changed if p not in sharp])
        try:
            symbols = SymbolWalk(conn, graph.id_of, graph.path_of, test_files, read_lines or _unreadable,
                                 facts=facts)
            symbols.saturated = walk.add
            symbols.deadline = time.monotonic() + budget_sec if budget_sec is not None else None
            selection = symbols.run(sharp) if not whole else SymbolSelection(stopped=True)
        except Exception as exc:  # a walk that fails must never narrow the selection
            # Facts the walk did not expect: select all of it at module level, and say so.
            log.exception("symbol-level impact selection failed", files=len(sharp))
            selection = SymbolSelection(fallbacks=[(p, f"symbol-level selection failed ({type(exc).__name__})")
                                                   for p in sorted(sharp)])
        walk.add(p for p, _ in selection.fallbacks)
        walk.symbol_level(sorted(sharp), reached=bool(selection.cases) or selection.stopped)
        if selection.stopped:
            walk.select_rest("selected whole: the symbol walk stopped once module-level selection held (nearly) "
                             "every test file")
        result = walk.finish(uncovered=uncovered)
        return _merge(result, selection, walk, changed)


_RANGES = re.compile(r"^(?P<path>.+?):(?P<ranges>\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)$")


def parse_changes(items: Sequence[str]) -> tuple[list[str], dict[str, list[tuple[int, int]]]]:
    """``path`` or ``path:12-30,41`` (changed lines of the file as it is now) → (paths, line ranges by path).
    A path outside the repository (absolute, ``..``) is refused (5001): ``../x.py`` was taken for ``x``; a
    range that is no range (``x.py:abc``, ``x.py:40-20``, line 0) with 1003, as it was taken for a file or
    for no line."""
    paths: list[str] = []
    ranges: dict[str, list[tuple[int, int]]] = {}
    for item in items:
        text = item.strip()
        found = _RANGES.match(text)
        if found is None:
            if _LOOKS_RANGED.match(text):
                raise _bad_range(item, "is not a line range (path:12-30,41)")
            paths.append(str(canonicalize(text)))
            continue
        path = str(canonicalize(found["path"]))
        paths.append(path)
        for part in found["ranges"].split(","):
            start, _, end = part.partition("-")
            first, last = int(start), int(end or start)
            if first < 1 or last < first:
                raise _bad_range(item, f"has the range {part}: lines count from 1, the end not before the start")
            ranges.setdefault(path, []).append((first, last))
    return paths, ranges


#: ``file.py:abc``, ``file.py:12-``: a file with a suffix, then a colon and what cannot be a file name's rest.
_LOOKS_RANGED = re.compile(r"^.+\.\w+:[^/]*$")


def _bad_range(item: str, why: str) -> CodePlaneError:
    return CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{item!r} {why}", details={"item": item})


def _unreadable(path: str) -> Sequence[str]:
    return ()


def _merge(blunt: ImpactResult, sharp: SymbolSelection, walk: ModuleWalk, changed: Sequence[str]) -> ImpactResult:
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
            matches[test_file] = TestMatch(test_file, best, chains[:MAX_REASONS])
            continue
        picked = {case: CaseMatch(case, r.confidence, r.chain) for case, r in cases.items()}
        if known is not None:  # tests whose own imports reach a module-level change (``impact_local.py``)
            best = "high" if "high" in (best, known.confidence) else "low"
            picked = {c.case: c for c in known.cases} | picked
        matches[test_file] = TestMatch(test_file, best, chains[:MAX_REASONS], tuple(
            picked[case] for case in sorted(picked)))
    names = sorted({name for p in changed for name in walk.primary_names(p)})
    unresolved = tuple(p for p in changed if not walk.primary_names(p))
    broken = walk.unresolved_imports_of(names)
    tier: Literal["complete", "partial"] = (
        "complete" if not unresolved and not blunt.null_literal_imports and not broken
        and blunt.confidence == "complete" else "partial")  # the module walk's partial: a change no test reached
    ordered = tuple(matches[k] for k in sorted(matches))
    fallbacks = tuple(f"{p}: {why}" for p, why in sharp.fallbacks)
    hint = selection_hint(tier, ordered, unresolved, blunt.null_literal_imports, len(broken), symbol_level=True)
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
        chains = tuple(" → ".join(r.chain) for _, r in sorted(cases.items()))[:MAX_REASONS]
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
