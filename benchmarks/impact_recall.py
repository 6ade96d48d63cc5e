"""Impact selection on real code: recall and precision over injected faults in click, attrs, requests, flask,
packaging.

Each fault is a real edit of one definition, passed to CodePlane the way an edit reaches it (the file and its
changed lines, §11.9 + issue 22):

- ``function`` / ``method``: ``raise RuntimeError`` as the first statement of a module-level function / method;
- ``class``: the same in a dunder method (``__init__``, ``__eq__``, ``__repr__``...), which runs without being
  named;
- ``constant``: a module-level ``NAME = <literal>`` gets another value;
- ``fixture``: ``raise`` as the first statement of a function in a ``conftest.py``.

For every fault the whole suite runs. A fault that breaks no test is skipped (the suite does not see it); for
the others every failing case (failing under the fault, failing again when re-run alone on the faulty tree,
passing on the clean tree when run alone too) must be selected: **recall must be 100 %**. Precision is
measured at test-file level and at test-case level (a whole-file selection counts all of that file's cases; a
parametrized test all of its instances). Selection time is the ``affected`` call. For attrs and click the
selected cases also run on the faulty tree, timed against the full suite on the same faulty tree.

Each selection is measured twice: by the static graph alone, and with coverage evidence (issue 22): before the
first fault, one ``run_test_targets(coverage=true)``-equivalent run of the whole suite on the clean tree records
which definitions each test ran; each fault is then selected through the testing service, which applies that
evidence (``coverage_select.py``). The faults are reverted after each one, so the evidence stays fresh.

Sdists come from PyPI (``_common.sdist``) into ``benchmarks/.cache``; each gets a private copy under
``benchmarks/.cache/impact/`` with a git commit of the pristine tree and an editable install in its ``.venv``.
Run: ``uv run python benchmarks/impact_recall.py [--faults-per-project 16] [--projects click,attrs]``.

What the suite says about a fault does not depend on the selector: every run writes, per project, the clean
run's cases and each fault's confirmed failing cases to ``benchmarks/.cache/impact/<project>-failing.json``.
``--reuse-failing`` reads them back instead of running the suite under each fault (the coverage recording still
runs), so a change to the selector is measured A/B in minutes; recall is still checked against the same failing
cases. A test file that times out or errors whole under a fault names no failing case (``file::(timeout)``); a
selection holding only some of its cases catches it when those cases, run on the faulty tree, fail or time out
too. ``--explain`` prints, per fault, the selected test files none of whose cases failed and the first reason
each was selected for.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import CACHE, sdist
from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.testing import ImpactIndex, TestingService
from codeplane.testing.impact import ImpactResult
from codeplane.testing.line_cache import LineCache
from codeplane.testing.runners.pytest_runner import read_pytest_ini
from codeplane.testing.runs import RunRecord

WORK = CACHE / "impact"
PROJECTS: dict[str, tuple[str, tuple[str, ...]]] = {
    # click 8.3.1's test_basic.py passes a generator to parametrize, an error under pytest 9: the whole file errored
    # in the clean run, so no fault could be seen failing it (its cases were neither scored nor checked for recall)
    "click": ("8.3.1", ("pytest<9",)),
    "attrs": ("25.4.0", ("cloudpickle", "hypothesis", "pympler", "pytest")),
    "requests": ("2.32.5", ("pytest", "pytest-httpbin==2.1.0", "httpbin~=0.10.0", "pytest-mock", "trustme",
                            "werkzeug", "PySocks")),  # its SOCKS proxy tests import PySocks
    # flask 3.1.2's conftest uses monkeypatch.notset, gone in pytest 9
    "flask": ("3.1.2", ("pytest<9", "asgiref", "greenlet", "python-dotenv")),
    # Typed, with getattr(self, <computed>) dispatch and singledispatch registrations: shapes the four above lack.
    "packaging": ("24.2", ("pytest", "pretend")),
}
#: Projects whose selected cases are also run and timed (issue 22: ≤ 25 % of the full suite on attrs).
TIMED_RUNS = ("attrs", "click")
KINDS = ("function", "method", "class", "constant", "fixture")
#: Selection time only (issue 22: ≤ 100 ms on Django): its suite runs under its own runner, not timed here.
DJANGO = ("django", "5.2.8")
RAISE = "raise RuntimeError('codeplane injected fault')"


@dataclass(frozen=True)
class Fault:
    kind: str
    path: str
    name: str
    #: (old line range to replace, 1-based inclusive, new lines) and the changed lines of the new text.
    start: int
    end: int
    new_lines: tuple[str, ...]
    changed: tuple[int, int]


@dataclass
class Outcome:
    project: str
    fault: Fault
    failing: set[str]  # failing case node ids
    selected_files: set[str]
    selected_nodes: set[str]
    #: Cases of the clean run that the selection covers (a whole file: all of its cases).
    selected_cases: int
    query_ms: float
    confidence: str
    fallbacks: int
    missed: list[str] = field(default_factory=list)
    run_s: float | None = None
    run_caught: bool | None = None
    #: The full suite's time on the same faulty tree (failures cost time too: the fair baseline).
    full_faulty_s: float | None = None
    #: The baseline: what module-level selection (imports only, no changed lines) picks.
    module_files: set[str] = field(default_factory=set)
    #: Failing cases when a file that errors (collection: an import fails) counts all of its clean-run cases:
    #: none of them can pass. The strict count (``failing``) counts such a file as one case.
    failing_expanded: int = 0
    #: The full suite's time on the clean tree.
    full_clean_s: float | None = None
    #: The same selection with coverage evidence applied.
    cov_files: set[str] = field(default_factory=set)
    cov_cases: int = 0
    cov_query_ms: float = 0.0
    cov_narrowed: bool = False
    cov_missed: list[str] = field(default_factory=list)
    cov_run_s: float | None = None


def checkout(name: str, *, venv: bool = True) -> Path:
    version, deps = PROJECTS[name] if name in PROJECTS else (DJANGO[1], ())
    root = WORK / f"{name}-{version}"
    if not root.is_dir():
        WORK.mkdir(parents=True, exist_ok=True)
        shutil.copytree(sdist(name, version), root)
        if not read_pytest_ini(root) and not (root / "pytest.ini").exists():
            # An sdist without a pytest config (packaging's) would run under the first one above it: this clone's
            # own pyproject.toml, whose ``-n 2`` made every test file error in the baseline.
            (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=bench", "-c", "user.email=bench@localhost",
                                                     "commit", "-q", "-m", "pristine"]):
            subprocess.run(["git", *args], cwd=root, check=True)
    # An interrupted run's injected fault is undone here.
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=root, check=True)
    if not venv:
        return root
    env_dir = root / ".venv"
    if not (env_dir / "bin" / "pytest").exists():
        uv = shutil.which("uv") or "uv"
        subprocess.run([uv, "venv", "-q", str(env_dir), "--python",
                        f"{sys.version_info.major}.{sys.version_info.minor}"], check=True)
        subprocess.run([uv, "pip", "install", "-q", "--python", str(env_dir / "bin" / "python"), "-e", str(root),
                        *deps], check=True)
    return root


def _first_statement(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt | None:
    body = node.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        if len(body) == 1:
            return None
        first = body[1]
    return None if first.lineno == node.lineno else first


def _raise_fault(kind: str, rel: str, node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str],
                 ) -> Fault | None:
    first = _first_statement(node)
    if first is None:
        return None
    text = lines[first.lineno - 1]
    indent = text[:len(text) - len(text.lstrip())]
    return Fault(kind, rel, node.name, first.lineno, first.lineno - 1, (indent + RAISE + "\n",),
                 (first.lineno, first.lineno))


def _constant_fault(rel: str, node: ast.Assign, lines: list[str]) -> Fault | None:
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name) or not node.targets[0].id.isupper():
        return None
    value = node.value
    if not isinstance(value, ast.Constant) or node.lineno != node.end_lineno or value.value is None:
        return None
    old = value.value
    new: object
    if isinstance(old, bool):
        new = not old
    elif isinstance(old, int):
        new = old + 7
    elif isinstance(old, float):
        new = old * 2 + 1
    elif isinstance(old, str):
        new = old + "_cp" if old else "cp"
    else:
        return None
    text = lines[node.lineno - 1]
    replaced = text[:value.col_offset] + repr(new) + text[value.end_col_offset or 0:]
    return Fault("constant", rel, node.targets[0].id, node.lineno, node.lineno, (replaced,),
                 (node.lineno, node.lineno))


def candidates(root: Path) -> dict[str, list[Fault]]:
    """Faults by kind, public names first, spread over modules (round robin by file)."""
    by_kind: dict[str, list[list[Fault]]] = {k: [] for k in KINDS}
    sources = sorted((root / "src").rglob("*.py"))
    conftests = sorted(p for p in (root / "tests").rglob("conftest.py"))
    for path in [*sources, *conftests]:
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        tree = ast.parse(text)
        found: dict[str, list[Fault]] = {k: [] for k in KINDS}
        conftest = rel.endswith("conftest.py")
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                fault = _raise_fault("fixture" if conftest else "function", rel, node, lines)
                if fault is not None:
                    found[fault.kind].append(fault)
            elif isinstance(node, ast.ClassDef) and not conftest:
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        dunder = item.name.startswith("__") and item.name.endswith("__")
                        fault = _raise_fault("class" if dunder else "method", rel, item, lines)
                        if fault is not None:
                            found[fault.kind].append(replace_name(fault, f"{node.name}.{item.name}"))
            elif isinstance(node, ast.Assign) and not conftest:
                fault = _constant_fault(rel, node, lines)
                if fault is not None:
                    found["constant"].append(fault)
        for kind, faults in found.items():
            faults.sort(key=lambda f: (f.name.rsplit(".", 1)[-1].startswith("_") and kind != "class", f.start))
            if faults:
                by_kind[kind].append(faults)
    return {kind: list(_round_robin(groups)) for kind, groups in by_kind.items()}


def replace_name(fault: Fault, name: str) -> Fault:
    return Fault(fault.kind, fault.path, name, fault.start, fault.end, fault.new_lines, fault.changed)


def _round_robin(groups: list[list[Fault]]) -> Iterator[Fault]:
    depth = max((len(g) for g in groups), default=0)
    for rank in range(depth):
        for group in groups:
            if rank < len(group):
                yield group[rank]


def interleave(by_kind: dict[str, list[Fault]]) -> Iterator[Fault]:
    iterators = {k: iter(v) for k, v in by_kind.items()}
    while iterators:
        for kind in list(iterators):
            fault = next(iterators[kind], None)
            if fault is None:
                del iterators[kind]
            else:
                yield fault


def wait(record: RunRecord) -> RunRecord:
    while not record.finished:
        record.wait(record.version, 1.0)
    return record


def case_results(record: RunRecord) -> tuple[set[str], set[str]]:
    """(failing node ids, every case's node id) of a finished run; a file that errored counts as one failing
    case."""
    failing: set[str] = set()
    every: set[str] = set()
    for target in record.snapshot().targets:
        final = target.final
        if final is None:
            continue
        path = target.target.target_id
        every |= {_node(path, c.case_id) for c in final.cases}
        failing |= {_node(path, c.case_id) for c in final.cases if c.failing}
        if final.outcome in ("error", "timeout") and not any(c.failing for c in final.cases):
            failing.add(f"{path}::({final.outcome})")
    return failing, every


def _node(path: str, case_id: str) -> str:
    return case_id if case_id.startswith(path + "::") else f"{path}::{case_id}"


def covered(node: str, selected: set[str]) -> bool:
    """A failing case is covered by its file, its class or itself (parametrized: ``test_x[1]`` by ``test_x``)."""
    file = node.split("::", 1)[0]
    if file in selected:
        return True
    base = node.split("[", 1)[0]
    return any(base == s or base.startswith(s + "::") for s in selected)


def _caught_whole(tests: TestingService, broken: set[str], selected: set[str]) -> set[str]:
    """The failing nodes of files that timed out or errored whole (``file::(timeout)``) which ``selected``
    catches with only some of the file's cases: run on the faulty tree, those fail or time out too."""
    caught = set()
    for node in sorted(n for n in broken if "::(" in n and not covered(n, selected)):
        prefix = node.split("::", 1)[0] + "::"
        cases = sorted(s for s in selected if s.startswith(prefix))
        if cases and case_results(wait(tests.start_run(cases)))[0]:
            caught.add(node)
    return caught


def apply(root: Path, fault: Fault) -> str:
    path = root / fault.path
    original = path.read_text(encoding="utf-8")
    lines = original.splitlines(keepends=True)
    lines[fault.start - 1:fault.end] = list(fault.new_lines)
    path.write_text("".join(lines), encoding="utf-8")
    return original


def _fault_key(fault: Fault) -> str:
    return f"{fault.kind}|{fault.path}|{fault.name}|{fault.start}|{''.join(fault.new_lines).strip()}"


def run_project(name: str, wanted: int, max_tries: int, *, reuse: bool = False, explain: bool = False,
                ) -> tuple[list[Outcome], float]:
    root = checkout(name)
    cache_file = WORK / f"{name}-failing.json"
    cached: dict[str, Any] = {}
    if reuse and cache_file.is_file():
        cached = json.loads(cache_file.read_text(encoding="utf-8"))
    known: dict[str, list[str]] = dict(cached.get("faults", {}))
    layout, config, index, impact = start_index(root)
    # A file with hundreds of failing cases can take longer than the default 30 s under a fault (click's
    # test_options.py: 27 s alone); a timed-out file says nothing about which of its cases failed.
    tests = TestingService(root, config.tests.model_copy(update={"retry_failed": False, "target_timeout_sec": 300}),
                           layout, ArtifactStore(layout.artifacts_dir, 1), impact=impact)
    test_files = [t.path for t in tests.discovery().targets if t.path]
    if "every" in cached:
        baseline, every = set(cached["baseline"]), set(cached["every"])
        full_s = float(cached["full_s"])
    else:
        began = time.perf_counter()
        baseline, every = case_results(wait(tests.start_run()))
        full_s = time.perf_counter() - began
    store: dict[str, object] = {"every": sorted(every), "baseline": sorted(baseline), "full_s": full_s,
                                "faults": known}
    began = time.perf_counter()
    recording = wait(tests.start_run(coverage=True)).snapshot().coverage
    coverage_s = time.perf_counter() - began
    print(f"{name}: {len(test_files)} test files, {len(every)} cases, full suite {full_s:.1f} s, "
          f"{len(baseline)} failing on the clean tree; coverage run {coverage_s:.1f} s, evidence of "
          f"{recording.tests if recording else 0} tests ({recording.untrusted if recording else 0} untrusted, "
          f"{recording.unmapped_total if recording else 0} files unmapped)", flush=True)
    outcomes: list[Outcome] = []
    tries = 0

    def read(rel: str) -> list[str]:
        try:
            return (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []

    try:
        for fault in interleave(candidates(root)):
            if len(outcomes) >= wanted or tries >= max_tries:
                break
            tries += 1
            original = apply(root, fault)
            try:
                index.refresh_paths([fault.path])
                started = time.perf_counter()
                result = impact.affected([fault.path], test_files, ranges={fault.path: [fault.changed]},
                                         read_lines=read)
                query_ms = (time.perf_counter() - started) * 1000
                module_files = set(impact.affected([fault.path], test_files).test_files)
                started = time.perf_counter()
                view = tests.discover(affected_by=[f"{fault.path}:{fault.changed[0]}-{fault.changed[1]}"])
                cov_ms = (time.perf_counter() - started) * 1000
                cov_result = view.impact
                assert cov_result is not None
                selected = {n for m in result.matches for n in m.node_ids}
                cov_selected = {n for m in cov_result.matches for n in m.node_ids}
                run_s = caught = cov_run_s = None
                full_faulty_s: float | None = None
                reused = _fault_key(fault) in known
                if reused:
                    broken = set(known[_fault_key(fault)])
                else:
                    started = time.perf_counter()
                    broken = case_results(wait(tests.start_run()))[0] - baseline
                    full_faulty_s = time.perf_counter() - started
                # A file that timed out or errored as a whole under the fault names no failing case: when a
                # selection holds only some of its cases, those run on the faulty tree, and if they fail or time
                # out too the selection catches the fault (requests' DEFAULT_POOLBLOCK hangs one test).
                caught_whole = _caught_whole(tests, broken, selected)
                cov_caught_whole = _caught_whole(tests, broken, cov_selected)
                if broken and name in TIMED_RUNS and not reused:
                    started = time.perf_counter()
                    sharp = case_results(wait(tests.start_run(sorted(selected))))[0]
                    run_s, caught = time.perf_counter() - started, bool(sharp & broken) or not broken
                    if cov_selected:
                        started = time.perf_counter()
                        wait(tests.start_run(sorted(cov_selected)))
                        cov_run_s = time.perf_counter() - started
                unselected = sorted(n for n in broken if not (covered(n, selected) and covered(n, cov_selected))
                                    and "::(" not in n)
                # A case that passes when run again on the same faulty tree is flaky (network...).
                if unselected and not reused:
                    again = case_results(wait(tests.start_run(unselected)))[0]
                    broken -= {n for n in unselected if n not in again}
            finally:
                (root / fault.path).write_text(original, encoding="utf-8")
                index.refresh_paths([fault.path])
            if not broken:
                known.setdefault(_fault_key(fault), [])
                continue
            missed = sorted(n for n in broken if not covered(n, selected) and n not in caught_whole)
            cov_missed = sorted(n for n in broken if not covered(n, cov_selected) and n not in cov_caught_whole)
            if (missed or cov_missed) and not reused:
                # Confirm on the clean tree, alone as they were re-run: failing there too is not the fault
                # (requests' test_connect_timeout passes only after other tests of the suite ran)
                either = sorted({*missed, *cov_missed})
                alone = [m for m in either if "::(" not in m] or sorted({m.split("::", 1)[0] for m in either})
                clean = case_results(wait(tests.start_run(alone)))[0]
                flaky = {m for m in either if m in clean}
                broken -= flaky
                missed = [m for m in missed if m not in flaky]
                cov_missed = [m for m in cov_missed if m not in flaky]
                if not broken:
                    known.setdefault(_fault_key(fault), [])
                    continue
            known[_fault_key(fault)] = sorted(broken)
            outcome = _outcome(name, fault, broken, result, every=every, query_ms=query_ms)
            outcome.failing_expanded = expanded(broken, every)
            outcome.full_clean_s = full_s
            outcome.missed, outcome.run_s, outcome.run_caught = missed, run_s, caught
            outcome.full_faulty_s, outcome.module_files = full_faulty_s, module_files
            outcome.cov_files = {m.test_file for m in cov_result.matches}
            outcome.cov_cases = sum(1 for c in every | broken if covered(c, cov_selected))
            outcome.cov_query_ms, outcome.cov_missed, outcome.cov_run_s = cov_ms, cov_missed, cov_run_s
            outcome.cov_narrowed = bool(cov_result.coverage and cov_result.coverage.narrowed)
            outcomes.append(outcome)
            use = cov_result.coverage
            print(f"  {fault.kind:<8} {fault.path}:{fault.name}: {len(broken)} failing case(s) in "
                  f"{len({b.split('::', 1)[0] for b in broken})} file(s); selected {outcome.selected_cases} case(s) "
                  f"in {len(outcome.selected_files)} file(s), {result.confidence}, {len(result.fallbacks)} "
                  f"fallback(s), {query_ms:.0f} ms" + (f", run {run_s:.1f} s" if run_s is not None else "")
                  + (f"  MISSED {missed[:3]}" if missed else ""), flush=True)
            print(f"           with coverage: {outcome.cov_cases} case(s) in {len(outcome.cov_files)} file(s), "
                  f"{cov_ms:.0f} ms, " + (f"narrowed (dropped {use.dropped_total}, added {use.added}, "
                                          f"{use.stale_tests} stale)" if use and use.narrowed else
                                          f"not narrowed: {use.note if use else 'no evidence'}")
                  + (f", run {cov_run_s:.1f} s" if cov_run_s is not None else "")
                  + (f"  MISSED {cov_missed[:3]}" if cov_missed else ""), flush=True)
            if explain:
                explain_selection(result, {b.split("::", 1)[0] for b in broken})
    finally:
        tests.close()
        index.stop()
        cache_file.write_text(json.dumps(store, indent=0, sort_keys=True), encoding="utf-8")
    return outcomes, full_s


def expanded(broken: set[str], every: set[str]) -> int:
    """Failing cases, a file that errored (``file::(error)``) counted as all of its clean-run cases."""
    cases = {b for b in broken if "::(" not in b}
    for b in broken:
        if "::(" in b:
            file = b.split("::", 1)[0]
            mine = {c for c in every if c.split("::", 1)[0] == file}
            cases |= mine or {b}
    return len(cases)


def _outcome(name: str, fault: Fault, broken: set[str], result: ImpactResult, *, every: set[str],
             query_ms: float) -> Outcome:
    files = {m.test_file for m in result.matches}
    nodes = {n for m in result.matches for n in m.node_ids}
    cases = sum(1 for c in every | broken if covered(c, nodes))
    return Outcome(name, fault, broken, files, nodes, cases, query_ms, result.confidence, len(result.fallbacks))


def table(outcomes: list[Outcome], full: dict[str, float]) -> None:
    print("\ncase precision: strict counts a test file that errors (an import fails) as one failing case; "
          "errors expanded counts all of its cases (none of them can pass). Selected run / full run: against the "
          "full suite on the same faulty tree, and against the full suite on the clean tree.")
    print(f"\n| {'project':<8} | {'faults':>6} | {'recall':>7} | {'file precision':>14} | "
          f"{'case precision strict / errors expanded':>39} | "
          f"{'module-level file precision':>27} | {'select ms p50/max':>17} | "
          f"{'selected run / full run (faulty; clean)':>41} |")
    print(f"|{'-' * 10}|{'-' * 8}|{'-' * 9}|{'-' * 16}|{'-' * 41}|{'-' * 29}|{'-' * 19}|{'-' * 43}|")
    for name in [*PROJECTS, "all"]:
        rows = [o for o in outcomes if name in ("all", o.project)]
        if not rows:
            continue
        failing = sum(len(o.failing) for o in rows)
        hit = failing - sum(len(o.missed) for o in rows)
        failing_files = [{f.split("::", 1)[0] for f in o.failing} for o in rows]
        file_hits = sum(len(ff & o.selected_files) for ff, o in zip(failing_files, rows, strict=True))
        file_selected = sum(len(o.selected_files) for o in rows)
        case_hits = sum(len(o.failing) - len(o.missed) for o in rows)
        case_selected = sum(o.selected_cases for o in rows)
        module_hits = sum(len(ff & o.module_files) for ff, o in zip(failing_files, rows, strict=True))
        module_selected = sum(len(o.module_files) for o in rows)
        times = [o.query_ms for o in rows]
        run = _ratios([(o.run_s, o.full_faulty_s, o.full_clean_s) for o in rows])
        hits_expanded = sum(o.failing_expanded - len(o.missed) for o in rows)
        strict = min(case_hits, case_selected) / max(case_selected, 1)
        loose = min(hits_expanded, case_selected) / max(case_selected, 1)
        print(f"| {name:<8} | {len(rows):>6} | {hit / failing:>6.1%} | {file_hits / max(file_selected, 1):>13.1%} | "
              f"{f'{strict:.1%} / {loose:.1%}':>39} | "
              f"{module_hits / max(module_selected, 1):>26.1%} | "
              f"{statistics.median(times):>7.0f} / {max(times):>7.0f} | {run:>41} |")
    print(f"\nwith coverage evidence:\n| {'project':<8} | {'faults':>6} | {'narrowed':>8} | {'recall':>7} | "
          f"{'file precision':>14} | {'case precision strict / errors expanded':>39} | {'select ms p50/max':>17} | "
          f"{'selected run / full run (faulty; clean)':>41} |")
    print(f"|{'-' * 10}|{'-' * 8}|{'-' * 10}|{'-' * 9}|{'-' * 16}|{'-' * 41}|{'-' * 19}|{'-' * 43}|")
    for name in [*PROJECTS, "all"]:
        rows = [o for o in outcomes if name in ("all", o.project)]
        if not rows:
            continue
        failing = sum(len(o.failing) for o in rows)
        hit = failing - sum(len(o.cov_missed) for o in rows)
        failing_files = [{f.split("::", 1)[0] for f in o.failing} for o in rows]
        file_hits = sum(len(ff & o.cov_files) for ff, o in zip(failing_files, rows, strict=True))
        file_selected = sum(len(o.cov_files) for o in rows)
        case_selected = sum(o.cov_cases for o in rows)
        times = [o.cov_query_ms for o in rows]
        run = _ratios([(o.cov_run_s, o.full_faulty_s, o.full_clean_s) for o in rows])
        hits_expanded = sum(o.failing_expanded - len(o.cov_missed) for o in rows)
        strict = min(hit, case_selected) / max(case_selected, 1)
        loose = min(hits_expanded, case_selected) / max(case_selected, 1)
        print(f"| {name:<8} | {len(rows):>6} | {sum(o.cov_narrowed for o in rows):>8} | {hit / failing:>6.1%} | "
              f"{file_hits / max(file_selected, 1):>13.1%} | "
              f"{f'{strict:.1%} / {loose:.1%}':>39} | "
              f"{statistics.median(times):>7.0f} / {max(times):>7.0f} | {run:>41} |")
    print("\nfull suite on the clean tree: " + ", ".join(f"{k} {v:.1f} s" for k, v in full.items()))
    by_kind = {k: [o for o in outcomes if o.fault.kind == k] for k in KINDS}
    print("\nfaults by kind: " + ", ".join(f"{k} {len(v)}" for k, v in by_kind.items()))
    missed = [o for o in outcomes if o.missed]
    print(f"{len(outcomes)} faults; recall 100 % on {len(outcomes) - len(missed)} of them")
    for o in missed:
        print(f"  MISSED {o.project} {o.fault.kind} {o.fault.path}:{o.fault.name}: {o.missed[:5]}")
    cov_missed = [o for o in outcomes if o.cov_missed]
    print(f"with coverage evidence: recall 100 % on {len(outcomes) - len(cov_missed)} of them")
    for o in cov_missed:
        print(f"  MISSED (coverage) {o.project} {o.fault.kind} {o.fault.path}:{o.fault.name}: {o.cov_missed[:5]}")


def _ratios(rows: list[tuple[float | None, float | None, float | None]]) -> str:
    """``p50 / max`` of selected run / full run on the faulty tree; then p50 against the clean full suite."""
    faulty = [r / f for r, f, _ in rows if r is not None and f]
    clean = [r / c for r, _, c in rows if r is not None and c]
    if not faulty:
        return "-"
    against_clean = f"; {statistics.median(clean):.0%} p50" if clean else ""
    return f"{statistics.median(faulty):.0%} p50, {max(faulty):.0%} max{against_clean}"


def explain_selection(result: ImpactResult, failing_files: set[str]) -> None:
    """Print each selected test file none of whose cases failed, with its first reason, and the first fallbacks."""
    for match in result.matches:
        if match.test_file not in failing_files:
            print(f"           extra {match.test_file}"
                  f" ({len(match.cases) or 'whole'}): {match.reasons[0] if match.reasons else '?'}")
    for why in result.fallbacks[:3]:
        print(f"           fallback {why}")


def start_index(root: Path) -> tuple[RepoLayout, CodePlaneConfig, IndexService, ImpactIndex]:
    """A running index with structural facts over ``root`` (stop it when done) and the impact index over it."""
    layout = RepoLayout(root)
    config = CodePlaneConfig()
    index = IndexService(root, layout, config.index)
    index.register_indexer(StructuralIndexer())
    index.start()
    index.wait_ready(600)
    return layout, config, index, ImpactIndex(index.read_connection)


def django_selection_time(changes: int) -> None:
    """Selection time on Django (issue 22: ≤ 100 ms): one-function changes (a function's or method's first
    statement) spread over its modules, each written to disk and indexed, then selected among its test files by
    the static graph, as an agent asks after an edit (each edit makes a new index epoch); then asked again in
    that epoch. The first question reads the whole import graph and warms the caches (cold)."""
    root = checkout(DJANGO[0], venv=False)
    if not (root / ".git").is_dir():
        raise SystemExit(f"{root}: no git checkout")
    layout = RepoLayout(root)
    index = IndexService(root, layout, CodePlaneConfig().index)
    index.register_indexer(StructuralIndexer())
    began = time.perf_counter()
    index.start()
    index.wait_ready(3600)
    print(f"django {DJANGO[1]}: index ready in {time.perf_counter() - began:.0f} s", flush=True)
    tests = sorted(p.relative_to(root).as_posix() for p in (root / "tests").rglob("*.py")
                   if p.name.startswith("test") or p.name == "tests.py")
    groups: list[list[Fault]] = []
    for path in sorted((root / "django").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        found = []
        for node in ast.parse("".join(lines)).body:
            items = node.body if isinstance(node, ast.ClassDef) else [node]
            for item in items:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    fault = _raise_fault("function", rel, item, lines)
                    if fault is not None:
                        found.append(fault)
        if found:
            groups.append(found)
    picked = list(_round_robin(groups))[:changes]

    read = LineCache(root).lines  # what TestingService reads through
    impact = ImpactIndex(index.read_connection)
    # Each change is written and indexed first (``refresh_paths``, what write_source does): an agent asks right
    # after an edit, in a new epoch; the same question again in that epoch is timed too.
    edited: list[float] = []
    edited_cpu: list[float] = []  # this thread's CPU time: what a loaded machine's waiting does not inflate
    again: list[float] = []
    cases = files = 0
    try:
        for fault in picked:
            original = apply(root, fault)
            try:
                index.refresh_paths([fault.path])
                for timings in (edited, again):
                    started, started_cpu = time.perf_counter(), time.thread_time()
                    result = impact.affected([fault.path], tests, ranges={fault.path: [fault.changed]},
                                             read_lines=read)
                    timings.append((time.perf_counter() - started) * 1000)
                    if timings is edited:
                        edited_cpu.append((time.thread_time() - started_cpu) * 1000)
            finally:
                (root / fault.path).write_text(original, encoding="utf-8")
                index.refresh_paths([fault.path])
            files += len(result.matches)
            cases += sum(len(m.cases) for m in result.matches)
    finally:
        index.stop()

    def spread(values: list[float]) -> str:
        rest = values[1:] or values
        return (f"first {values[0]:.0f}, then p50 {statistics.median(rest):.0f}, "
                f"p90 {sorted(rest)[int(0.9 * (len(rest) - 1))]:.0f}, max {max(rest):.0f}")

    print(f"django: {len(picked)} one-function changes among {len(tests)} test files, each written and indexed "
          f"before it is selected; mean selected {files / len(picked):.1f} test file(s), {cases / len(picked):.1f} "
          "case(s)")
    print(f"django selection ms right after the edit (new epoch): {spread(edited)}")
    print(f"django selection CPU ms right after the edit (this thread): {spread(edited_cpu)}")
    print(f"django selection ms asked again in the same epoch: {spread(again)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--faults-per-project", type=int, default=16)
    parser.add_argument("--max-tries", type=int, default=60, help="candidate faults tried per project at most")
    parser.add_argument("--projects", default=",".join(PROJECTS))
    parser.add_argument("--reuse-failing", action="store_true",
                        help="take each fault's failing cases from the last run's cache instead of running the suite")
    parser.add_argument("--explain", action="store_true", help="print why each over-selected test file was selected")
    parser.add_argument("--django", type=int, default=0, metavar="N",
                        help="measure only the selection time of N one-function changes on Django")
    args = parser.parse_args()
    if args.django:
        django_selection_time(args.django)
        return
    outcomes: list[Outcome] = []
    full: dict[str, float] = {}
    for name in args.projects.split(","):
        found, full[name] = run_project(name, args.faults_per_project, args.max_tries, reuse=args.reuse_failing,
                                        explain=args.explain)
        outcomes += found
    table(outcomes, full)


if __name__ == "__main__":
    main()
