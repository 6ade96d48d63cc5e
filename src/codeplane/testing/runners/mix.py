"""``mix test`` (ExUnit): one target per ``*_test.exs``, one process each.

ExUnit has no built-in machine format, and its summary counts are per process, so each file runs alone
and its passing cases are counted, not listed (``unlisted_passed``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codeplane.testing.model import Target, TargetResult
from codeplane.testing.reports.exunit import parse_exunit
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


class MixRunner(Runner):
    name = "mix"
    lang = "elixir"
    multi_target = False

    def default_toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        found = which("mix")
        return Toolchain((found, "test")) if found else None

    def targets(self, project: Project, repo_root: Path, files: Sequence[str], base_cmd: Sequence[str]) -> list[Target]:
        return self.file_targets(project, files, base_cmd, lambda rel: rel.endswith("_test.exs"))

    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage: CoverageSetup | None = None) -> Invocation:
        (target,) = targets
        return Invocation((*toolchain.argv, "--no-color", target.selector), project.dir(repo_root),
                          toolchain.environ({"MIX_ENV": "test"}))

    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        return ExUnitParser(targets[0].target_id)


class ExUnitParser(BatchParser):
    def __init__(self, target_id: str) -> None:
        self.target_id = target_id

    def finish(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        if killed:
            return []
        report = parse_exunit(stdout)
        if report.total == 0 and exit_code not in (0, None):
            return [error_result(self.target_id, stderr or stdout, exit_code=exit_code)]
        cases = [c.to_case(self.target_id, f"{self.target_id}::{c.name}") for c in report.failures]
        return [result_from_cases(self.target_id, cases, exit_code=exit_code, duration_s=0.0,
                                  unlisted_passed=report.passed)]
