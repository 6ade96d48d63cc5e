"""The tests subsystem's one entry point: discover targets, start/poll/cancel runs, impact selection.

Runs execute in background threads, one at a time (a second run waits as ``queued``: two suites racing
for the same CPUs and caches would make both slower and flakier). Finished runs stay in memory, the most
recent ``keep_runs`` of them, and on disk (``run_store.py``), so their answers survive a restart; their logs
and reports are artifacts.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pathspec

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import TestsConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.core.logging import get_logger
from codeplane.core.tracing import span
from codeplane.testing.costs import CostHistory
from codeplane.testing.coverage_record import CoverageRecorder, changed_code
from codeplane.testing.coverage_select import CoverageSelection
from codeplane.testing.coverage_store import CoverageStore
from codeplane.testing.coverage_units import CurrentUnits
from codeplane.testing.discovery import (
    Discovery,
    MissingRunner,
    discover,
    inert_for,
    runner_not_found,
    universe_files,
)
from codeplane.testing.execution import RunExecutor, RunSettings
from codeplane.testing.impact import ImpactIndex, ImpactResult, TestMatch, parse_changes
from codeplane.testing.impact_jsalias import alias_maps, with_aliases
from codeplane.testing.impact_projects import by_project, unread_configs
from codeplane.testing.impact_reach import CoverageUse
from codeplane.testing.line_cache import LineCache
from codeplane.testing.model import RunCoverage, RunSnapshot, Target
from codeplane.testing.orphans import owner_token, reap_orphans
from codeplane.testing.run_store import RunHandle, RunStore
from codeplane.testing.runners.go import GO_NAME, go_run_pattern
from codeplane.testing.runners.js import js_name_pattern
from codeplane.testing.runs import RunRecord, new_run_id

log = get_logger(__name__)
#: Longest a cached discovery is reused while no file changed.
DISCOVERY_TTL_S = 30.0
#: Hard cap on CodePlane's own worker count (§11.6: N = min(#vCPUs, 8)).
MAX_WORKERS = 8
#: How long the symbol walk may run for a mutation delta's ``tests_affected`` (the write waits for it; past it the
#: change is selected through imports). On Django 29 of 30 one-method edits select more tests than the delta lists
#: by name, so the answer names files either way, and 0.25 s here cost each write ~150 ms (write_source p50 ~400 →
#: ~240 ms, ``benchmarks/write_real_code.py``); walks of up to ``impact_symbols.DEADLINE_AFTER_DEFS`` definitions
#: (every small repository's) finish whatever the clock says. ``inspect_affected_tests`` and runs walk unbounded.
DELTA_SELECTION_BUDGET_SEC = 0.1


def default_workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_WORKERS))


def prior_cost(root: Path, target: Target) -> float:
    """Estimated seconds for a target never timed here: grows with the test file's size (§11.6 default 1)."""
    if not target.path:
        return 1.0
    try:
        size = (root / target.path).stat().st_size
    except OSError:
        return 1.0
    return round(0.2 + size / 20_000, 3)


@dataclass(frozen=True)
class DiscoveryView:
    """Targets (with cost estimates) after ``paths``/``affected_by`` filters, and what is missing."""

    targets: tuple[Target, ...]
    total_targets: int
    runners: tuple[str, ...]
    missing: tuple[MissingRunner, ...]
    impact: ImpactResult | None = None


#: The hint of a selection in a repository where discovery found no test target at all.
NO_TARGETS_HINT = ("No test target was discovered in this repository, so no test could be selected: CodePlane runs "
                   "pytest, Jest, Vitest, go test, cargo test, Maven, Gradle, dotnet test, RSpec and mix test from "
                   "their config files, and any other tool through tests.custom (a command per file pattern).")
#: The hint of a selection from no changed file (``changed_since`` a revision the work tree still matches).
NOTHING_CHANGED_HINT = "no file changed, so no test was selected"

class TestingService:
    """Thread-safe. ``close`` cancels runs in flight and waits briefly for their processes to die."""

    __test__ = False  # not a pytest test class

    def __init__(self, root: Path, config: TestsConfig, layout: RepoLayout, artifacts: ArtifactStore, *,
                 impact: ImpactIndex | None = None, files_version: Callable[[], int | None] | None = None,
                 files_source: Callable[[], Sequence[str]] | None = None,
                 files_written_since: Callable[[int], Sequence[str] | None] | None = None,
                 refresh_files: Callable[[Sequence[str]], object] | None = None) -> None:
        """``files_version``: a number that changes whenever a file is added, removed or changed (the index
        epoch; None while unknown); with it discovery is cached until the next change. ``files_source``: the
        repository's files as the index knows them (saves walking the tree after every change).
        ``files_written_since``: the files rewritten after an epoch, None if any was added, removed or renamed
        (``discovery.written_since``): discovery then outlives an edit that cannot change it. ``refresh_files``:
        reindex those of some paths that differ from what the index saw (``IndexService.refresh_if_changed``)."""
        self.root, self.config, self.layout, self.artifacts, self.impact = root, config, layout, artifacts, impact
        self._refresh_files = refresh_files
        self._line_cache = LineCache(root)
        self.costs = CostHistory(layout.state_dir / "test_costs.db")
        self.store = RunStore(layout.test_runs_db, keep=config.keep_runs)
        self.coverage = CoverageStore(layout.state_dir / "coverage.db")
        # Runners and work dirs of runs a previous process did not finish (a crash, SIGKILL): nothing reads them.
        reap_orphans(layout.state_dir)
        shutil.rmtree(layout.state_dir / "testing", ignore_errors=True)
        self._owner = owner_token(layout.state_dir)
        self.workers = config.workers or default_workers()
        self._runs: OrderedDict[str, RunRecord] = OrderedDict()
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()
        self._slot = threading.Lock()
        self._files_version = files_version
        self._files_source = files_source
        self._files_written_since = files_written_since
        self._walk: tuple[int, list[str]] | None = None
        self._discovered: tuple[tuple[int | None, int], float, Discovery] | None = None
        #: Told of every finished run (the server's metrics); called on the run's thread.
        self._finish_listeners: list[Callable[[RunSnapshot], None]] = []

    def on_finish(self, listener: Callable[[RunSnapshot], None]) -> None:
        self._finish_listeners.append(listener)

    def recent_runs(self, limit: int = 20) -> list[RunSnapshot]:
        """The newest ``limit`` runs this server knows in memory (running ones included), newest first."""
        with self._lock:
            records = list(self._runs.values())
        return [r.snapshot() for r in reversed(records)][:limit]

    # -- discovery ---------------------------------------------------------------------------------
    def _files(self) -> list[str]:
        version = self._files_version() if self._files_version is not None else None
        with self._lock:
            cached = self._walk
        if version is not None and cached is not None and cached[0] == version:
            return cached[1]
        files = self._listed_files() if self._files_source is not None else universe_files(self.root, self.config)
        if version is not None:
            with self._lock:
                self._walk = (version, files)
        return files

    def _listed_files(self) -> list[str]:
        assert self._files_source is not None
        try:
            listed = self._files_source()
        except CodePlaneError:  # the index is not running: walk the tree ourselves
            return universe_files(self.root, self.config)
        exclude = pathspec.GitIgnoreSpec.from_lines(self.config.exclude) if self.config.exclude else None
        return sorted(p for p in listed if exclude is None or not exclude.match_file(p))

    def discovery(self) -> Discovery:
        """Projects, toolchains and targets with cost estimates.

        Reused while no file changed (index epoch), no duration was recorded and it is younger than
        ``DISCOVERY_TTL_S`` (toolchains live outside the repository: a newly installed runner shows up then).
        """
        version = self._files_version() if self._files_version is not None else None
        key = (version, self.costs.generation)
        with self._lock:
            cached = self._discovered
        if version is not None and cached is not None and time.monotonic() - cached[1] < DISCOVERY_TTL_S:
            if cached[0] == key:
                return cached[2]
            if self._unchanged_since(cached[0], key, cached[2]):
                with self._lock:
                    self._discovered = (key, cached[1], cached[2])
                return cached[2]
        with span("tests.discover"):
            found = discover(self.root, self.config, files=self._files())
        medians = self.costs.medians((t.runner, t.target_id) for t in found.targets)
        targets = tuple(replace(t, estimated_cost=round(medians.get((t.runner, t.target_id),
                                                                    prior_cost(self.root, t)), 3))
                        for t in found.targets)
        result = replace(found, targets=targets)
        if version is not None:
            with self._lock:
                self._discovered = (key, time.monotonic(), result)
        return result

    def _unchanged_since(self, known: tuple[int | None, int], now: tuple[int | None, int], found: Discovery) -> bool:
        """Whether ``found`` (discovered at epoch ``known[0]``) is still the answer at ``now``: only Python source
        that is no target was rewritten since (an edit of a module; ~25 ms of each Django write redid discovery)."""
        if self._files_written_since is None or known[0] is None or now[0] is None or known[1] != now[1]:
            return False
        try:
            written = self._files_written_since(known[0])
        except CodePlaneError:
            return False
        return written is not None and inert_for(found, written)

    def discover(self, paths: Sequence[str] | None = None, affected_by: Sequence[str] | None = None, *,
                 ranges: Mapping[str, Sequence[tuple[int, int]]] | None = None,
                 budget_sec: float | None = None) -> DiscoveryView:
        """Targets, optionally under ``paths`` and affected by ``affected_by`` (``path`` or ``path:12-30,41``).

        With changed lines (in the item or ``ranges``) a Python change selects test cases: pytest targets come
        back with ``cases`` set (``file::case`` node ids); other runners always run whole targets.
        ``budget_sec`` bounds the symbol walk (``ImpactIndex.affected``).
        """
        found = self.discovery()
        targets = list(found.targets)
        if paths:
            prefixes = [p.strip("/") for p in paths]
            targets = [t for t in targets if any(_under(t.target_id, p) or (t.path and _under(t.path, p))
                                                 for p in prefixes)]
        impact = None
        if affected_by is not None:
            impact = self._affected(affected_by, found, ranges=ranges, budget_sec=budget_sec)
            matches = {m.test_file: m for m in impact.matches}
            targets = [_with_cases(t, matches[_match_key(t)]) for t in targets if _match_key(t) in matches]
        return DiscoveryView(tuple(targets), len(found.targets), tuple(sorted({p.runner for p in found.projects})),
                             found.missing, impact)

    def _affected(self, changed: Sequence[str], found: Discovery, *, uncovered: bool = False,
                  ranges: Mapping[str, Sequence[tuple[int, int]]] | None = None,
                  budget_sec: float | None = None) -> ImpactResult:
        """``found``: the repository's discovery (every target, of any runner; the configs it could not read)."""
        if self.impact is None:
            raise CodePlaneError(ErrorCode.INDEX_NOT_READY, "impact selection needs the structural index",
                                 details={"reason": "no import facts available"})
        if not changed:  # (``changed_since`` a revision the work tree still matches)
            return ImpactResult((), (), "complete", (), hint=NOTHING_CHANGED_HINT)
        changes = _changes(changed, ranges)
        targets, test_files = found.targets, [t.path for t in found.targets if t.path]
        try:
            result = self.impact.affected(list(changes), test_files, uncovered=uncovered, ranges=changes,
                                          read_lines=self._lines, budget_sec=budget_sec,
                                          go_targets=[t.target_id for t in targets if t.runner == "go"])
        except LookupError as exc:
            raise CodePlaneError(ErrorCode.INDEX_NOT_READY, f"impact selection is unavailable: {exc}",
                                 details={"reason": str(exc)}) from exc
        # No target at all: not "no test imports the changed modules" (nothing here runs qs's tape tests).
        result = by_project(result, targets, list(changes)) if targets else replace(result, hint=NO_TARGETS_HINT)
        result = unread_configs(self._with_evidence(result, changes, test_files), found.unread, list(changes))
        with self.impact.read() as conn:  # imports through a JS runner's aliases (``impact_jsalias``)
            return with_aliases(result, conn, alias_maps(self.root, targets), list(changes), test_files)

    def _with_evidence(self, result: ImpactResult, changes: Mapping[str, Sequence[tuple[int, int]]],
                       test_files: Sequence[str]) -> ImpactResult:
        """``result`` sharpened by recorded coverage evidence (``coverage_select.py``); as it is when none was
        recorded. Evidence that cannot be read never narrows anything."""
        if self.impact is None or self.coverage.empty():
            return result
        try:
            with span("tests.coverage_select"), self.impact.read() as conn:
                return CoverageSelection(self.coverage, conn, CurrentUnits(conn, self.root), test_files).refine(
                    result, changes)
        except CodePlaneError:
            raise
        except Exception as exc:
            log.exception("coverage evidence could not be applied")
            return replace(result, coverage=CoverageUse(narrowed=False, note=f"coverage evidence could not be read "
                                                                              f"({type(exc).__name__})"))

    def _lines(self, path: str) -> list[str]:
        """A file's current lines for impact selection (decorators, fixtures); [] when unreadable."""
        return self._line_cache.lines(path)

    def inspect_affected(self, changed_files: Sequence[str], *,
                         ranges: Mapping[str, Sequence[tuple[int, int]]] | None = None) -> ImpactResult:
        return self._affected(changed_files, self.discovery(), uncovered=True, ranges=ranges)

    def tests_for(self, paths: Sequence[str], ranges: Mapping[str, Sequence[tuple[int, int]]] | None = None,
                  ) -> list[str]:
        """What to run after changes to ``paths`` (for the mutation delta's ``tests_affected``): target ids,
        or ``file::case`` node ids where ``ranges`` (changed lines, 1-based, in the new text) let the symbol
        graph pick the cases within :data:`DELTA_SELECTION_BUDGET_SEC` (else whole files, through imports).
        An empty list without a structural index to select by; raises what the selection raised (3004 while the
        index is built, 3005 when it did not catch up in time): the caller says the tests are unknown, not none
        (QA63: a timed-out wait answered "no test affected" and the agent skipped the tests).
        """
        if self.impact is None or not paths:
            return []
        view = self.discover(affected_by=paths, ranges=ranges, budget_sec=DELTA_SELECTION_BUDGET_SEC)
        return [node for t in view.targets for node in node_ids(t)]

    # -- runs --------------------------------------------------------------------------------------
    def start_run(self, targets: Sequence[str] | None = None, *, affected_by: Sequence[str] | None = None,
                  fail_fast: bool | None = None, timeout_sec: float | None = None,
                  coverage: bool = False, ranges: Mapping[str, Sequence[tuple[int, int]]] | None = None,
                  ) -> RunRecord:
        """Select, check runners (7001), and start a run in the background. Unknown target ids: 7005.

        ``targets`` are target ids, directories, or pytest node ids (``file::case``).
        """
        self._catch_up(targets)
        found = self.discovery()
        if coverage and self.impact is None:
            raise CodePlaneError(ErrorCode.INDEX_NOT_READY, "a coverage run needs the structural index",
                                 details={"reason": "coverage evidence maps to the index's definitions"})
        why_empty = selection_note = ""
        inconclusive = False
        if affected_by is not None:
            view = self.discover(affected_by=affected_by, ranges=ranges)
            selected = list(view.targets)
            selection_note = _module_level_note(affected_by, ranges)
            if not selected:
                shown = ", ".join(affected_by[:5]) + (f" and {len(affected_by) - 5} more" if len(affected_by) > 5
                                                       else "")
                hint = view.impact.hint if view.impact is not None else ""
                # A partial selection that holds no test is no proof that nothing reaches the change (QA31: 48
                # tests failed behind "no test target reaches tests/base.py" and a green run): say so, and the run
                # ends ``failed`` rather than ``passed`` (``RunRecord``).
                inconclusive = view.impact is not None and view.impact.confidence == "partial"
                reach = (f"the selection for {shown} is partial (what it cannot follow may reach tests) and holds "
                         "no test target, so nothing was tested: this is no pass" if inconclusive
                         else f"no test target reaches {shown}")
                why_empty = (f"nothing ran: {reach}" + (f". {hint}" if hint else "")
                             if affected_by else f"nothing ran: {NOTHING_CHANGED_HINT}")
        else:
            selected = self._select(found, targets)
        not_installed = runner_not_found(found, selected)
        if not_installed is not None:
            raise not_installed
        settings = RunSettings(
            workers=self.workers, target_timeout_s=self.config.target_timeout_sec,
            run_timeout_s=timeout_sec or self.config.run_timeout_sec,
            fail_fast=self.config.fail_fast if fail_fast is None else fail_fast,
            retry_failed=self.config.retry_failed,
            bytecode_dir=self.layout.pycache_dir if self.config.bytecode_cache else None, owner=self._owner)
        run_id = new_run_id()
        workroot = self.layout.state_dir / "testing" / run_id
        record = RunRecord(run_id, selected, workers=min(self.workers, max(len(selected), 1)),
                           fail_fast=settings.fail_fast, timeout_sec=settings.run_timeout_s, why_empty=why_empty,
                           selection_note=selection_note, inconclusive=inconclusive)
        after: Callable[[RunRecord], None] | None = None
        if coverage and self.impact is not None:
            settings, after = self._coverage_run(settings, workroot, run_id, selected,
                                                 _changes(affected_by or (), ranges) if affected_by else {})
        executor = RunExecutor(self.root, found, record, settings, costs=self.costs, store=self.artifacts,
                               workroot=workroot, before_finish=after)
        thread = threading.Thread(target=self._execute, args=(record, executor), daemon=True, name=f"cpl-{run_id}")
        with self._lock:
            self._runs[run_id] = record
            self._threads[run_id] = thread
            self._evict()
        with span("tests.start_run", targets=len(selected)):
            self._save(record)
            thread.start()
        return record

    def _coverage_run(self, settings: RunSettings, workroot: Path, run_id: str, selected: Sequence[Target],
                      changes: Mapping[str, Sequence[tuple[int, int]]],
                      ) -> tuple[RunSettings, Callable[[RunRecord], None]]:
        """Settings that make the run record coverage evidence, and the step that stores it and reports the
        coverage of the changed lines (``changes``) on the run."""
        assert self.impact is not None
        recorder = CoverageRecorder(self.coverage, self.impact.read, self.root)
        changed = None
        if any(changes.values()):
            with self.impact.read() as conn:
                changed = changed_code(CurrentUnits(conn, self.root), {p: r for p, r in changes.items() if r})
        setup = recorder.setup(workroot, changed)

        def collect(record: RunRecord) -> None:
            record.note("recording coverage evidence")
            try:
                with span("tests.coverage_record"):
                    record.set_coverage(recorder.collect(setup, run_id, selected, changed))
            except Exception as exc:  # the run's results stand; its answer says why no evidence came of it
                log.exception("coverage evidence not recorded", run_id=run_id)
                record.set_coverage(RunCoverage(tests=0, note=f"evidence not recorded: {type(exc).__name__}: {exc}"))
        return replace(settings, coverage=setup), collect

    def _catch_up(self, targets: Sequence[str] | None) -> None:
        """Files named as targets that another program created or deleted a moment ago, before the watcher said
        so, are reindexed now (D6): discovery follows the index, and a new test file answered 7005 naming another
        while a deleted one still ran. Directories are left to the watcher (a refresh would walk them whole)."""
        if not targets or self._refresh_files is None:
            return
        files = {f for t in targets if (f := t.split("::", 1)[0].strip().strip("/")) and not _is_dir(self.root / f)}
        # A path outside the repository, or no path at all (a name too long for the file system), is 7005's to name.
        with contextlib.suppress(CodePlaneError, OSError):
            self._refresh_files(sorted(files))

    def _select(self, found: Discovery, wanted: Sequence[str] | None) -> list[Target]:
        if not wanted:
            return list(found.targets)
        by_id = {t.target_id: t for t in found.targets}
        chosen: dict[str, Target] = {}
        cases: dict[str, set[str] | None] = {}  # target id → cases asked for (None: the whole target)
        unknown = []
        for item in wanted:
            key = item.strip().strip("/") or "."
            file, _, case = key.partition("::")
            if case and file in by_id and by_id[file].runner in _CASE_RUNNERS:
                chosen[file] = by_id[file]
                wanted_cases = cases.get(file, set())
                if wanted_cases is not None:  # else the whole target is already asked for
                    wanted_cases.add(case)
                    cases[file] = wanted_cases
                continue
            if key in by_id:
                chosen[key] = by_id[key]
                cases[key] = None
                continue
            under = [t for t in found.targets if key == "." or _under(t.target_id, key)]
            if not under:
                unknown.append(item)
            chosen.update((t.target_id, t) for t in under)
            cases.update((t.target_id, None) for t in under)
        if unknown:
            file, _, case = unknown[0].strip().strip("/").partition("::")
            if case and file in by_id:  # a case of a runner that cannot run one case alone (cargo, ...)
                raise CodePlaneError(ErrorCode.TEST_TARGET_NOT_FOUND, f"{by_id[file].runner} targets run whole: "
                                     f"{unknown[0]!r} names a case, which only pytest, go test, jest and vitest "
                                     f"run alone; run {file!r}", details={"unknown": unknown[:20], "target": file})
            close = _closest(file, sorted(by_id))
            hint = f"did you mean {' or '.join(close)}?" if close else \
                "test targets are test files or directories (discover_test_targets lists them)"
            raise CodePlaneError(ErrorCode.TEST_TARGET_NOT_FOUND, f"no test target {unknown[0]!r}; {hint}",
                                 details={"unknown": unknown[:20], "known_count": len(by_id), "closest": close})
        return [_only(chosen[k], sorted(cases[k] or ())) for k in sorted(chosen)]

    def _execute(self, record: RunRecord, executor: RunExecutor) -> None:
        with self.store.beating(record.run_id), self._slot:
            executor.execute()
        self._save(record)
        snapshot = record.snapshot()
        for listener in self._finish_listeners:
            try:
                listener(snapshot)
            except Exception:  # an observer must never break a run's bookkeeping
                log.exception("test run listener failed", run_id=record.run_id)

    def _save(self, record: RunRecord) -> None:
        try:
            self.store.save(record.snapshot())
        except Exception:  # the run's answer is in memory; only its life after a restart is lost
            log.exception("cannot store test run", run_id=record.run_id)

    def _evict(self) -> None:
        finished = [run_id for run_id, rec in self._runs.items() if rec.finished]
        while len(self._runs) > self.config.keep_runs and finished:
            run_id = finished.pop(0)
            self._runs.pop(run_id, None)
            self._threads.pop(run_id, None)

    def get_run(self, run_id: str) -> RunHandle:
        with self._lock:
            record: RunHandle | None = self._runs.get(run_id)
        if record is None:
            record = self.store.load(run_id)
        if record is None:
            raise CodePlaneError(ErrorCode.TEST_RUN_NOT_FOUND, f"no test run {run_id!r} (the last "
                                 f"{self.config.keep_runs} runs are kept)", details={"run_id": run_id})
        return record

    def cancel(self, run_id: str) -> RunHandle:
        """Ask ``run_id`` to stop; a run that already ended stays as it ended (nothing is requested of it)."""
        record = self.get_run(run_id)
        if not record.finished:
            record.cancel_requested.set()
        return record

    def active_runs(self) -> list[str]:
        with self._lock:
            return [run_id for run_id, rec in self._runs.items() if not rec.finished]

    def status(self) -> dict[str, object]:
        with self._lock:
            runs = list(self._runs.values())
        # Kept on disk too: runs of an earlier server process are answered (it said 0 after every restart).
        return {"workers": self.workers, "runs_kept": max(len(runs), self.store.count()),
                "active_runs": [r.run_id for r in runs if not r.finished]}

    def close(self, timeout: float = 10.0) -> None:
        with self._lock:
            records = list(self._runs.values())
            threads = list(self._threads.values())
        for record in records:
            if not record.cancel_requested.is_set():
                record.cancel_reason = "cancelled: the server stopped while it ran (cpl down, a signal)"
            record.cancel_requested.set()
        for thread in threads:
            thread.join(timeout=timeout)
        self.costs.close()
        self.store.close()
        self.coverage.close()


#: More selected cases than this in one file run the whole file. The runner hands pytest the file once and the
#: events plugin deselects the other cases (``$CODEPLANE_PYTEST_SELECT``), so the bound is only the answer's size.
MAX_CASES_PER_TARGET = 400
#: A target's ``cmd`` (shown, to run it alone) names at most this many node ids; beyond, the whole file.
MAX_CMD_CASES = 40


#: Go selects cases by one ``-run`` regular expression, whose length is the only cost.
MAX_GO_CASES = 400
#: Runners that can run some cases of a target: pytest node ids, ``go test -run``, ``--testNamePattern``.
_CASE_RUNNERS = frozenset({"pytest", "go", "jest", "vitest"})


def _only(target: Target, cases: Sequence[str]) -> Target:
    """``target`` running only ``cases`` (pytest node id parts, Go test function names); all of them when
    ``cases`` is empty."""
    if not cases or target.runner not in _CASE_RUNNERS:
        return target
    last = target.cmd[-1] if target.cmd else None
    if target.runner == "go":
        if len(cases) > MAX_GO_CASES or not all(GO_NAME.match(c.split("/", 1)[0]) for c in cases):
            return target
        cmd = (*target.cmd[:-1], "-run", go_run_pattern(cases), last) if last == target.selector else target.cmd
        return replace(target, cases=tuple(sorted(set(cases))), cmd=cmd)
    if len(cases) > MAX_CASES_PER_TARGET:
        return target
    if target.runner in ("jest", "vitest"):
        pattern = ("--testNamePattern", js_name_pattern(cases))
        cmd = (*target.cmd[:-1], *pattern, last) if last == target.selector else target.cmd
        return replace(target, cases=tuple(sorted(set(cases))), cmd=cmd)
    nodes = tuple(f"{target.selector}::{c}" for c in cases)
    cmd = (*target.cmd[:-1], *nodes) if last == target.selector and len(nodes) <= MAX_CMD_CASES else target.cmd
    return replace(target, cases=tuple(cases), cmd=cmd)


def _match_key(target: Target) -> str:
    """What impact matches name a target by: its file, or (Go packages) its id."""
    return target.path or (target.target_id if target.runner == "go" else "")


def _with_cases(target: Target, match: TestMatch) -> Target:
    return _only(target, [c.case for c in match.cases])


def node_ids(target: Target) -> list[str]:
    """``file::case`` per selected case, or the target id."""
    return [f"{target.target_id}::{c}" for c in target.cases] or [target.target_id]


def _changes(items: Sequence[str], ranges: Mapping[str, Sequence[tuple[int, int]]] | None,
             ) -> dict[str, list[tuple[int, int]]]:
    """Every changed path (``path`` or ``path:12-30,41``) → its changed lines (empty: none given)."""
    paths, parsed = parse_changes(items)
    for path, extra in (ranges or {}).items():
        parsed.setdefault(path, []).extend(extra)
    return {p: parsed.get(p, []) for p in dict.fromkeys(paths)}


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def _closest(name: str, known: Sequence[str]) -> list[str]:
    """The known ids nearest ``name`` (a typo): the best, and any as near; ids sharing ``tests/test_`` all look
    alike, so only those within a hair of the best count."""
    scored = sorted(((difflib.SequenceMatcher(None, name, k).ratio(), k) for k in known), reverse=True)
    if not scored or scored[0][0] < 0.8:
        return []
    return sorted(k for ratio, k in scored[:3] if ratio >= scored[0][0] - 0.02)


def _module_level_note(affected_by: Sequence[str], ranges: Mapping[str, Sequence[tuple[int, int]]] | None) -> str:
    """What the answer says of Python files selected at module level because no changed line is known (given
    without lines and with no uncommitted change: a committed one): every test importing them ran, silently.
    A file the diff names (``changed_since``, an uncommitted change) has its lines."""
    paths, given = parse_changes(affected_by)
    whole = sorted({p for p in paths if p.endswith((".py", ".pyi")) and not given.get(p) and not (ranges or {}).get(p)})
    if not whole:
        return ""
    shown = ", ".join(whole[:3]) + (f" and {len(whole) - 3} more" if len(whole) > 3 else "")
    return (f"{shown}: no changed line known (no uncommitted change), so every test importing it was selected; "
            "to select by symbol, name the lines (path:12-30) or changed_since (the revision before the change)")


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # (ENAMETOOLONG and the like: not a directory of this tree)
        return False
