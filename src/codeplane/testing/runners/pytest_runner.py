"""pytest: one target per test file; a batch of files runs in one pytest process.

Results come from CodePlane's event plugin (``_pytest_plugin``), loaded with ``-p`` from a directory put on
``PYTHONPATH`` (parsed by ``pytest_events.py``). Under a ``cmd`` from config (a wrapper such as tox or a
container may not pass the environment through) JUnit XML is written too, and parsed when the plugin produced
nothing; CodePlane's own command always passes it, so there the XML would only cost time (≈60 µs per test).
Failed targets are retried in a fresh process, only their failing cases where those are what failed: a re-run in
the same interpreter passed on state the first attempt left behind (a module cache), calling a real failure flaky.
A coverage run also loads ``codeplane_pytest_coverage`` (per-test evidence of the code each test ran, see
``coverage_record.py``).
The repo's ``.venv`` (or ``venv``) interpreter runs pytest when it has pytest installed (§11.5, issue: "the
runner's environment is the repo's"). A repository whose pytest options start pytest-xdist workers (``-n``
in ``addopts``, ``PYTEST_ADDOPTS`` or a configured ``cmd``) gets ``-n 0`` appended when its process runs beside other
CodePlane workers: xdist workers inside each of them would oversubscribe the cores, and xdist's loop cannot
share a pool. Where the environment forbids writing bytecode (``PYTHONDONTWRITEBYTECODE``), each process
caches it under ``.codeplane/pycache`` instead (``core.bytecode``), unless ``tests.bytecode_cache`` is off:
otherwise every worker recompiles pytest, its plugins and the code under test at each start. What is missing
from that tree is read from beside its source when compiled there (the plugin directory's ``sitecustomize``):
the standard library, pytest and the plugins are compiled by their installers, so a cold tree costs a first run
only the repository's own modules, as a plain ``pytest`` does.
"""

from __future__ import annotations

import configparser
import fnmatch
import json
import os
import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from codeplane.core.bytecode import redirected_environment
from codeplane.testing.model import Target, TargetResult
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
from codeplane.testing.runners.pytest_events import POOL_ENV, PytestParser

PLUGIN_DIR = Path(__file__).resolve().parent.parent / "_pytest_plugin"
PLUGIN_NAME = "codeplane_pytest_events"
EVENTS_ENV = "CODEPLANE_PYTEST_EVENTS"
#: Cases to run per file (the events plugin deselects the rest): one collection per file, any number of cases.
SELECT_ENV = "CODEPLANE_PYTEST_SELECT"
#: Read a ``.pyc`` missing from the prefix tree beside its source (``_pytest_plugin/sitecustomize.py``).
PYCACHE_BESIDE_ENV = "CODEPLANE_PYCACHE_BESIDE"
COVERAGE_PLUGIN = "codeplane_pytest_coverage"
COVERAGE_OUT_ENV = "CODEPLANE_COVERAGE_OUT"
COVERAGE_ROOT_ENV = "CODEPLANE_COVERAGE_ROOT"
COVERAGE_LINES_ENV = "CODEPLANE_COVERAGE_LINES"
DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
#: What a subtest's case id adds to its test's: `` [msg]`` and/or `` (i=1)`` (pytest's own description).
_SUBTEST = re.compile(r" (?:\[.*\] ?)?(?:\(.*\))?$")
VENV_DIRS = (".venv", "venv")


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


def xdist_workers_requested(project_dir: Path, env: Mapping[str, str], argv: Sequence[str] = ()) -> bool:
    """Whether the repository's own options start pytest-xdist workers: the last ``-n``/``--numprocesses``
    of ``addopts``, then ``PYTEST_ADDOPTS``, then the command line (a ``cmd`` from config) — pytest's order,
    the last one wins — is not ``0``."""
    value: str | None = None
    sources = (read_pytest_ini(project_dir).get("addopts", ""), env.get("PYTEST_ADDOPTS", ""), list(argv))
    for source in sources:
        try:
            words = shlex.split(source) if isinstance(source, str) else source
        except ValueError:
            continue
        for index, word in enumerate(words):
            if word in ("-n", "--numprocesses"):
                value = words[index + 1] if index + 1 < len(words) else value
            elif word.startswith("--numprocesses="):
                value = word.split("=", 1)[1]
            elif word.startswith("-n") and not word.startswith("--"):
                value = word[2:].lstrip("=")
    return value is not None and value.strip() != "0"


def _parent(case: str) -> str:
    """The test a subtest's case id belongs to (a parameter id holding a space and brackets stays whole)."""
    test = _SUBTEST.sub("", case)
    return test if test != case and test.count("[") == test.count("]") else case


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _has_doctest(path: Path, name: str) -> bool:
    """A module pytest's ``--doctest-modules`` collects examples from: one with a ``>>>`` line (``setup.py`` and
    ``conftest.py`` pytest never collects this way)."""
    if name in ("setup.py", "conftest.py"):
        return False
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"^\s*>>>", text, re.MULTILINE) is not None


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
    shares_pools = True
    runs_cases = True

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
        doctests = "--doctest-modules" in _words(options.get("addopts", ""))
        found = []
        for rel in files:
            if not rel.endswith(".py"):
                continue
            local = project.rel(rel)
            if testpaths and not any(local == p or local.startswith(p + "/") for p in testpaths):
                continue
            name = rel.rsplit("/", 1)[-1]
            if matcher.match(name) or (doctests and _has_doctest(repo_root / rel, name)):
                found.append(Target(target_id=rel, runner=self.name, lang=self.lang, cwd=project.root,
                                    selector=operand(local), cmd=(*base_cmd, operand(local)), path=rel))
        return found

    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage: CoverageSetup | None = None) -> Invocation:
        events = workdir / "pytest-events.jsonl"
        junit = workdir / "junit.xml"
        # ``python -m pytest`` (a venv's, above) has the project directory on sys.path; the bare ``pytest`` found
        # on PATH (a shim, a wrapper script) gets it here, so tests that import the repository's top-level
        # package without an install pass as they do for an agent's ``python -m pytest``, not ModuleNotFoundError.
        bare = len(toolchain.argv) == 1 and not toolchain.configured
        pythonpath = os.pathsep.join(p for p in (str(PLUGIN_DIR), str(project.dir(repo_root)) if bare else "",
                                                 os.environ.get("PYTHONPATH", "")) if p)
        extra = {EVENTS_ENV: str(events), "PYTHONPATH": pythonpath}
        argv = [*toolchain.argv, "-p", PLUGIN_NAME, "--continue-on-collection-errors", "-q", "--color=no"]
        reports: tuple[Path, ...] = ()
        if toolchain.configured:
            argv += ["-o", "junit_family=xunit1", f"--junitxml={junit}"]
            reports = (junit,)
        if coverage is not None:
            # CodePlane's own recorder (no coverage.py needed in the repository's environment).
            argv += ["-p", COVERAGE_PLUGIN]
            extra[COVERAGE_OUT_ENV] = str(coverage.out_dir)
            extra[COVERAGE_ROOT_ENV] = str(coverage.root)
            if coverage.lines_file is not None:
                extra[COVERAGE_LINES_ENV] = str(coverage.lines_file)
        if toolchain.configured:  # a wrapper (tox, a container) may drop the environment: node ids it is
            argv += [node for t in targets for node in ([f"{t.selector}::{c}" for c in t.cases] or [t.selector])]
        else:
            argv += [t.selector for t in targets]
            selection = {os.path.realpath(project.dir(repo_root) / t.selector): list(t.cases)
                         for t in targets if t.cases}
            if selection:
                workdir.mkdir(parents=True, exist_ok=True)
                chosen = workdir / "pytest-select.json"
                chosen.write_text(json.dumps(selection, sort_keys=True), encoding="utf-8")
                extra[SELECT_ENV] = str(chosen)
        return Invocation(tuple(argv), project.dir(repo_root), toolchain.environ(extra), event_file=events,
                          report_files=reports)

    def retry_cases(self, target: Target, result: TargetResult) -> tuple[str, ...] | None:
        """The failing cases alone, when the file failed only through them (a collection error, an interruption
        or a crash re-runs the whole file)."""
        prefix = f"{target.target_id}::"
        # A failing subtest (``T::test_x (i=1)``) is its test's to run again.
        failing = [_parent(c.case_id.removeprefix(prefix)) for c in result.cases if c.failing]
        if (result.outcome != "failed" or not failing
                or any(name.startswith(target.target_id) for name in failing)):
            return None
        return tuple(sorted(set(failing)))

    def retried_by(self, case: str) -> str:
        return _parent(case)

    def serial(self, project: Project, repo_root: Path, invocation: Invocation) -> Invocation:
        if not xdist_workers_requested(project.dir(repo_root), invocation.env, invocation.argv):
            return invocation
        return replace(invocation, argv=(*invocation.argv, "-n", "0"))  # after addopts: the last -n wins

    def cache_bytecode(self, invocation: Invocation, directory: Path) -> Invocation:
        env = redirected_environment(invocation.env, directory)
        # The plugin directory's sitecustomize then reads what an install compiled beside its sources: a prefix
        # alone hides it, and a cold prefix made the first run compile the stdlib, pytest and its plugins.
        return invocation if env is None else replace(invocation, env={**env, PYCACHE_BESIDE_ENV: "1"})

    def share_pool(self, invocation: Invocation, pool: Path) -> Invocation:
        return replace(invocation, env={**invocation.env, POOL_ENV: str(pool)})

    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        return PytestParser(repo_root, targets, invocation)
