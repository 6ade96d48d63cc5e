"""Runner discovery (§11.5) and target enumeration (§11.6).

Resolution, first match wins: explicit config (``tests.custom`` patterns claim files first; ``tests.runners``
picks a language's runner) → marker files (``pytest.ini``, ``go.mod``, ``Cargo.toml``, ``package.json``, ...)
→ language defaults (Python test files with no marker → pytest at the repo root). Several runners can live
in one repo; each file goes to the deepest project of its family, and every target is tagged with its runner.
One exception (``_js_owner``): a workspace member whose ``package.json`` names no runner (or a Vitest project
without a config of its own) yields to the nearest ancestor project naming one whose config includes the file.
"""

from __future__ import annotations

import difflib
import os
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import pathspec

from codeplane.core.config import TestsConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.repo.content import decode
from codeplane.repo.ignore import IgnoreRules
from codeplane.testing.model import Target
from codeplane.testing.runners import FAMILY, LANGUAGE_FAMILY, RUNNERS, Project, Toolchain
from codeplane.testing.runners.base import configured_cmd
from codeplane.testing.runners.cargo import is_package
from codeplane.testing.runners.dotnet import is_test_project
from codeplane.testing.runners.js import JsRunner, read_package_json

_JEST_CONFIGS = frozenset(f"jest.config.{ext}" for ext in ("js", "ts", "json", "mjs", "cjs"))
_VITEST_CONFIGS = frozenset(f"vitest.config.{ext}" for ext in ("js", "ts", "mjs", "mts", "cjs", "cts"))
#: File suffixes each runner family can take targets from (others are never offered to it: speed).
_FAMILY_SUFFIXES: dict[str, tuple[str, ...]] = {
    "python": (".py",), "js": (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts"), "go": ("_test.go",),
    "rust": (".rs",), "jvm": (".java", ".kt", ".groovy", ".scala"), "dotnet": (".csproj",), "ruby": ("_spec.rb",),
    "elixir": ("_test.exs",),
}
#: Config files that make a pytest project only when they carry a pytest section.
_PYTEST_SECTIONS = {"pyproject.toml": "[tool.pytest", "setup.cfg": "[tool:pytest]", "tox.ini": "[pytest]"}
_PY_TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test)\.py$")


@dataclass(frozen=True)
class MissingRunner:
    runner: str
    project: str
    hint: str
    #: The executable ``tests.runners.<runner>.cmd`` names, when that is set (and is what is missing).
    command: str | None = None


@dataclass(frozen=True)
class UnreadConfig:
    """A project's runner config that decides which files are tests and could not be read: its targets follow the
    runner's default patterns, so the project's test files may be others (an impact selection is ``partial``)."""

    runner: str
    project: str
    #: Repo-relative path of the config file.
    path: str
    #: Why it could not be read (``it throws when loaded (a throw at line 1)``).
    problem: str


@dataclass(frozen=True)
class Discovery:
    """Every project, its toolchain (None: not installed), and every target, sorted by target id."""

    projects: tuple[Project, ...]
    targets: tuple[Target, ...]
    toolchains: Mapping[Project, Toolchain | None]
    #: target_id → the project that owns it.
    owners: Mapping[str, Project]
    #: Configs of every project found (with targets or not: a config that names no file the defaults match still
    #: names test files) that could not be read, by path.
    unread: tuple[UnreadConfig, ...] = ()

    @property
    def missing(self) -> tuple[MissingRunner, ...]:
        return tuple(MissingRunner(p.runner, p.root, RUNNERS[p.runner].missing_hint(p),
                                   (configured_cmd(p) or (None,))[0])
                     for p in self.projects if self.toolchains.get(p) is None)


def runner_not_found(found: Discovery, selected: Sequence[Target]) -> CodePlaneError | None:
    """7001 when a selected target's runner is not installed, naming the configured command if one is set."""
    missing = sorted({found.owners[t.target_id] for t in selected if found.toolchains.get(found.owners[t.target_id])
                      is None}, key=lambda p: (p.root, p.runner))
    if not missing:
        return None
    first = missing[0]
    configured = configured_cmd(first)
    what = (f"{configured[0]!r} (tests.runners.{first.runner}.cmd) not found" if configured
            else f"test runner {first.runner!r} not found in PATH")
    return CodePlaneError(ErrorCode.TEST_RUNNER_NOT_FOUND, f"{what} (project {first.root})",
                          details={"missing": [{"runner": p.runner, "project": p.root} for p in missing],
                                   "hint": RUNNERS[first.runner].missing_hint(first)})


def walk_files(root: Path, rules: IgnoreRules, exclude: pathspec.GitIgnoreSpec | None = None) -> list[str]:
    """Repo-relative POSIX paths of every file in CodePlane's universe, sorted."""
    # Pattern matching dominates the walk on big trees; skip it when there are no patterns at all.
    spec = rules.spec if any(line.strip() and not line.lstrip().startswith("#")
                             for line in rules.source_text.splitlines()) else None
    found: list[str] = []
    stack = [""]
    while stack:
        prefix = stack.pop()
        try:
            entries = list(os.scandir(root / prefix if prefix else root))
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if (rules.is_pruned_dir(entry.name) or entry.name.startswith(".")
                        or (spec is not None and spec.match_file(rel + "/"))
                        or (exclude is not None and exclude.match_file(rel + "/"))):
                    continue
                stack.append(rel + "/")
            elif entry.is_file() and (spec is None or not spec.match_file(rel)) and (
                    exclude is None or not exclude.match_file(rel)):
                found.append(rel)
    found.sort()
    return found


def indexed_paths(read: Callable[[], AbstractContextManager[sqlite3.Connection]]) -> list[str]:
    """Every file of the index's universe (its ``files`` table): the same universe as ``walk_files`` without
    walking the tree again after each change."""
    with read() as conn:
        return [str(path) for (path,) in conn.execute("SELECT path FROM files")]


#: How the files an epoch may rewrite without changing discovery's answer end (``inert_for``): discovery never
#: reads Python source, only test files' names and sizes (a size is a target's cost estimate).
_INERT_SUFFIXES = (".py", ".pyi")
#: At most this many written files are compared; more re-discovers.
_MAX_WRITTEN = 1000


def written_since(read: Callable[[], AbstractContextManager[sqlite3.Connection]], epoch: int) -> list[str] | None:
    """Paths of the files the index rewrote after ``epoch`` when every epoch since only rewrote files (none added,
    deleted or renamed; the ``epochs`` history complete), else None."""
    with read() as conn:
        latest = conn.execute("SELECT max(id) FROM epochs").fetchone()[0]
        current = int(latest) if latest is not None else -1
        if current == epoch:
            return []
        if current < epoch:  # no epochs, or an index rebuilt since
            return None
        count, moved = conn.execute("SELECT count(*), total(added + deleted + renamed) FROM epochs "
                                    "WHERE id > ? AND id <= ?", (epoch, current)).fetchone()
        if int(count) != current - epoch or moved:
            return None
        paths = [str(p) for (p,) in conn.execute("SELECT path FROM files WHERE indexed_epoch > ? LIMIT ?",
                                                 (epoch, _MAX_WRITTEN + 1))]
        return paths if len(paths) <= _MAX_WRITTEN else None


def inert_for(found: Discovery, paths: Sequence[str]) -> bool:
    """Whether rewriting ``paths`` (no file added or removed) leaves ``found`` as it is: Python source that is no
    target's file (a target's size is its cost estimate; a custom pattern's files are targets too). Discovery reads
    config files (``pyproject.toml``, ``setup.cfg``, ``go.mod``, ``package.json``...), never Python source."""
    targets = {t.path for t in found.targets if t.path}
    return all(p.endswith(_INERT_SUFFIXES) and p not in targets for p in paths)


def _dir_of(rel: str) -> str:
    return rel.rpartition("/")[0] or "."


def _read(path: Path) -> str:
    try:
        return decode(path.read_bytes())
    except OSError:
        return ""


def _markers(root: Path, files: Sequence[str], language_runner: Mapping[str, str],
             ) -> tuple[list[Project], dict[str, bool]]:
    """Projects announced by marker files (§11.5 table), and the JavaScript projects a ``package.json`` alone
    announces (no runner config file beside it): directory → whether that ``package.json`` names no runner."""
    projects: dict[tuple[str, str], Project] = {}

    def add(runner: str, directory: str, marker: str) -> None:
        projects.setdefault((runner, directory), Project(runner, directory, f"marker:{marker}"))

    js_dirs: dict[str, tuple[str | None, str]] = {}
    for rel in files:
        name = rel.rsplit("/", 1)[-1]
        directory = _dir_of(rel)
        if name == "pytest.ini" or (name in _PYTEST_SECTIONS and _PYTEST_SECTIONS[name] in _read(root / rel)):
            add("pytest", directory, name)
        elif name == "go.mod":
            add("go", directory, name)
        elif name == "Cargo.toml" and is_package(root / directory):
            add("cargo", directory, name)
        elif name.endswith(".csproj") and is_test_project(root / rel):
            add("dotnet", directory, name)
        elif name == "pom.xml":
            add("maven", directory, name)
        elif name in ("build.gradle", "build.gradle.kts"):
            add("gradle", directory, name)
        elif (name == "Gemfile" and "rspec" in _read(root / rel)) or name == ".rspec":
            add("rspec", directory, name)
        elif name == "mix.exs":
            add("mix", directory, name)
        elif name in _VITEST_CONFIGS:
            js_dirs[directory] = ("vitest", name)
        elif name in _JEST_CONFIGS and js_dirs.get(directory, (None, ""))[0] != "vitest":
            js_dirs[directory] = ("jest", name)
        elif name == "package.json" and directory not in js_dirs:
            js_dirs[directory] = _package_json_runner(root / directory)
    package_only: dict[str, bool] = {}
    for directory, (runner, marker) in js_dirs.items():
        if runner == "" and "js" not in language_runner:
            continue  # its scripts run another test tool (``tests.custom`` can run it)
        chosen = language_runner.get("js") or runner or "jest"
        source = "config" if "js" in language_runner else f"marker:{marker}" if runner else "default"
        projects[(chosen, directory)] = Project(chosen, directory, source)
        if marker == "package.json":
            package_only[directory] = runner is None
    return list(projects.values()), package_only


#: Test tools CodePlane has no adapter for, as a ``package.json`` script names them: a project whose scripts run one
#: of them (and name neither Jest nor Vitest) is not given Jest by default. Django's QUnit tests (``grunt test``)
#: were Jest targets that no Jest could run, and ``cpl doctor`` failed for want of it.
_OTHER_JS_TESTERS = re.compile(r"\b(?:mocha|tape|ava|karma|grunt|qunit|jasmine|tap|uvu|cypress|playwright"
                               r"|web-test-runner|node\s+--test)\b")


def _package_json_runner(directory: Path) -> tuple[str | None, str]:
    """The runner a ``package.json`` names; ``(None, …)`` for the language default, ``("", …)`` for a tool of its
    own that CodePlane does not run."""
    data = read_package_json(directory)
    deps: dict[str, Any] = {**(data.get("dependencies") or {}), **(data.get("devDependencies") or {})}
    scripts = " ".join(str(v) for v in (data.get("scripts") or {}).values()) if isinstance(
        data.get("scripts"), dict) else ""
    if "vitest" in deps or re.search(r"\bvitest\b", scripts):
        return "vitest", "package.json"
    if "jest" in data or "jest" in deps or re.search(r"\bjest\b", scripts):
        return "jest", "package.json"
    if _OTHER_JS_TESTERS.search(scripts):
        return "", "package.json"
    return None, "package.json"


def _depth(project: Project) -> int:
    return 0 if project.root == "." else project.root.count("/") + 1


def _owner(rel: str, family_projects: Sequence[Project]) -> Project | None:
    """The deepest project (of one family) whose directory contains ``rel``."""
    best: Project | None = None
    for project in family_projects:
        inside = project.root == "." or rel.startswith(project.root + "/")
        if inside and (best is None or _depth(project) > _depth(best)):
            best = project
    return best


def _js_owner(rel: str, projects: Sequence[Project], package_only: Mapping[str, bool],
              includes: Callable[[Project, str], bool]) -> Project | None:
    """The JavaScript project that runs ``rel``: the deepest one, unless it yields to an ancestor whose runner
    config includes the file. A workspace member's ``package.json`` that names no runner runs no tests of its own:
    the repository's ``npm test`` runs them from the ancestor project that names one (a root ``vitest.config.ts``
    whose ``include`` names ``packages/*/test/**``); run as a default-Jest project of the member, Vitest tests
    failed with a SyntaxError (QA59 F1). A Vitest project without a config of its own yields too: Vitest run there
    loads the nearest config up the tree, whose ``include`` (relative to where it runs) matched none of its files.
    A ``package.json`` naming no runner is never the one yielded to; the nearest ancestor naming one decides."""
    chain = sorted((p for p in projects if p.root == "." or rel.startswith(p.root + "/")), key=_depth, reverse=True)
    if not chain:
        return None
    for below, above in pairwise(chain):
        if below.root not in package_only or not (package_only[below.root] or below.runner == "vitest"):
            break
        if not package_only.get(above.root, False) and includes(above, rel):
            return above
    return chain[0]


def _language_runners(config: TestsConfig) -> dict[str, str]:
    """``tests.runners`` entries naming a runner for a language, keyed by family; 2002 when unusable."""
    chosen: dict[str, str] = {}
    for key, value in config.runners.items():
        if not isinstance(value, str):
            continue
        family = LANGUAGE_FAMILY.get(key.lower())
        if family is None or value not in RUNNERS or FAMILY[value] != family:
            raise CodePlaneError(
                ErrorCode.CONFIG_INVALID_VALUE,
                f"tests.runners.{key} = {value!r}: expected a language ({', '.join(sorted(LANGUAGE_FAMILY))}) "
                f"mapped to a runner of that language; use tests.custom for other tools",
                details={"key": f"tests.runners.{key}", "value": value,
                         "runners": sorted(r for r in RUNNERS if r != "command")})
        chosen[family] = value
    for key, value in config.runners.items():
        if isinstance(value, dict) and key not in RUNNERS:
            raise CodePlaneError(ErrorCode.CONFIG_INVALID_VALUE, f"tests.runners.{key}: no runner named {key!r}",
                                 details={"key": f"tests.runners.{key}",
                                          "runners": sorted(r for r in RUNNERS if r != "command")})
        if isinstance(value, dict):
            _check_options(key, value)
    return chosen


#: What ``tests.runners.<runner>`` may set.
_RUNNER_OPTIONS = ("cmd", "timeout_sec")


def _check_options(runner: str, options: dict[str, Any]) -> None:
    """2002 for an option no runner reads (``cmdd``: silently ignored before) or a value of the wrong shape."""
    for name, value in options.items():
        key = f"tests.runners.{runner}.{name}"
        if name not in _RUNNER_OPTIONS:
            close = difflib.get_close_matches(name, _RUNNER_OPTIONS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (takes {', '.join(_RUNNER_OPTIONS)})"
            raise CodePlaneError(ErrorCode.CONFIG_INVALID_VALUE, f"{key}: unknown option{hint}",
                                 details={"key": key, "options": list(_RUNNER_OPTIONS)})
        if name == "cmd" and not (isinstance(value, list) and value and all(isinstance(v, str) and v for v in value)):
            raise CodePlaneError(ErrorCode.CONFIG_INVALID_VALUE, f"{key}: expected a command as a list of strings "
                                 "(e.g. [python, -m, pytest])", details={"key": key, "value": str(value)[:200]})
        if name == "timeout_sec" and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
            raise CodePlaneError(ErrorCode.CONFIG_INVALID_VALUE, f"{key}: expected a number of seconds above 0",
                                 details={"key": key, "value": str(value)[:200]})


def check_runner_config(config: TestsConfig) -> None:
    """Refuse (2002) a ``tests.runners`` entry no run could use, when the server starts rather than at the first
    test run."""
    _language_runners(config)


def universe_files(root: Path, config: TestsConfig, *, rules: IgnoreRules | None = None) -> list[str]:
    """Every file discovery considers: the repository universe minus ``tests.exclude``."""
    exclude = pathspec.GitIgnoreSpec.from_lines(config.exclude) if config.exclude else None
    return walk_files(root, rules or IgnoreRules.load(root), exclude)


def discover(root: Path, config: TestsConfig, *, rules: IgnoreRules | None = None,
             files: Sequence[str] | None = None) -> Discovery:
    """Find every project and target under ``root``. Never raises for a missing runner (see ``missing``)."""
    all_files = list(files) if files is not None else universe_files(root, config, rules=rules)
    language_runner = _language_runners(config)
    runner_options = {k: v for k, v in config.runners.items() if isinstance(v, dict)}
    custom_projects: list[tuple[Project, pathspec.GitIgnoreSpec]] = []
    for entry in config.custom:
        options = {"cmd": list(entry.cmd), "name": entry.runner, "timeout_sec": entry.timeout_sec}
        custom_projects.append((Project("command", ".", f"config:custom:{entry.pattern}", options),
                                pathspec.GitIgnoreSpec.from_lines([entry.pattern])))
    projects, package_only = _markers(root, all_files, language_runner)
    if "python" in language_runner and language_runner["python"] != "pytest":
        projects = [p for p in projects if p.runner != "pytest"]
    if not any(p.runner == "pytest" and p.root == "." for p in projects) and any(
            _PY_TEST_FILE.search(f) for f in all_files):
        projects.append(Project("pytest", ".", "config" if language_runner.get("python") else "default"))
    projects = [Project(p.runner, p.root, p.source, runner_options.get(p.runner, {})) for p in projects]
    by_family: dict[str, list[Project]] = {}
    for project in projects:
        by_family.setdefault(FAMILY[project.runner], []).append(project)
    claimed: dict[Project, list[str]] = {}
    custom_files: dict[Project, list[str]] = {}
    test_rules: dict[Project, Callable[[str], bool]] = {}

    def includes(project: Project, rel: str) -> bool:
        """Whether ``project``'s runner config makes ``rel`` one of its test files (read once per project)."""
        if project not in test_rules:
            runner = RUNNERS[project.runner]
            test_rules[project] = runner.test_files(project.dir(root), root).matches if isinstance(
                runner, JsRunner) else lambda _rel: False
        return test_rules[project](project.rel(rel))

    for rel in all_files:
        custom = next((p for p, spec in custom_projects if spec.match_file(rel)), None)
        if custom is not None:
            custom_files.setdefault(custom, []).append(rel)
            continue
        for family, family_projects in by_family.items():
            suffixes = _FAMILY_SUFFIXES.get(family)
            if suffixes is not None and not rel.endswith(suffixes):
                continue
            owner = (_js_owner(rel, family_projects, package_only, includes) if family == "js" and package_only
                     else _owner(rel, family_projects))
            if owner is not None:
                claimed.setdefault(owner, []).append(rel)
    toolchains: dict[Project, Toolchain | None] = {}
    targets: dict[str, Target] = {}
    owners: dict[str, Project] = {}
    unread: list[UnreadConfig] = []
    all_projects = [*sorted(projects, key=lambda p: (p.root, p.runner)), *(p for p, _ in custom_projects)]
    for project in all_projects:
        runner = RUNNERS[project.runner]
        toolchain = runner.toolchain(project, root)
        toolchains[project] = toolchain
        # Not installed: the command as it would run (the configured one, not the runner's name).
        base = toolchain.argv if toolchain else (configured_cmd(project) or (runner.name,))
        owned = custom_files.get(project, []) if project.runner == "command" else claimed.get(project, [])
        problem = runner.unread_config(project, root)
        if problem is not None:
            unread.append(UnreadConfig(project.runner, project.root, *problem))
        for target in runner.targets(project, root, owned, base):
            if target.target_id not in targets:
                targets[target.target_id] = target
                owners[target.target_id] = project
    used = set(owners.values())
    found = [p for p in all_projects if p in used]
    # Vitest projects below one config all load it (``vitest_test_files``): it is named once, by the shallowest.
    once = {u.path: u for u in sorted(unread, key=lambda u: (u.path, 0 if u.project == "." else
                                                             u.project.count("/") + 1, u.project), reverse=True)}
    return Discovery(projects=tuple(found), targets=tuple(targets[k] for k in sorted(targets)),
                     toolchains=toolchains, owners=owners, unread=tuple(once[k] for k in sorted(once)))

