"""Jest and Vitest: one target per test file; a batch of files runs in one process with a JSON report.

Both write Jest's JSON shape at exit (``--json --outputFile`` / ``--reporter=json --outputFile``), so a
batch's per-target timeout is the sum of its targets' timeouts (no live stream to attribute time from).
The executable comes from the nearest ``node_modules/.bin`` up to the repo root, then PATH.

A target with ``cases`` (``file::describe > test`` ids) runs only those, by ``--testNamePattern``: both runners
match it against a test's describe titles and its own joined by spaces. One pattern serves the whole process, so a
case of the same name in another file of the batch runs too; the report keeps the cases each target asked for.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codeplane.testing.model import CaseResult, Target, TargetResult
from codeplane.testing.reports.jestjson import parse_jest_json
from codeplane.testing.runners.base import (
    BatchParser,
    CoverageSetup,
    Invocation,
    Project,
    Runner,
    Toolchain,
    error_result,
    result_from_cases,
    which,
)

#: Characters a JavaScript regular expression gives a meaning to, escaped in a test name's pattern.
_JS_SPECIAL = re.compile(r"[\\^$.*+?()[\]{}|/]")


def js_name_pattern(cases: Sequence[str]) -> str:
    """``--testNamePattern`` running exactly these cases (``describe > test`` names), anchored."""
    names = sorted({" ".join(case.split(" > ")) for case in cases})
    return "^(?:" + "|".join(_JS_SPECIAL.sub(lambda m: "\\" + m.group(0), name) for name in names) + ")$"


def _with_cases(argv: tuple[str, ...], targets: Sequence[Target]) -> tuple[str, ...]:
    if targets and all(t.cases for t in targets):
        return (*argv, "--testNamePattern", js_name_pattern([c for t in targets for c in t.cases]))
    return argv


#: Jest's default ``testMatch``: ``**/__tests__/**/*.[jt]s?(x)`` and ``**/?(*.)+(spec|test).[jt]s?(x)``.
_TEST_FILE = re.compile(r"(^|/)__tests__/.+\.(?:[cm]?[jt]sx?)$|(^|[/.])(?:spec|test)\.(?:[cm]?[jt]sx?)$")


def read_package_json(project_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((project_dir / "package.json").read_text(encoding="utf-8", errors="replace"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def is_js_test_file(rel: str) -> bool:
    return bool(_TEST_FILE.search(rel))


def _bin_dirs(project_dir: Path, repo_root: Path) -> list[Path]:
    dirs = []
    current = project_dir
    while True:
        dirs.append(current / "node_modules" / ".bin")
        if current in (repo_root, current.parent):
            return dirs
        current = current.parent


class _JsRunner(Runner):
    executable: str

    def default_toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        found = which(self.executable, *_bin_dirs(project.dir(repo_root), repo_root))
        return Toolchain((found,)) if found else None

    def targets(self, project: Project, repo_root: Path, files: Sequence[str], base_cmd: Sequence[str]) -> list[Target]:
        return self.file_targets(project, files, base_cmd, lambda rel: is_js_test_file(project.rel(rel)))

    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        return JsonReportParser(invocation, targets, repo_root)


class JestRunner(_JsRunner):
    name = "jest"
    lang = "javascript"
    executable = "jest"

    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage: CoverageSetup | None = None) -> Invocation:
        report = workdir / "jest.json"
        argv = (*_with_cases((*toolchain.argv, "--ci", "--json", f"--outputFile={report}", "--runInBand",
                              "--no-watchman", "--colors=false"), targets),
                "--runTestsByPath", *(t.selector for t in targets))
        return Invocation(argv, project.dir(repo_root), toolchain.environ({"FORCE_COLOR": "0"}),
                          report_files=(report,))


class VitestRunner(_JsRunner):
    name = "vitest"
    lang = "javascript"
    executable = "vitest"

    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage: CoverageSetup | None = None) -> Invocation:
        report = workdir / "vitest.json"
        argv = (*_with_cases((*toolchain.argv, "run", "--reporter=json", f"--outputFile={report}",
                              "--watch=false"), targets), *(t.selector for t in targets))
        return Invocation(argv, project.dir(repo_root), toolchain.environ({"FORCE_COLOR": "0", "CI": "true"}),
                          report_files=(report,))


class JsonReportParser(BatchParser):
    def __init__(self, invocation: Invocation, targets: Sequence[Target], repo_root: Path) -> None:
        self.invocation = invocation
        self.targets = {t.target_id: t for t in targets}
        #: Target → the cases asked for by name, when only those run (the others are reported as skipped).
        self.wanted = {t.target_id: set(t.cases) for t in targets if t.cases and all(u.cases for u in targets)}
        self.by_file: dict[str, str] = {}
        for t in targets:
            for candidate in (repo_root / t.path, (repo_root / t.path).resolve()):
                self.by_file[os.path.normpath(candidate)] = t.target_id

    def finish(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        if killed:
            return []
        report = self.invocation.report_files[0]
        try:
            cases, durations = parse_jest_json(report.read_text(encoding="utf-8", errors="replace"))
        except (OSError, ValueError) as exc:
            reason = f"{exc}\n{stderr or stdout}"
            return [error_result(t, reason, exit_code=exit_code) for t in self.targets]
        by_target: dict[str, list[CaseResult]] = {}
        seconds: dict[str, float] = {}
        for case in cases:
            path = case.group if os.path.isabs(case.group) else str(self.invocation.cwd / case.group)
            target = self.by_file.get(os.path.normpath(path))
            if target is None:
                continue
            wanted = self.wanted.get(target)
            if wanted is not None and case.name not in wanted:
                continue
            by_target.setdefault(target, []).append(case.to_case(target, f"{target}::{case.name}"))
            seconds[target] = durations.get(case.group, 0.0)
        results = []
        for target_id in self.targets:
            found = by_target.get(target_id)
            missing = sorted(self.wanted.get(target_id, set()) - {c.case_id.split("::", 1)[1] for c in found or ()})
            if missing and not any(c.failing for c in found or ()):
                results.append(error_result(target_id, f"no test {', '.join(missing[:10])} in {target_id}"
                                            + (f" (+{len(missing) - 10} more)" if len(missing) > 10 else ""),
                                            exit_code=exit_code, duration_s=seconds.get(target_id, 0.0),
                                            cases=found or ()))
            elif found is None:
                results.append(error_result(target_id, f"no result for this file in the report\n{stderr}",
                                            exit_code=exit_code))
            elif len(found) == 1 and found[0].case_id.endswith("::(suite)"):
                results.append(error_result(target_id, found[0].traceback or found[0].message,
                                            exit_code=exit_code, duration_s=seconds.get(target_id, 0.0)))
            else:
                results.append(result_from_cases(target_id, found, exit_code=exit_code,
                                                 duration_s=seconds.get(target_id, 0.0)))
        return results
