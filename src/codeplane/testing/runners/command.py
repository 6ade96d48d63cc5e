"""Custom runners from config (``tests.custom``): a command template per file pattern, judged by exit code.

Used for tools CodePlane has no adapter for (playwright, a shell script). There is no machine format, so
the target has no per-case results: exit 0 is ``passed``, anything else ``failed`` with the output tail.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codeplane.testing.model import TRACEBACK_CHARS, Target, TargetResult, clip_tail
from codeplane.testing.runners.base import (
    BatchParser,
    CoverageSetup,
    Invocation,
    Project,
    Runner,
    Toolchain,
    operand,
    which,
)


class CommandRunner(Runner):
    name = "command"
    lang = "any"
    multi_target = False

    def default_toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        cmd = project.options.get("cmd")
        if not isinstance(cmd, list | tuple) or not cmd:
            return None
        first = str(cmd[0])
        return Toolchain(tuple(str(c) for c in cmd)) if which(first) or (repo_root / first).is_file() else None

    def toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        return self.default_toolchain(project, repo_root)

    def targets(self, project: Project, repo_root: Path, files: Sequence[str], base_cmd: Sequence[str]) -> list[Target]:
        # ``{path}`` may be a command's whole argument (``sh {path}``): a leading ``-`` must not make it an option.
        return [Target(target_id=rel, runner=str(project.options.get("name", self.name)), lang=self.lang,
                       cwd=".", selector=operand(rel), cmd=tuple(a.replace("{path}", operand(rel)) for a in base_cmd),
                       path=rel)
                for rel in files]

    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage: CoverageSetup | None = None) -> Invocation:
        (target,) = targets
        argv = tuple(a.replace("{path}", target.selector) for a in toolchain.argv)
        return Invocation(argv, repo_root, toolchain.environ())

    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        return ExitCodeParser(targets[0].target_id)


class ExitCodeParser(BatchParser):
    def __init__(self, target_id: str) -> None:
        self.target_id = target_id

    def finish(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        if killed:
            return []
        if exit_code == 0:
            return [TargetResult(target_id=self.target_id, outcome="passed", exit_code=0)]
        tail = clip_tail(f"{stdout}\n{stderr}".strip(), TRACEBACK_CHARS)
        return [TargetResult(target_id=self.target_id, outcome="failed", exit_code=exit_code, message=tail)]
