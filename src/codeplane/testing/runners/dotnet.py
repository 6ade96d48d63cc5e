"""``dotnet test``: one target per test project (``*.csproj`` referencing a test SDK); TRX report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codeplane.testing.model import Target, TargetResult
from codeplane.testing.reports.trx import parse_trx
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

TEST_SDK_MARKERS = ("Microsoft.NET.Test.Sdk", "xunit", "NUnit", "MSTest")


def is_test_project(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(marker in text for marker in TEST_SDK_MARKERS)


class DotnetRunner(Runner):
    name = "dotnet"
    lang = "csharp"
    multi_target = False

    def default_toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        found = which("dotnet")
        return Toolchain((found, "test")) if found else None

    def targets(self, project: Project, repo_root: Path, files: Sequence[str], base_cmd: Sequence[str]) -> list[Target]:
        return self.file_targets(project, files, base_cmd,
                                 lambda rel: rel.endswith(".csproj") and is_test_project(repo_root / rel))

    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage: CoverageSetup | None = None) -> Invocation:
        (target,) = targets
        report = workdir / "results.trx"
        argv = (*toolchain.argv, target.selector, "--nologo", "--logger", f"trx;LogFileName={report}")
        return Invocation(argv, project.dir(repo_root), toolchain.environ({"DOTNET_CLI_TELEMETRY_OPTOUT": "1"}),
                          report_files=(report,))

    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        return TrxParser(targets[0].target_id, invocation.report_files[0])


class TrxParser(BatchParser):
    def __init__(self, target_id: str, report: Path) -> None:
        self.target_id = target_id
        self.report = report

    def finish(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        if killed:
            return []
        try:
            parsed = parse_trx(self.report.read_text(encoding="utf-8", errors="replace"))
        except (OSError, ValueError) as exc:
            return [error_result(self.target_id, f"{exc}\n{stdout[-2000:]}{stderr}", exit_code=exit_code)]
        cases = [c.to_case(self.target_id, f"{self.target_id}::{c.group}.{c.name}" if c.group and
                           not c.name.startswith(c.group) else f"{self.target_id}::{c.name}") for c in parsed]
        return [result_from_cases(self.target_id, cases, exit_code=exit_code,
                                  duration_s=sum(c.duration_s for c in cases))]
