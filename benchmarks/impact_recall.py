"""Impact-selection recall and precision on real code: injected faults in click 8.3.1 and attrs 25.4.0.

For each fault (a function made to ``raise`` as its first statement), the whole suite runs; every test file
with a case that fails under the fault but not on the clean tree must be in the set CodePlane selects for the
changed module (§11.9). Target: 100 % recall over ≥ 20 faults; precision is reported (all matches, and high
confidence only). Also reports the latency of ``inspect_affected_tests``-style queries (target ≤ 100 ms).

Sdists are downloaded into ``benchmarks/.cache`` (``pip download --no-binary``) and extracted into a private
``benchmarks/.cache/impact/`` copy with an editable install in its ``.venv``.
Run: ``uv run python benchmarks/impact_recall.py [--faults-per-project 12]``.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.testing import ImpactIndex, TestingService

CACHE = Path(__file__).resolve().parent / ".cache"
WORK = CACHE / "impact"
PROJECTS = {
    "click": ("click==8.3.1", ("pytest",)),
    "attrs": ("attrs==25.4.0", ("cloudpickle", "hypothesis", "pympler", "pytest")),
}
FAULT = "raise RuntimeError('codeplane injected fault')"


@dataclass(frozen=True)
class Outcome:
    project: str
    module: str
    function: str
    failing: frozenset[str]
    selected: frozenset[str]
    high: frozenset[str]
    query_ms: float


def pip() -> list[str]:
    """A pip to download sdists with: this interpreter's, else pip run by uv (uv venvs have no pip)."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    return [shutil.which("uv") or "uv", "tool", "run", "pip"]


def checkout(requirement: str, deps: tuple[str, ...]) -> Path:
    name, version = requirement.split("==")
    root = WORK / f"{name}-{version}"
    if not root.is_dir():
        WORK.mkdir(parents=True, exist_ok=True)
        archive = next(CACHE.glob(f"{name}-{version}.tar.gz"), None)
        if archive is None:
            subprocess.run([*pip(), "download", "--no-binary", ":all:", "--no-deps", "-d", str(CACHE),
                            requirement], check=True)
            archive = next(CACHE.glob(f"{name}-{version}.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(WORK, filter="data")
        # A commit of the pristine tree: an interrupted run's injected fault is undone by a checkout.
        for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=bench", "-c", "user.email=bench@localhost",
                                                     "commit", "-q", "-m", "pristine"]):
            subprocess.run(["git", *args], cwd=root, check=True)
    subprocess.run(["git", "checkout", "-q", "--", "src"], cwd=root, check=True)
    venv = root / ".venv"
    if not (venv / "bin" / "pytest").exists():
        uv = shutil.which("uv") or "uv"
        subprocess.run([uv, "venv", "-q", str(venv), "--python", f"{sys.version_info.major}.{sys.version_info.minor}"],
                       check=True)
        subprocess.run([uv, "pip", "install", "-q", "--no-compile-bytecode", "--python", str(venv / "bin" / "python"),
                        "-e", str(root), *deps], check=True)
    return root


def candidates(root: Path, per_module: int = 3) -> list[tuple[str, str, int, int]]:
    """(module path, function name, insert line, indent) for functions whose body can take a raise.

    Public functions first (more likely exercised by the suite), at most ``per_module`` per module, modules
    interleaved so that faults spread over the package.
    """
    by_module: list[list[tuple[str, str, int, int]]] = []
    for path in sorted((root / "src").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = []
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name.startswith("__"):
                continue
            body = node.body
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(body) > 1:
                first = body[1]
            if first.lineno == node.lineno:  # one-line def: no room for a statement line
                continue
            found.append((rel, node.name, first.lineno, first.col_offset))
        found.sort(key=lambda c: (c[1].startswith("_"), c[2]))
        by_module.append(found[:per_module])
    return [c for rank in range(per_module) for group in by_module if rank < len(group) for c in [group[rank]]]


def failing_cases(service: TestingService) -> set[str]:
    record = service.start_run()
    while not record.finished:
        record.wait(record.version, 1.0)
    snapshot = record.snapshot()
    failing = set()
    for target in snapshot.targets:
        final = target.final
        if final is None:
            continue
        failing |= {f"{target.target.target_id}::{c.case_id}" for c in final.cases if c.failing}
        if final.outcome in ("error", "timeout") and not any(c.failing for c in final.cases):
            failing.add(f"{target.target.target_id}::({final.outcome})")
    return failing


def run_project(name: str, limit: int) -> list[Outcome]:
    requirement, deps = PROJECTS[name]
    root = checkout(requirement, deps)
    layout = RepoLayout(root)
    config = CodePlaneConfig()
    index = IndexService(root, layout, config.index)
    index.register_indexer(StructuralIndexer())
    index.start()
    index.wait_ready(600)
    impact = ImpactIndex(index.read_connection)
    tests = TestingService(root, config.tests.model_copy(update={"retry_failed": False}), layout,
                           ArtifactStore(layout.artifacts_dir, 1), impact=impact)
    test_files = [t.path for t in tests.discovery().targets if t.path]
    baseline = failing_cases(tests)
    print(f"{name}: {len(test_files)} test files, {len(baseline)} failing case(s) on the clean tree", flush=True)
    outcomes: list[Outcome] = []
    used_modules: set[str] = set()
    try:
        for rel, function, line, indent in candidates(root):
            if len(outcomes) >= limit:
                break
            if rel in used_modules:
                continue
            path = root / rel
            original = path.read_text(encoding="utf-8")
            lines = original.splitlines(keepends=True)
            lines.insert(line - 1, " " * indent + FAULT + "\n")
            began = time.perf_counter()
            result = impact.affected([rel], test_files, uncovered=True)
            query_ms = (time.perf_counter() - began) * 1000
            path.write_text("".join(lines), encoding="utf-8")
            try:
                broken = failing_cases(tests) - baseline
            finally:
                path.write_text(original, encoding="utf-8")
            if not broken:
                continue  # the suite does not exercise this function: not a usable fault
            used_modules.add(rel)
            failing = frozenset(case.split("::", 1)[0] for case in broken)
            outcome = Outcome(name, rel, function, failing, frozenset(result.test_files),
                              frozenset(m.test_file for m in result.matches if m.confidence == "high"), query_ms)
            missed = sorted(failing - outcome.selected)
            print(f"  {rel}:{function}: {len(failing)} failing file(s), {len(outcome.selected)} selected "
                  f"({len(outcome.high)} high){', MISSED ' + str(missed) if missed else ''}", flush=True)
            outcomes.append(outcome)
    finally:
        tests.close()
        index.stop()
    return outcomes


DJANGO_CHANGES = (
    "django/db/models/query.py", "django/utils/text.py", "django/http/request.py", "django/forms/fields.py",
    "django/template/base.py", "django/core/validators.py", "django/urls/resolvers.py", "django/contrib/auth/models.py",
    "django/db/models/fields/__init__.py", "django/utils/functional.py",
)


def django_latency() -> None:
    """``inspect_affected_tests`` as the server runs it (discovery cached per epoch + the impact walk)."""
    root = WORK / "django-5.2.8"
    if not root.is_dir():
        archive = next(CACHE.glob("django-5.2.8.tar.gz"), None)
        if archive is None:
            subprocess.run([*pip(), "download", "--no-binary", ":all:", "--no-deps", "-d", str(CACHE),
                            "django==5.2.8"], check=True)
            archive = next(CACHE.glob("django-5.2.8.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(WORK, filter="data")
    layout = RepoLayout(root)
    config = CodePlaneConfig()
    index = IndexService(root, layout, config.index)
    index.register_indexer(StructuralIndexer())
    began = time.perf_counter()
    index.start()
    index.wait_ready(1800)
    print(f"\nDjango 5.2.8 index ready in {time.perf_counter() - began:.1f} s", flush=True)
    service = TestingService(root, config.tests, layout, ArtifactStore(layout.artifacts_dir, 1),
                             impact=ImpactIndex(index.read_connection), files_version=lambda: index.epoch)
    try:
        service.discovery()  # the first call walks the tree; later ones reuse it until the epoch changes
        times = []
        for changed in DJANGO_CHANGES:
            began = time.perf_counter()
            result = service.inspect_affected([changed])
            times.append((time.perf_counter() - began) * 1000)
            print(f"  {changed}: {times[-1]:.1f} ms, {len(result.matches)} test files "
                  f"({sum(m.confidence == 'high' for m in result.matches)} high), {result.confidence}")
        print(f"inspect_affected_tests on Django: p50 {statistics.median(times):.1f} ms, max {max(times):.1f} ms "
              "(target <= 100 ms)")
    finally:
        service.close()
        index.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--faults-per-project", type=int, default=11)
    parser.add_argument("--no-django", action="store_true", help="skip the Django latency measurement")
    args = parser.parse_args()
    outcomes = [o for name in PROJECTS for o in run_project(name, args.faults_per_project)]
    print(f"\n| {'project':<7} | {'faults':>6} | {'recall':>7} | {'precision':>9} | {'high recall':>11} | "
          f"{'high precision':>14} | {'query ms p50/max':>16} |")
    print(f"|{'-' * 9}|{'-' * 8}|{'-' * 9}|{'-' * 11}|{'-' * 13}|{'-' * 16}|{'-' * 18}|")
    for name in [*PROJECTS, "all"]:
        rows = [o for o in outcomes if name in ("all", o.project)]
        if not rows:
            continue
        failing = sum(len(o.failing) for o in rows)
        hit = sum(len(o.failing & o.selected) for o in rows)
        selected = sum(len(o.selected) for o in rows)
        hit_high = sum(len(o.failing & o.high) for o in rows)
        high = sum(len(o.high) for o in rows)
        times = [o.query_ms for o in rows]
        print(f"| {name:<7} | {len(rows):>6} | {hit / failing:>6.1%} | {hit / max(selected, 1):>8.1%} | "
              f"{hit_high / failing:>10.1%} | {hit_high / max(high, 1):>13.1%} | "
              f"{statistics.median(times):>7.1f} / {max(times):>6.1f} |")
    missed = [o for o in outcomes if not o.failing <= o.selected]
    print(f"\n{len(outcomes)} faults; recall is 100 % on {len(outcomes) - len(missed)} of them "
          f"(target: all, with >= 20 faults)")
    if not args.no_django:
        django_latency()


if __name__ == "__main__":
    main()
