"""RSpec: one target per ``*_spec.rb``; a batch runs in one ``rspec --format json`` process."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codeplane.testing.model import CaseResult, Target, TargetResult
from codeplane.testing.reports.rspecjson import parse_rspec_json
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


class RspecRunner(Runner):
    name = "rspec"
    lang = "ruby"

    def default_toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        binstub = project.dir(repo_root) / "bin" / "rspec"
        if binstub.is_file():
            return Toolchain((str(binstub),))
        bundle = which("bundle")
        if bundle and (project.dir(repo_root) / "Gemfile").is_file():
            return Toolchain((bundle, "exec", "rspec"))
        found = which("rspec")
        return Toolchain((found,)) if found else None

    def targets(self, project: Project, repo_root: Path, files: Sequence[str], base_cmd: Sequence[str]) -> list[Target]:
        return self.file_targets(project, files, base_cmd, lambda rel: rel.endswith("_spec.rb"))

    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage: CoverageSetup | None = None) -> Invocation:
        report = workdir / "rspec.json"
        argv = (*toolchain.argv, "--format", "json", "--out", str(report), "--format", "progress", "--no-color",
                *(t.selector for t in targets))
        return Invocation(argv, project.dir(repo_root), toolchain.environ(), report_files=(report,))

    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        return RspecParser(project, targets, invocation.report_files[0])


class RspecParser(BatchParser):
    def __init__(self, project: Project, targets: Sequence[Target], report: Path) -> None:
        self.project = project
        # The report names files without a leading ``./`` (``parse_rspec_json``), as ``operand`` may give them.
        self.targets = {t.selector.removeprefix("./"): t.target_id for t in targets}
        self.report = report

    def finish(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        if killed:
            return []
        try:
            parsed = parse_rspec_json(self.report.read_text(encoding="utf-8", errors="replace"))
        except (OSError, ValueError) as exc:
            return [error_result(t, f"{exc}\n{stderr}", exit_code=exit_code) for t in self.targets.values()]
        load_errors = [c for c in parsed if c.name == "(load)"]
        by_target: dict[str, list[CaseResult]] = {}
        for case in parsed:
            target = self.targets.get(case.group)
            if target:
                by_target.setdefault(target, []).append(case.to_case(target, f"{target}::{case.name}"))
        results = []
        for target_id in self.targets.values():
            cases = by_target.get(target_id, [])
            if not cases and load_errors:
                results.append(error_result(target_id, load_errors[0].traceback, exit_code=exit_code))
            else:
                results.append(result_from_cases(target_id, cases, exit_code=exit_code,
                                                 duration_s=sum(c.duration_s for c in cases)))
        return results
