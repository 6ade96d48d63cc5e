"""pytest: one target per test file; a batch of files runs in one pytest process.

Results come from CodePlane's event plugin (``_pytest_plugin``), loaded with ``-p`` from a directory put on
``PYTHONPATH``; JUnit XML is written too and parsed only when the plugin produced nothing. The repo's
``.venv`` (or ``venv``) interpreter runs pytest when it has pytest installed (§11.5, issue: "the runner's
environment is the repo's").
"""

from __future__ import annotations

import configparser
import fnmatch
import json
import os
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codeplane.testing.model import CaseOutcome, CaseResult, Target, TargetResult
from codeplane.testing.reports import ParsedCase, exception_type_of
from codeplane.testing.reports.junit import parse_junit
from codeplane.testing.runners.base import (
    BatchParser,
    Invocation,
    Project,
    Runner,
    Toolchain,
    error_result,
    result_from_cases,
    which,
)

PLUGIN_DIR = Path(__file__).resolve().parent.parent / "_pytest_plugin"
PLUGIN_NAME = "codeplane_pytest_events"
EVENTS_ENV = "CODEPLANE_PYTEST_EVENTS"
DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
VENV_DIRS = (".venv", "venv")
#: pytest exit code 5: no tests were collected.
NO_TESTS_COLLECTED = 5


def read_pytest_ini(project_dir: Path) -> dict[str, str]:
    """The ``[pytest]`` options of the first config file pytest itself would use (rootdir rules)."""
    ini = project_dir / "pytest.ini"
    if ini.is_file():
        return _ini_section(ini, "pytest")
    pyproject = project_dir / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8", errors="replace"))
        except tomllib.TOMLDecodeError:
            data = {}
        options = data.get("tool", {}).get("pytest", {})
        options = options.get("ini_options", options) if isinstance(options, dict) else {}
        if options:
            return {k: " ".join(v) if isinstance(v, list) else str(v) for k, v in options.items()}
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        path = project_dir / name
        if path.is_file():
            found = _ini_section(path, section)
            if found:
                return found
    return {}


def _ini_section(path: Path, section: str) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except configparser.Error:
        return {}
    return dict(parser[section]) if parser.has_section(section) else {}


def _venv_python(directory: Path) -> Path | None:
    """The interpreter of the project's virtualenv, if it has one (whether pytest is there is its business:
    a missing pytest then fails loudly instead of silently testing against another environment)."""
    for name in VENV_DIRS:
        python = directory / name / "bin" / "python"
        if python.exists():
            return python
    return None


class PytestRunner(Runner):
    name = "pytest"
    lang = "python"

    def default_toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        for directory in dict.fromkeys((project.dir(repo_root), repo_root)):
            python = _venv_python(directory)
            if python is not None:
                venv = python.parent.parent
                return Toolchain((str(python), "-m", "pytest"),
                                 env={"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{{PATH}}"})
        found = which("pytest")
        return Toolchain((found,)) if found else None

    def targets(self, project: Project, repo_root: Path, files: Sequence[str], base_cmd: Sequence[str]) -> list[Target]:
        options = read_pytest_ini(project.dir(repo_root))
        patterns = tuple(options.get("python_files", "").split()) or DEFAULT_PYTHON_FILES
        testpaths = [p.strip("/") for p in options.get("testpaths", "").split() if p.strip("/") not in ("", ".")]
        matcher = re.compile("|".join(fnmatch.translate(p) for p in patterns))
        found = []
        for rel in files:
            if not rel.endswith(".py"):
                continue
            local = project.rel(rel)
            if testpaths and not any(local == p or local.startswith(p + "/") for p in testpaths):
                continue
            if matcher.match(rel.rsplit("/", 1)[-1]):
                found.append(Target(target_id=rel, runner=self.name, lang=self.lang, cwd=project.root,
                                    selector=local, cmd=(*base_cmd, local), path=rel))
        return found

    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage_dirs: Sequence[str] = ()) -> Invocation:
        events = workdir / "pytest-events.jsonl"
        junit = workdir / "junit.xml"
        pythonpath = os.pathsep.join(p for p in (str(PLUGIN_DIR), os.environ.get("PYTHONPATH", "")) if p)
        extra = {EVENTS_ENV: str(events), "PYTHONPATH": pythonpath}
        argv = [*toolchain.argv, "-p", PLUGIN_NAME, "--continue-on-collection-errors", "-q", "--color=no",
                "-o", "junit_family=xunit1", f"--junitxml={junit}"]
        if coverage_dirs:
            extra["COVERAGE_FILE"] = str(workdir / ".coverage")
            argv += [f"--cov={d}" for d in coverage_dirs]
            argv += [f"--cov-report=json:{workdir / 'coverage.json'}"]
        argv += [t.selector for t in targets]
        reports = (junit, workdir / "coverage.json") if coverage_dirs else (junit,)
        return Invocation(tuple(argv), project.dir(repo_root), toolchain.environ(extra), event_file=events,
                          report_files=reports)

    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        return PytestParser(repo_root, targets, invocation)


def _file_key(path: str) -> str:
    return os.path.normpath(path)


class PytestParser(BatchParser):
    def __init__(self, repo_root: Path, targets: Sequence[Target], invocation: Invocation) -> None:
        self.repo_root = repo_root
        self.invocation = invocation
        self.targets = {t.target_id: t for t in targets}
        self.by_file: dict[str, str] = {}
        for t in targets:
            for candidate in (repo_root / t.path, (repo_root / t.path).resolve()):
                self.by_file[_file_key(str(candidate))] = t.target_id
        self.collected: dict[str, int] = {}
        self.collect_errors: dict[str, str] = {}
        #: Files pytest's own collection rules exclude (``collect_ignore``): reported as skipped.
        self.ignored: set[str] = set()
        self.phases: dict[str, list[dict[str, Any]]] = {}
        self.case_target: dict[str, str] = {}
        self.finished_cases: dict[str, int] = {}
        self.first_t: dict[str, float] = {}
        self.last_t: dict[str, float] = {}
        self.current: str | None = None
        self.exitstatus: int | None = None
        self.saw_events = False

    @property
    def live(self) -> bool:
        return True

    def _target(self, file: str) -> str | None:
        return self.by_file.get(_file_key(file))

    def feed_event(self, line: str) -> None:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            return
        self.saw_events = True
        kind = event.get("ev")
        if kind == "collected":
            for file, count in (event.get("files") or {}).items():
                target = self._target(file)
                if target:
                    self.collected[target] = self.collected.get(target, 0) + int(count)
        elif kind == "ignored":
            target = self._target(str(event.get("file", "")))
            if target:
                self.ignored.add(target)
        elif kind == "collect_error":
            target = self._target(str(event.get("file", "")))
            if target:
                self.collect_errors[target] = str(event.get("longrepr", ""))
        elif kind == "start":
            target = self._target(str(event.get("file", "")))
            self.current = target
            if target:
                self.first_t.setdefault(target, float(event.get("t", 0.0)))
        elif kind == "report":
            target = self._target(str(event.get("file", "")))
            if target is None:
                return
            nodeid = str(event.get("nodeid"))
            self.case_target[nodeid] = target
            self.phases.setdefault(nodeid, []).append(event)
            self.last_t[target] = float(event.get("t", 0.0))
            if event.get("when") == "teardown":
                self.finished_cases[target] = self.finished_cases.get(target, 0) + 1
        elif kind == "finish":
            self.exitstatus = int(event.get("exitstatus", 0))
            self.current = None

    def current_target(self) -> str | None:
        return self.current

    def done_targets(self) -> set[str]:
        done = set(self.collect_errors) | self.ignored
        for target, count in self.collected.items():
            if self.finished_cases.get(target, 0) >= count:
                done.add(target)
        if self.exitstatus is not None:
            done |= set(self.targets)
        return done

    def failed_targets(self) -> set[str]:
        failed = {self.case_target[n] for n, phases in self.phases.items()
                  if any(p.get("outcome") == "failed" for p in phases)}
        return failed | set(self.collect_errors)

    def case_progress(self) -> dict[str, tuple[int, int]]:
        return {t: (self.finished_cases.get(t, 0), n) for t, n in self.collected.items()}

    def _case(self, nodeid: str, target: str, phases: list[dict[str, Any]]) -> CaseResult:
        outcome: CaseOutcome = "passed"
        message = longrepr = ""
        for phase in phases:
            when, result = phase.get("when"), phase.get("outcome")
            if result == "failed":
                outcome = "failed" if when == "call" else "error"
                message = str(phase.get("crash") or "")
                longrepr = str(phase.get("longrepr") or "")
                break
            if result == "skipped":
                outcome = "xfail" if phase.get("wasxfail") is not None else "skipped"
                message = str(phase.get("wasxfail") or phase.get("skip_reason") or "")
        duration = sum(float(p.get("duration") or 0.0) for p in phases)
        path = self.targets[target].path
        rest = nodeid.split("::", 1)[1] if "::" in nodeid else nodeid
        parsed = ParsedCase(group=path, name=rest, outcome=outcome, duration_s=duration, message=message,
                            exception_type=exception_type_of(message) if outcome in ("failed", "error") else "",
                            traceback=longrepr)
        return parsed.to_case(target, f"{path}::{rest}")

    def finish(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        if not self.saw_events:
            return self._from_junit(exit_code, stdout, stderr, killed)
        by_target: dict[str, list[CaseResult]] = {}
        for nodeid, phases in self.phases.items():
            target = self.case_target[nodeid]
            by_target.setdefault(target, []).append(self._case(nodeid, target, phases))
        results = []
        done = self.done_targets()
        for target_id in self.targets:
            if target_id not in done and killed:
                continue
            cases = sorted(by_target.get(target_id, []), key=lambda c: c.case_id)
            duration = max(self.last_t.get(target_id, 0.0) - self.first_t.get(target_id, 0.0), 0.0)
            if target_id in self.ignored and not cases:
                results.append(TargetResult(target_id=target_id, outcome="skipped", exit_code=exit_code,
                                            message="ignored by pytest's collection rules (collect_ignore/--ignore)"))
            elif target_id in self.collect_errors:
                results.append(error_result(target_id, self.collect_errors[target_id], exit_code=exit_code,
                                            duration_s=duration, cases=cases))
            elif not cases and exit_code not in (0, 1, NO_TESTS_COLLECTED, None) and self.exitstatus != 0:
                results.append(error_result(target_id, f"pytest exited {exit_code}\n{stderr or stdout}",
                                            exit_code=exit_code))
            else:
                results.append(result_from_cases(target_id, cases, exit_code=exit_code, duration_s=duration))
        return results

    def _from_junit(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        junit = self.invocation.report_files[0]
        if killed or not junit.is_file():
            if killed:
                return []
            reason = f"pytest exited {exit_code} without a report\n{stderr or stdout}"
            return [error_result(t, reason, exit_code=exit_code) for t in self.targets]
        try:
            parsed = parse_junit(junit.read_text(encoding="utf-8", errors="replace"))
        except ValueError as exc:
            return [error_result(t, str(exc), exit_code=exit_code) for t in self.targets]
        by_target: dict[str, list[CaseResult]] = {}
        for case in parsed:
            target = self._target(str(self.invocation.cwd / case.group))
            if target is not None:
                path = self.targets[target].path
                by_target.setdefault(target, []).append(case.to_case(target, f"{path}::{case.name}"))
        return [result_from_cases(t, sorted(by_target.get(t, []), key=lambda c: c.case_id), exit_code=exit_code,
                                  duration_s=sum(c.duration_s for c in by_target.get(t, [])))
                for t in self.targets]
