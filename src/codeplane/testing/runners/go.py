"""``go test``: one target per package directory holding ``*_test.go``; a batch runs in one ``go test -json``.

A target with ``cases`` (impact selection, ``pkg::TestX`` ids) runs only those tests (``-run``, per level).

A test binary that stops early (a panic, ``os.Exit``) never reports the tests after it: a failed package's
top-level tests and examples (read from its ``_test.go`` files) that never reported are ``error`` cases saying
they never ran, so the package does not look fully exercised.

``-p 1`` keeps the packages of one batch sequential: CodePlane's own workers provide the parallelism, and
the per-target watchdog needs "the package running now" to be unambiguous.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from codeplane.testing.model import CaseResult, Target, TargetResult
from codeplane.testing.reports.gojson import GoJsonStream
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
from codeplane.testing.runners.unmatched import unmatched_message

_MODULE = re.compile(r"^\s*module\s+(\S+)", re.MULTILINE)
#: A top-level test function's name: what a ``-run`` alternative may hold unescaped.
GO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def go_run_pattern(cases: Sequence[str]) -> str:
    """``-run`` for these tests: top-level ones (their subtests run too) as ``^(TestA|TestB)$``; subtests
    (``TestDiff/Project2/Inequal``) one alternation per level, as ``go test`` splits ``-run`` at ``/``
    (``^(TestDiff)$/^(Project2)$/^(Inequal)$``). Several subtests may select their cross product, a few more, never
    fewer; cases of different depths run by their top-level tests whole (a shorter one's subtests must all run).
    A subtest id used to run the whole package."""
    split = [case.split("/") for case in sorted(set(cases))]
    depth = {len(parts) for parts in split}
    if depth != {1} and len(depth) == 1:
        levels = [sorted({parts[i] for parts in split}) for i in range(depth.pop())]
    else:
        levels = [sorted({parts[0] for parts in split})]
    return "/".join("^(" + "|".join(_GO_SPECIAL.sub(r"\\\1", name) for name in level) + ")$" for level in levels)


#: Regular-expression characters a subtest's name may hold (``t.Run("a+b", ...)``), escaped for ``-run``.
_GO_SPECIAL = re.compile(r"([\\.+*?()|\[\]{}^$])")


def module_path(project_dir: Path) -> str:
    try:
        match = _MODULE.search((project_dir / "go.mod").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return ""
    return match.group(1).strip('"') if match else ""


def _skipped_dir(local_dir: str) -> bool:
    return any(part in {"testdata", "vendor"} or part.startswith((".", "_"))
               for part in local_dir.split("/") if part)


class GoRunner(Runner):
    name = "go"
    lang = "go"
    runs_cases = True

    def default_toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        found = which("go")
        return Toolchain((found, "test")) if found else None

    def targets(self, project: Project, repo_root: Path, files: Sequence[str], base_cmd: Sequence[str]) -> list[Target]:
        dirs: set[str] = set()
        for rel in files:
            if rel.endswith("_test.go"):
                local_dir = project.rel(rel).rpartition("/")[0]
                if not _skipped_dir(local_dir):
                    dirs.add(local_dir)
        found = []
        for local_dir in sorted(dirs):
            selector = f"./{local_dir}" if local_dir else "."
            target_id = project.repo_rel(local_dir) if local_dir else project.root
            found.append(Target(target_id=target_id, runner=self.name, lang=self.lang, cwd=project.root,
                                selector=selector, cmd=(*base_cmd, "-json", selector), path=""))
        return found

    def retry_cases(self, target: Target, result: TargetResult) -> tuple[str, ...] | None:
        """The failing top-level tests (``-run`` runs their subtests with them), when some failed and nothing
        failed outside a test (a build error, a package-level panic): blackfriday's one failing test re-ran
        the whole package, 10 s for a 0.1 s test."""
        if any("/" in case for case in target.cases):
            # Asked for subtests: the retry runs the same selection (its top-level tests would run their sibling
            # subtests, failures the run was never asked about).
            return None
        prefix = f"{target.target_id}::"
        failing = [c.case_id.removeprefix(prefix).split("/", 1)[0] for c in result.cases if c.failing]
        if result.outcome != "failed" or not failing or not all(GO_NAME.match(n) for n in failing):
            return None
        return tuple(sorted(set(failing)))

    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage: CoverageSetup | None = None) -> Invocation:
        argv = [*toolchain.argv, "-json", "-p", "1"]
        if rerun:
            argv.append("-count=1")
        if targets and all(t.cases for t in targets):
            # One -run for the whole process: the union of the packages' cases (a package may run a same-named
            # test it was not asked for, never fewer); a whole package in the batch runs everything.
            argv += ["-run", go_run_pattern([c for t in targets for c in t.cases])]
        argv += [t.selector for t in targets]
        return Invocation(tuple(argv), project.dir(repo_root), toolchain.environ())

    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        module = module_path(project.dir(repo_root))
        by_package = {}
        for t in targets:
            local = t.selector.removeprefix("./").removeprefix(".")
            by_package[f"{module}/{local}" if local else module] = t.target_id
        dirs = {t.target_id: project.dir(repo_root) / t.selector for t in targets}
        return GoParser(by_package, {t.target_id: t.cases for t in targets if t.cases}, dirs)


class GoParser(BatchParser):
    def __init__(self, by_package: dict[str, str], wanted: dict[str, Sequence[str]] | None = None,
                 dirs: dict[str, Path] | None = None) -> None:
        self.by_package = by_package
        #: Target → its package directory (to name the tests a binary that stopped early never reached).
        self.dirs = dirs or {}
        #: Target → the top-level tests asked for by name (``-run``): one that did not run is not there.
        self.wanted = wanted or {}
        self.stream = GoJsonStream()

    @property
    def live(self) -> bool:
        return True

    def feed_stdout(self, line: str) -> None:
        self.stream.feed(line)

    def current_target(self) -> str | None:
        return self.by_package.get(self.stream.current or "")

    def done_targets(self) -> set[str]:
        return {self.by_package[p] for p in self.stream.finished() if p in self.by_package}

    def failed_targets(self) -> set[str]:
        return {self.by_package[p] for p, state in self.stream.packages.items()
                if state.outcome == "fail" and p in self.by_package}

    def partial(self, target_id: str) -> tuple[list[CaseResult], str | None]:
        """A killed package's finished tests, and the test running when it was killed (the innermost started and
        not ended): a timeout said only "exceeded the per-target timeout", though ``go test -json`` had named both."""
        package = next((p for p, t in self.by_package.items() if t == target_id), None)
        state = self.stream.packages.get(package or "")
        if package is None or state is None:
            return [], None
        cases = [c.to_case(target_id, f"{target_id}::{c.name}") for c in self.stream.cases(package)
                 if state.tests[c.name][0] is not None]
        running = [name for name, (action, _) in state.tests.items() if action is None]
        innermost = max(running, key=lambda name: name.count("/"), default=None)
        return cases, f"{target_id}::{innermost}" if innermost else None

    def finish(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        results = []
        finished = self.stream.finished()
        for package, target_id in self.by_package.items():
            state = self.stream.packages.get(package)
            if package not in finished or state is None:
                if not killed:
                    reason = stderr.strip() or "\n".join(self.stream.stray) or f"go test exited {exit_code}"
                    results.append(error_result(target_id, reason, exit_code=exit_code))
                continue
            cases = [c.to_case(target_id, f"{target_id}::{c.name}") for c in self.stream.cases(package)]
            ran = {c.name for c in self.stream.cases(package)}  # subtests by their full names, parents too
            if state.outcome == "fail" and any(c.failing for c in cases):
                cases += self._never_ran(target_id, ran)
            missing = sorted(set(self.wanted.get(target_id, ())) - ran)
            if missing and state.outcome != "fail":
                # ``go test -run '^(TestTypo)$'`` says "ok ... [no tests to run]": a pass the package never had.
                # Settled: running it again cannot find the test (it is the agent's id to correct, by the names).
                held = [*declared_tests(self.dirs[target_id]), *sorted(ran)] if target_id in self.dirs else sorted(ran)
                held = list(dict.fromkeys(held))
                results.append(replace(error_result(
                    target_id, unmatched_message(target_id, missing, held, len(held), sep="/"),
                    exit_code=exit_code, duration_s=state.elapsed_s, cases=cases), settled=True))
            elif state.outcome == "fail" and not any(c.failing for c in cases):
                reason = self.stream.package_output(package) + "\n" + stderr
                results.append(error_result(target_id, reason, exit_code=exit_code, duration_s=state.elapsed_s,
                                            cases=cases))
            else:
                results.append(result_from_cases(target_id, cases, exit_code=exit_code, duration_s=state.elapsed_s))
        return results

    def _never_ran(self, target_id: str, ran: set[str]) -> list[CaseResult]:
        """The top-level tests and examples of a failed package that never reported (in the selection asked for)."""
        directory = self.dirs.get(target_id)
        if directory is None:
            return []
        asked = {case.split("/", 1)[0] for case in self.wanted.get(target_id, ())}
        stopped = [name for name in declared_tests(directory) if name not in ran and (not asked or name in asked)]
        why = "never ran: the test binary stopped before it (a panic or an exit in an earlier test)"
        return [CaseResult(f"{target_id}::{name}", target_id, "error", message=why) for name in stopped]


_TEST_FUNC = re.compile(r"^func (Test[^a-z]\w*|Test)\(\w+ \*testing\.T\)", re.MULTILINE)
_EXAMPLE_FUNC = re.compile(r"^func (Example\w*)\(\) \{(?P<body>.*?)^\}", re.MULTILINE | re.DOTALL)
_OUTPUT_COMMENT = re.compile(r"^\s*// (?:Unordered output|Output):", re.MULTILINE | re.IGNORECASE)
#: A file built only under some condition may not be in the binary: its tests are not counted as missing.
_CONSTRAINED = re.compile(r"^//(?:go:build | \+build )", re.MULTILINE)
_GOOS_ARCH = re.compile(r"_(?:aix|android|darwin|dragonfly|freebsd|illumos|ios|js|linux|netbsd|openbsd|plan9|"
                        r"solaris|wasip1|windows|386|amd64|arm|arm64|loong64|mips\w*|ppc64\w*|riscv64|s390x|wasm)"
                        r"_test\.go$")


def declared_tests(directory: Path) -> list[str]:
    """Top-level tests and run examples (those with an output comment) of the package's unconstrained test files."""
    names: list[str] = []
    for path in sorted(directory.glob("*_test.go")):
        if _GOOS_ARCH.search(path.name):
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _CONSTRAINED.search(text):
            continue
        names += _TEST_FUNC.findall(text)
        names += [m.group(1) for m in _EXAMPLE_FUNC.finditer(text) if _OUTPUT_COMMENT.search(m["body"])]
    return sorted(set(names))
