"""What a test runner adapter provides (§11.5, §11.6).

A :class:`Runner` knows four things about one tool (pytest, ``go test``, ...): which files are its targets
inside a project, how to find the executable (the repo's environment first), the argv that runs a batch
of targets in ONE process with a machine-readable report, and how to parse that report — incrementally
when the tool streams it, so the executor can show progress and time out a single target.
"""

from __future__ import annotations

import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from codeplane.testing.model import (
    TRACEBACK_CHARS,
    CaseResult,
    Target,
    TargetOutcome,
    TargetResult,
    clip_tail,
)


@dataclass(frozen=True)
class Project:
    """One runner rooted at one directory (a ``go.mod``, a ``Cargo.toml``, a ``pytest.ini``)."""

    runner: str
    #: Repo-relative directory, ``"."`` for the repository root.
    root: str
    #: How it was found: ``config``, ``marker:<file>`` or ``default``.
    source: str
    #: Runner options from config (``cmd``, ``timeout_sec``, ``env``).
    options: Mapping[str, object] = field(default_factory=dict, hash=False, compare=False)

    def dir(self, repo_root: Path) -> Path:
        return repo_root if self.root == "." else repo_root / self.root

    def rel(self, repo_rel: str) -> str:
        """``repo_rel`` relative to this project's root."""
        return repo_rel if self.root == "." else repo_rel[len(self.root) + 1:]

    def repo_rel(self, project_rel: str) -> str:
        return project_rel if self.root == "." else f"{self.root}/{project_rel}"


#: What a pytest session sets about itself: a server started under one (an agent harness's own tests, xdist
#: workers) must not hand it to the suites it runs, where a plugin would take the child for one of its workers.
_CALLER_SESSION = frozenset({"PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID",
                             "PYTEST_CURRENT_TEST", "PYTEST_VERSION"})


@dataclass(frozen=True)
class Toolchain:
    """The resolved command prefix and environment additions for a project."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    #: From config ``cmd``: a wrapper CodePlane did not choose (tox, a container) may not pass its
    #: environment through, so runners that read an environment-driven stream keep a fallback report.
    configured: bool = False

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key not in _CALLER_SESSION}
        for key, value in self.env.items():
            env[key] = value.replace("{PATH}", os.environ.get("PATH", ""))
        env.update(extra or {})
        return env


@dataclass(frozen=True)
class CoverageSetup:
    """A coverage run (``run_test_targets(coverage=true)``): where each process writes what it recorded."""

    out_dir: Path
    #: The repository (only code under it is recorded).
    root: Path
    #: JSON ``{absolute path: [[first, last], ...]}`` of changed lines whose execution is counted line by line.
    lines_file: Path | None = None


@dataclass(frozen=True)
class Invocation:
    """One process: argv, cwd, env, and where its machine-readable output goes."""

    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str]
    #: A JSON-lines file the tool appends to while it runs (pytest plugin), read live.
    event_file: Path | None = None
    #: Report files written by the tool (JUnit XML, JSON), read when it exits.
    report_files: tuple[Path, ...] = ()


class BatchParser(ABC):
    """Parses one batch process's output. Fed live when the tool streams; finished once it exits."""

    def feed_stdout(self, line: str) -> None:  # noqa: B027 - optional hook
        """A line of stdout (go -json and libtest stream results here)."""

    def feed_event(self, line: str) -> None:  # noqa: B027 - optional hook
        """A line of the invocation's event file."""

    def current_target(self) -> str | None:
        """The target running right now, if the stream says (enables per-target timeouts)."""
        return None

    def importing(self) -> bool:
        """``current_target`` is being imported (collected), not run: it gets the start-up budget, not its own."""
        return False

    def done_targets(self) -> set[str]:
        """Targets whose results are complete."""
        return set()

    def failed_targets(self) -> set[str]:
        """Targets already known to have a failing case (lets fail-fast stop mid-batch)."""
        return set()

    def case_progress(self) -> dict[str, tuple[int, int]]:
        """Per target: (cases finished, cases collected), when the stream knows."""
        return {}

    @property
    def live(self) -> bool:
        """True if ``current_target``/``done_targets`` are meaningful while the process runs."""
        return False

    @abstractmethod
    def finish(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        """Results for every target the stream or reports cover. Targets missing from the answer
        did not run (the executor decides whether they were killed, timed out or need another go)."""

    def died(self) -> bool:
        """After :meth:`finish`: the process ended before its runner finished (a crash, ``os._exit``): the targets
        missing from the answer were not at fault and run again in processes of their own."""
        return False

    def partial(self, target_id: str) -> tuple[list[CaseResult], str | None]:
        """After :meth:`finish` of a killed process: the cases of ``target_id`` that had finished, and the case
        running when it was killed (``None``: not known), so a timeout still reports what ran."""
        return [], None

    def claimed_targets(self) -> set[str] | None:
        """Of a process sharing a pool: the shared targets it took (None: it shared nothing, and reported
        every target it was given)."""
        return None

    def warnings(self) -> list[str]:
        """After :meth:`finish`: what the run's answer should say about how the process ran its tests."""
        return []


class Runner(ABC):
    name: ClassVar[str]
    lang: ClassVar[str]
    #: Several targets in one process (pytest with several files). False: one process per target.
    multi_target: ClassVar[bool] = True
    #: All of a project's targets in one process (builds sharing an output directory: Maven, Gradle).
    one_process_per_project: ClassVar[bool] = False
    #: Processes can share targets through a pool (``testing/pool.py``; :meth:`share_pool`).
    shares_pools: ClassVar[bool] = False
    #: A target's cases run alone (``target::case`` ids): a timeout's advice may say so; cargo's binaries run whole.
    runs_cases: ClassVar[bool] = False

    def toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        """The command prefix, from config ``cmd`` first, else :meth:`default_toolchain`. None: not installed."""
        argv = configured_cmd(project)
        if argv:
            if shutil.which(argv[0], path=self._search_path(project, repo_root)) or Path(argv[0]).is_file():
                return Toolchain(argv, configured=True)
            return None
        return self.default_toolchain(project, repo_root)

    def _search_path(self, project: Project, repo_root: Path) -> str:
        return os.environ.get("PATH", "")

    @abstractmethod
    def default_toolchain(self, project: Project, repo_root: Path) -> Toolchain | None: ...

    @abstractmethod
    def targets(self, project: Project, repo_root: Path, files: Sequence[str], base_cmd: Sequence[str]) -> list[Target]:
        """Targets among ``files`` (repo-relative, all inside the project and claimed by it)."""

    def unread_config(self, project: Project, repo_root: Path) -> tuple[str, str] | None:
        """(config file, why) when the project's config decides which files are tests and could not be read, so
        :meth:`targets` followed the runner's defaults; None when it was read or decides nothing."""
        return None

    def file_targets(self, project: Project, files: Sequence[str], base_cmd: Sequence[str],
                     accept: Callable[[str], bool]) -> list[Target]:
        """One target per accepted file, run as ``base_cmd <file relative to the project>``."""
        return [Target(target_id=rel, runner=self.name, lang=self.lang, cwd=project.root,
                       selector=operand(project.rel(rel)), cmd=(*base_cmd, operand(project.rel(rel))), path=rel)
                for rel in files if accept(rel)]

    @abstractmethod
    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage: CoverageSetup | None = None) -> Invocation:
        """The argv for ``targets`` in one process (one target when not ``multi_target``).

        ``rerun``: the retry of failed targets (bypass result caches). ``coverage``: record which code each
        test runs, where the runner supports it (pytest).
        """

    @abstractmethod
    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        ...

    def retry_cases(self, target: Target, result: TargetResult) -> tuple[str, ...] | None:
        """The cases to run again after ``result`` failed, when the runner can run a target's cases alone (the
        executor then re-runs only those and carries the rest over), else None: the whole target again."""
        return None

    def retried_by(self, case: str) -> str:
        """The case name (after ``target::``) that :meth:`retry_cases` runs ``case`` with: Go's subtest ``T/sub``
        runs with its top-level test."""
        return case.split("/", 1)[0]

    def serial(self, project: Project, repo_root: Path, invocation: Invocation) -> Invocation:
        """``invocation`` with the runner's own parallelism turned off, for a process that runs beside
        CodePlane's other workers (they already fill the cores). Runners whose argv always runs serially
        (``go test -p 1``, ``jest --runInBand``) return it unchanged."""
        return invocation

    def cache_bytecode(self, invocation: Invocation, directory: Path) -> Invocation:
        """``invocation`` made to keep compiled bytecode under ``directory`` when its environment forbids
        writing it beside the sources (``core.bytecode``). Runners that run no Python return it unchanged."""
        return invocation

    def share_pool(self, invocation: Invocation, pool: Path) -> Invocation:
        """``invocation``, whose targets include every target of ``pool``, made to take those one by one
        from the pool shared with other processes (only when :attr:`shares_pools`)."""
        raise NotImplementedError(f"{self.name} does not share pools")

    def prepare(self, project: Project, repo_root: Path, toolchain: Toolchain) -> tuple[str, ...] | None:
        """An argv run once per project before any batch (e.g. build all test binaries), or None."""
        return None

    def missing_hint(self, project: Project | None = None) -> str:
        configured = configured_cmd(project) if project is not None else None
        if configured:
            # The key is set already: naming it as the cure sent users to a setting they had made (QA50 #8).
            return (f"{configured[0]} (tests.runners.{self.name}.cmd) is not an executable here: fix that path in "
                    ".codeplane/config.yaml, or install it there")
        return f"install {self.name} or set tests.runners.{self.name}.cmd in .codeplane/config.yaml"


def configured_cmd(project: Project) -> tuple[str, ...] | None:
    """The project's ``tests.runners.<runner>.cmd`` (None: not set)."""
    configured = project.options.get("cmd")
    if isinstance(configured, Sequence) and not isinstance(configured, str) and configured:
        return tuple(str(a) for a in configured)
    return None


def operand(path: str) -> str:
    """``path`` (relative) as a command-line operand no tool reads as anything but a path: ``-k/t.py`` would be
    pytest's ``-k`` option and ``@x/t.py`` an argument file (argparse's ``fromfile_prefix_chars``: pytest >= 8.2), so
    those get ``./``. A ``--`` before the paths is no cure: argparse still expands ``@`` after it, vitest drops what
    follows it from its file filters (and runs every file), and options appended later (``-n 0``) would become
    paths. Other paths are kept as they are, so commands shown to the agent read as before. (``lint.catalog.operand``
    is the linters' twin.)"""
    return f"./{path}" if path.startswith(("-", "@")) else path


def which(name: str, *dirs: Path) -> str | None:
    """``name`` in ``dirs`` first (a project's ``node_modules/.bin``, ``.venv/bin``), then on PATH."""
    for directory in dirs:
        candidate = directory / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def result_from_cases(target_id: str, cases: Sequence[CaseResult], *, exit_code: int | None,
                      duration_s: float, message: str = "", unlisted_passed: int = 0) -> TargetResult:
    """A target's outcome from its cases: any failing case fails it; only skips make it ``skipped``."""
    if any(c.failing for c in cases):
        outcome: TargetOutcome = "failed"
    elif cases and all(c.outcome in ("skipped", "xfail") for c in cases) and not unlisted_passed:
        outcome = "skipped"
    elif cases or unlisted_passed:
        outcome = "passed"
    else:
        outcome = "skipped"
    return TargetResult(target_id=target_id, outcome=outcome, cases=tuple(cases), duration_s=round(duration_s, 4),
                        exit_code=exit_code, message=message, unlisted_passed=unlisted_passed)


def error_result(target_id: str, message: str, *, exit_code: int | None, duration_s: float = 0.0,
                 cases: Sequence[CaseResult] = ()) -> TargetResult:
    """The target could not run properly (collection/build error, runner crash, unreadable report)."""
    return TargetResult(target_id=target_id, outcome="error", cases=tuple(cases), duration_s=round(duration_s, 4),
                        exit_code=exit_code, message=clip_tail(message.strip(), TRACEBACK_CHARS))
