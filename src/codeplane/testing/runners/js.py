"""Jest and Vitest: one target per test file; a batch of files runs in one process with a JSON report.

Both write Jest's JSON shape at exit (``--json --outputFile`` / ``--reporter=json --outputFile``). Jest also runs
CodePlane's reporter (``jest_events.cjs``), whose events say which file runs now (``--runInBand``: one at a time):
each file is timed against its own timeout, a hung one is killed alone after it, and the files that ended before
keep their results (the report is written only at exit). Vitest runs its files in parallel and has no such stream:
its batch is watched whole (``batch.whole_batch_budget``).
The executable comes from the nearest ``node_modules/.bin`` up to the repo root, then PATH.

A target with ``cases`` (``file::describe > test`` ids) runs only those, by ``--testNamePattern``: both runners
match it against a test's describe titles and its own joined by spaces. One pattern serves the whole process, so a
case of the same name in another file of the batch runs too; the report keeps the cases each target asked for.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from codeplane.testing.model import TRACEBACK_CHARS, CaseResult, Target, TargetResult
from codeplane.testing.reports import ParsedCase, clip_ends
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
from codeplane.testing.runners.js_files import JsTestFiles, installed_major, jest_test_files, vitest_test_files
from codeplane.testing.runners.unmatched import unmatched_message

#: CodePlane's Jest reporter: events as each file starts and ends (see :class:`JestEventParser`).
EVENTS_REPORTER = Path(__file__).resolve().parent / "jest_events.cjs"
#: The case a file-level failure (it did not load, a hook threw) is reported as.
SUITE_CASE = "(suite)"
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


def read_package_json(project_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((project_dir / "package.json").read_text(encoding="utf-8", errors="replace"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _bin_dirs(project_dir: Path, repo_root: Path) -> list[Path]:
    dirs = []
    current = project_dir
    while True:
        dirs.append(current / "node_modules" / ".bin")
        if current in (repo_root, current.parent):
            return dirs
        current = current.parent


class JsRunner(Runner):
    """Jest or Vitest: a project's targets are the files its test-file rule (:meth:`test_files`) includes."""

    runs_cases = True
    executable: str

    def default_toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        found = which(self.executable, *_bin_dirs(project.dir(repo_root), repo_root))
        return Toolchain((found,)) if found else None

    def targets(self, project: Project, repo_root: Path, files: Sequence[str], base_cmd: Sequence[str]) -> list[Target]:
        rule = self.test_files(project.dir(repo_root), repo_root)
        return self.file_targets(project, files, base_cmd, lambda rel: rule.matches(project.rel(rel)))

    def unread_config(self, project: Project, repo_root: Path) -> tuple[str, str] | None:
        rule = self.test_files(project.dir(repo_root), repo_root)
        # A Vitest config found up the tree is named from the project (``../../vitest.config.ts``).
        return (posixpath.normpath(project.repo_rel(rule.unread)), rule.problem) if rule.unread else None

    @abstractmethod
    def test_files(self, project_dir: Path, repo_root: Path) -> JsTestFiles:
        """The project's test-file patterns (its config's, else the defaults of the runner version it runs)."""

    def installed_major(self, project_dir: Path, repo_root: Path) -> int | None:
        """The major version of the runner the project runs (its ``node_modules``, else the one on PATH)."""
        return installed_major(project_dir, self.executable,
                               which(self.executable, *_bin_dirs(project_dir, repo_root)))

    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        return JsonReportParser(invocation, targets, repo_root)


class JestRunner(JsRunner):
    name = "jest"
    lang = "javascript"
    executable = "jest"

    def test_files(self, project_dir: Path, repo_root: Path) -> JsTestFiles:
        return jest_test_files(project_dir, read_package_json(project_dir),
                               self.installed_major(project_dir, repo_root))

    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage: CoverageSetup | None = None) -> Invocation:
        report, events = workdir / "jest.json", workdir / "jest-events.jsonl"
        # ``default`` keeps Jest's console output on stderr: the answer quotes it when the report cannot say why
        # (a config error, "No tests found"); naming reporters on the command line replaces the config's.
        argv = (*_with_cases((*toolchain.argv, "--ci", "--json", f"--outputFile={report}", "--runInBand",
                              "--no-watchman", "--colors=false", "--reporters=default",
                              f"--reporters={EVENTS_REPORTER}"), targets),
                "--runTestsByPath", *(t.selector for t in targets))
        return Invocation(argv, project.dir(repo_root),
                          toolchain.environ({"FORCE_COLOR": "0", "CODEPLANE_JEST_EVENTS": str(events)}),
                          event_file=events, report_files=(report,))

    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        return JestEventParser(invocation, targets, repo_root)


class VitestRunner(JsRunner):
    name = "vitest"
    lang = "javascript"
    executable = "vitest"

    def test_files(self, project_dir: Path, repo_root: Path) -> JsTestFiles:
        return vitest_test_files(project_dir, self.installed_major(project_dir, repo_root), repo_root)

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
        return self._from_report(exit_code, stdout, stderr)

    def _from_report(self, exit_code: int | None, stdout: str, stderr: str) -> list[TargetResult]:
        report = self.invocation.report_files[0]
        try:
            cases, durations = parse_jest_json(report.read_text(encoding="utf-8", errors="replace"))
        except OSError:  # the runner stopped before writing one ("No tests found", a config error)
            reason = f"{self.invocation.argv[0].rsplit('/', 1)[-1]} exited {exit_code} without a report\n" \
                     f"{stderr or stdout}"
            return [error_result(t, reason, exit_code=exit_code) for t in self.targets]
        except ValueError as exc:
            reason = f"{exc}\n{stderr or stdout}"
            return [error_result(t, reason, exit_code=exit_code) for t in self.targets]
        return _unexplained_exit(self._results(cases, durations, exit_code, stderr, self.targets), exit_code,
                                 stderr or stdout)

    def _results(self, cases: Sequence[ParsedCase], durations: dict[str, float], exit_code: int | None,
                 stderr: str, targets: Iterable[str]) -> list[TargetResult]:
        """The results of ``targets`` from a report's cases."""
        by_target: dict[str, list[CaseResult]] = {}
        seconds: dict[str, float] = {}
        #: Every case each file holds (those the name pattern left out are in the report as skipped).
        held: dict[str, list[str]] = {}
        for case in cases:
            target = self.target_of(case.group)
            if target is None:
                continue
            held.setdefault(target, []).append(case.name)
            wanted = self.wanted.get(target)
            if wanted is not None and case.name not in wanted:
                continue
            by_target.setdefault(target, []).append(case.to_case(target, f"{target}::{case.name}"))
            seconds[target] = durations.get(case.group, 0.0)
        results = []
        for target_id in targets:
            found = by_target.get(target_id)
            missing = sorted(self.wanted.get(target_id, set()) - {c.case_id.split("::", 1)[1] for c in found or ()})
            if missing and not any(c.failing for c in found or ()):
                # Settled: running it again cannot find the case (it is the agent's id to correct, by the names).
                names = [n for n in dict.fromkeys(held.get(target_id, ())) if n != SUITE_CASE]
                results.append(replace(error_result(
                    target_id, unmatched_message(target_id, missing, names, len(names), sep=" > "),
                    exit_code=exit_code, duration_s=seconds.get(target_id, 0.0), cases=found or ()), settled=True))
            elif found is None:
                results.append(error_result(target_id, f"no result for this file in the report\n{stderr}",
                                            exit_code=exit_code))
            elif suite := next((c for c in found if c.case_id.endswith(f"::{SUITE_CASE}")), None):
                # The file failed as a whole (it did not load, a beforeAll/afterAll threw): an error whatever its
                # cases say, with the line that says why ahead of the runner's frames.
                shown = suite.traceback or suite.message
                if suite.message not in shown[:len(suite.message) + 200]:
                    shown = f"{suite.message}\n{shown}"
                results.append(error_result(target_id, clip_ends(shown, TRACEBACK_CHARS), exit_code=exit_code,
                                            duration_s=seconds.get(target_id, 0.0),
                                            cases=[c for c in found if c is not suite]))
            else:
                results.append(result_from_cases(target_id, found, exit_code=exit_code,
                                                 duration_s=seconds.get(target_id, 0.0)))
        return results

    def target_of(self, path: str) -> str | None:
        """The target of a file the runner names (absolute, or relative to its working directory)."""
        return self.by_file.get(os.path.normpath(path if os.path.isabs(path) else self.invocation.cwd / path))


class JestEventParser(JsonReportParser):
    """Jest watched file by file, from CodePlane's reporter (``jest_events.cjs``, see :class:`JestRunner`): the
    file running now has its own timeout, and a kill keeps what the files before it reported."""

    def __init__(self, invocation: Invocation, targets: Sequence[Target], repo_root: Path) -> None:
        super().__init__(invocation, targets, repo_root)
        self.current: str | None = None
        self.suites: dict[str, dict[str, Any]] = {}
        #: Per target: its finished cases (report entries), and the case running now (``describe > test``).
        self.case_entries: dict[str, list[dict[str, Any]]] = {}
        self.running: dict[str, str] = {}

    @property
    def live(self) -> bool:
        return True

    def feed_event(self, line: str) -> None:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            return
        if not isinstance(event, dict):
            return
        target = self.target_of(str(event.get("path", "")))
        kind = event.get("e")
        if kind == "start":
            self.current = target
        elif target is None:
            return
        elif kind == "case_start":
            self.running[target] = " > ".join(str(t) for t in event.get("titles") or () if t)
        elif kind == "case" and isinstance(event.get("result"), dict):
            self.case_entries.setdefault(target, []).append(event["result"])
            self.running.pop(target, None)
        elif kind == "file" and isinstance(event.get("result"), dict):
            self.suites[target] = event["result"]
            self.current = None if self.current == target else self.current

    def current_target(self) -> str | None:
        return self.current

    def done_targets(self) -> set[str]:
        return set(self.suites)

    def failed_targets(self) -> set[str]:
        return {t for t, suite in self.suites.items() if suite.get("status") == "failed"}

    def finish(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        if not killed:
            return self._from_report(exit_code, stdout, stderr)
        # Killed (a file's timeout, the run's): the report was never written; the files that ended keep theirs.
        cases, durations = parse_jest_json(json.dumps({"testResults": list(self.suites.values())}))
        return self._results(cases, durations, exit_code, stderr, [t for t in self.targets if t in self.suites])

    def partial(self, target_id: str) -> tuple[list[CaseResult], str | None]:
        entries = self.case_entries.get(target_id, [])
        path = self.targets[target_id].path if target_id in self.targets else ""
        cases, _ = parse_jest_json(json.dumps({"testResults": [{"name": path, "assertionResults": entries}]}))
        wanted = self.wanted.get(target_id)
        found = [c.to_case(target_id, f"{target_id}::{c.name}") for c in cases if wanted is None or c.name in wanted]
        running = self.running.get(target_id)
        return found, f"{target_id}::{running}" if running else None


def _unexplained_exit(results: list[TargetResult], exit_code: int | None, output: str) -> list[TargetResult]:
    """A runner that exits non-zero with no failure in its report failed for a reason the report does not hold
    (an unhandled rejection, a reporter or config error): none of its targets may pass on that report."""
    if exit_code in (0, None) or any(r.outcome in ("failed", "error") for r in results):
        return results
    reason = f"the runner exited {exit_code} though its report shows no failure\n{output.strip()}"
    return [error_result(r.target_id, clip_ends(reason, TRACEBACK_CHARS), exit_code=exit_code,
                         duration_s=r.duration_s, cases=r.cases) for r in results]
