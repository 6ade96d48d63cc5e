"""Maven (Surefire) and Gradle: one target per test class file; reports are JUnit XML per class.

Both build into a shared directory (``target/``, ``build/``), so all of a project's targets run in one
process (``one_process_per_project``); parallel builds into one output directory corrupt each other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from codeplane.testing.model import CaseResult, Target, TargetResult
from codeplane.testing.reports.junit import parse_junit
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

#: Surefire's default includes (``**/Test*.java``, ``**/*Test.java``, ``**/*Tests.java``, ``**/*TestCase.java``).
_CLASS_FILE = re.compile(r"(?:^|/)(?:Test\w*|\w*Test|\w*Tests|\w*TestCase)\.(?:java|kt|groovy|scala)$")
_SOURCE_ROOTS = ("src/test/java/", "src/test/kotlin/", "src/test/groovy/", "src/test/scala/")


def class_name(local: str) -> str | None:
    """``src/test/java/com/x/FooTest.java`` → ``com.x.FooTest``."""
    for root in _SOURCE_ROOTS:
        if local.startswith(root) and _CLASS_FILE.search(local):
            return local[len(root):].rsplit(".", 1)[0].replace("/", ".")
    return None


class _JvmRunner(Runner):
    one_process_per_project = True
    reports_dir: str

    def targets(self, project: Project, repo_root: Path, files: Sequence[str], base_cmd: Sequence[str]) -> list[Target]:
        found = []
        for rel in files:
            fqn = class_name(project.rel(rel))
            if fqn:
                found.append(Target(target_id=rel, runner=self.name, lang="java", cwd=project.root, selector=fqn,
                                    cmd=tuple(self._argv(base_cmd, [fqn])), path=rel))
        return found

    def _argv(self, base: Sequence[str], classes: Sequence[str]) -> list[str]:
        raise NotImplementedError

    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage: CoverageSetup | None = None) -> Invocation:
        reports = project.dir(repo_root) / self.reports_dir
        files = tuple(reports / f"TEST-{t.selector}.xml" for t in targets)
        for stale in files:
            stale.unlink(missing_ok=True)
        return Invocation(tuple(self._argv(toolchain.argv, [t.selector for t in targets])), project.dir(repo_root),
                          toolchain.environ(), report_files=files)

    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        return JunitFilesParser(invocation, targets)


class MavenRunner(_JvmRunner):
    name = "maven"
    lang = "java"
    reports_dir = "target/surefire-reports"

    def default_toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        wrapper = project.dir(repo_root) / "mvnw"
        found = str(wrapper) if wrapper.is_file() else which("mvn")
        return Toolchain((found,)) if found else None

    def _argv(self, base: Sequence[str], classes: Sequence[str]) -> list[str]:
        return [*base, "-B", "-Dtest=" + ",".join(classes), "-Dsurefire.failIfNoSpecifiedTests=false", "test"]


class GradleRunner(_JvmRunner):
    name = "gradle"
    lang = "java"
    reports_dir = "build/test-results/test"

    def default_toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        wrapper = project.dir(repo_root) / "gradlew"
        found = str(wrapper) if wrapper.is_file() else which("gradle")
        return Toolchain((found,)) if found else None

    def _argv(self, base: Sequence[str], classes: Sequence[str]) -> list[str]:
        return [*base, "test", "--console=plain", *(arg for c in classes for arg in ("--tests", c))]


class JunitFilesParser(BatchParser):
    """One JUnit XML file per target (``TEST-<class>.xml``)."""

    def __init__(self, invocation: Invocation, targets: Sequence[Target]) -> None:
        self.files = dict(zip((t.target_id for t in targets), invocation.report_files, strict=True))

    def finish(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        results = []
        for target_id, report in self.files.items():
            if not report.is_file():
                if not killed:
                    results.append(error_result(target_id, f"no report {report.name}\n{stdout[-2000:]}{stderr}",
                                                exit_code=exit_code))
                continue
            try:
                parsed = parse_junit(report.read_text(encoding="utf-8", errors="replace"))
            except ValueError as exc:
                results.append(error_result(target_id, str(exc), exit_code=exit_code))
                continue
            cases: list[CaseResult] = [c.to_case(target_id, f"{target_id}::{c.name}") for c in parsed]
            results.append(result_from_cases(target_id, cases, exit_code=exit_code,
                                             duration_s=sum(c.duration_s for c in cases)))
        return results
