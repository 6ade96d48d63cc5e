"""Changed files the import walk cannot name, in languages whose tests build the whole project (Rust, JVM, .NET).

The module walk (``impact_modules``) maps files to importable modules; a ``.rs``, ``.java`` or ``.cs`` file maps to
none, so a selection for it held no test and ``run_test_targets(affected_by=["src/eval.rs"])`` ran nothing on a
Rust crate whose every test target compiles that file. Those runners build and test a project as one unit (a crate,
a Maven/Gradle build, a .NET solution), and which of several projects depends on which is not in the index: every
discovered target of the file's runner family is selected, whole. Wider than a graph would be, never narrower.

A runner's own configuration (``go.mod``, ``Cargo.toml``, ``jest.config.js``, ``package.json``, ``vitest.config.ts``,
``pom.xml``...) is the root input of every test of its project, as ``pytest.ini`` is of pytest's: a change there
selects every target of those runners whose project holds the file, or lies below it, whole.

A Jest/Vitest config that decides which files are tests and could not be read (it would not load, or sets its
patterns in code: ``runners/js_files.py``) left discovery on the runner's default patterns, so the test files of its
project may be others than the targets: a selection for a change that such tests may load (a JavaScript/TypeScript
file anywhere, or the project's own files) is ``partial``, with the config and why (never widened: §11.9.7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from codeplane.index.languages import detect
from codeplane.testing.discovery import UnreadConfig
from codeplane.testing.impact_models import ImpactResult, TestMatch
from codeplane.testing.impact_modules import COMPLETE_HINT, selection_hint
from codeplane.testing.model import Target
from codeplane.testing.runners import FAMILY

#: Language families whose test runners build the whole project (``index.languages`` family → its name in a hint).
WHOLE_PROJECT = {"rust": "Rust", "jvm": "JVM", "dotnet": ".NET"}


#: A runner's own configuration and build files (a file name, or its stem before ``.config.``) → the runners it
#: configures: a change there is the project's root input, as ``pytest.ini`` is pytest's (``impact_modules``).
#: ``go.mod``'s module path names every import of the module; ``Cargo.toml`` holds a crate's edition and features;
#: ``package.json`` a ``jest`` key, scripts and dependencies.
RUNNER_CONFIGS: dict[str, frozenset[str]] = {
    "go.mod": frozenset({"go"}), "go.sum": frozenset({"go"}), "go.work": frozenset({"go"}),
    "Cargo.toml": frozenset({"cargo"}), "Cargo.lock": frozenset({"cargo"}),
    "package.json": frozenset({"jest", "vitest"}), "jest": frozenset({"jest"}),
    "vitest": frozenset({"vitest"}), "vite": frozenset({"vitest"}), "vitest.workspace": frozenset({"vitest"}),
    "pom.xml": frozenset({"maven"}), "build.gradle": frozenset({"gradle"}), "build.gradle.kts": frozenset({"gradle"}),
    "settings.gradle": frozenset({"gradle"}), "settings.gradle.kts": frozenset({"gradle"}),
}


def _configured(path: str, targets: Sequence[Target]) -> list[Target]:
    """The targets a changed runner configuration file configures: those of its runners whose project lies at,
    above or below the file's directory (a workspace's ``Cargo.toml`` and a member's alike)."""
    directory, _, name = path.rpartition("/")
    runners = RUNNER_CONFIGS.get(name) or RUNNER_CONFIGS.get(name.split(".config.", 1)[0] if ".config." in name
                                                             else "", frozenset())
    if not runners:
        return []
    here = directory or "."

    def related(root: str) -> bool:
        return root == here or "." in (root, here) or here.startswith(f"{root}/") or root.startswith(f"{here}/")

    # A crate's or a Maven/Gradle module's build file changes what its dependents build against, and which
    # project depends on which is not in the index (as for their sources, below): all of the runner's targets.
    return [t for t in targets if t.runner in runners and (FAMILY.get(t.runner) in WHOLE_PROJECT
                                                           or related(t.cwd or "."))]


def _key(target: Target) -> str:
    """What impact matches name a target by (``service._match_key``): its file, or a Go package's id."""
    return target.path or (target.target_id if target.runner == "go" else "")


def by_project(result: ImpactResult, targets: Sequence[Target], changed: Sequence[str] = ()) -> ImpactResult:
    """``result`` with every target of the runner family of each unresolved file of such a language, whole; and
    every target a changed runner configuration file (of ``changed`` or unresolved: ``jest.config.js`` is a
    module the import walk names, which no test imports) configures."""
    chosen: dict[str, list[str]] = {}
    handled: list[str] = []
    runners: set[str] = set()
    families: set[str] = set()
    configs: list[str] = []
    configured_runners: set[str] = set()
    for path in dict.fromkeys((*result.unresolved_files, *(p.strip().removeprefix("./") for p in changed))):
        configured = [t for t in _configured(path, targets) if _key(t)]
        if configured:
            handled.append(path)
            configs.append(path)
            configured_runners.update(t.runner for t in configured)
            for target in configured:
                chosen.setdefault(_key(target), []).append(path)
            continue
        if path not in result.unresolved_files:
            continue  # a module the import walk named: its importers are the answer
        info = detect(path)
        family = info.family if info is not None else None
        found = [t for t in targets if t.path and FAMILY.get(t.runner) == family] if family in WHOLE_PROJECT else []
        if found:
            handled.append(path)
            families.add(WHOLE_PROJECT[family or ""])
            runners.update(t.runner for t in found)
            for target in found:
                chosen.setdefault(target.path, []).append(path)
    if not handled:
        return result
    matches = {m.test_file: m for m in result.matches}
    for key, paths in chosen.items():
        why = (f"{paths[0]} configures its runner for every target of its project" if paths[0] in configs else
               f"{paths[0]} is built with every target of its project") + (
            f" (and {len(paths) - 1} more changed file(s))" if len(paths) > 1 else "")
        previous = matches.get(key)
        reasons = tuple(sorted({why, *(previous.reasons if previous is not None else ())}))[:5]
        matches[key] = TestMatch(key, previous.confidence if previous is not None else "low", reasons)
    remaining = tuple(p for p in result.unresolved_files if p not in handled)
    sources = len(handled) - len(configs)
    ours = " ".join(part for part in (
        f"{sources} changed {'/'.join(sorted(families))} file(s) select every {', '.join(sorted(runners))} target "
        "whole: the import walk names no module of theirs, and the runner builds the project as one." if sources
        else "",
        f"{len(configs)} changed runner configuration file(s) ({', '.join(configs[:3])}) select every "
        f"{', '.join(sorted(configured_runners))} target of their project whole." if configs else "") if part)
    others = [m for k, m in matches.items() if k not in chosen]
    rest = selection_hint(result.confidence, others, remaining, result.null_literal_imports,
                          len(result.unresolved_imports)) if others or remaining or result.null_literal_imports \
        or result.unresolved_imports else ""
    # A change of runner configurations alone, each selecting every target it configures, is complete: the walk's
    # "partial" was theirs (a module no test imports, which a test may load by name), and the runner loads them.
    wanted = {p.strip().removeprefix("./") for p in changed}
    complete = (result.confidence == "partial" and wanted and wanted <= set(configs) and not remaining
                and not result.null_literal_imports and not result.unresolved_imports)
    return replace(result, matches=tuple(m for _, m in sorted(matches.items())), unresolved_files=remaining,
                   hint=f"{ours} {rest}".strip(), confidence="complete" if complete else result.confidence)


def unread_configs(result: ImpactResult, unread: Sequence[UnreadConfig], changed: Sequence[str]) -> ImpactResult:
    """``result``, ``partial`` with the reason when an unread runner config may hide tests of a changed file."""
    changed = [p.strip().removeprefix("./") for p in changed]
    hiding = [u for u in unread if any(_may_load(path, u) for path in changed)]
    if not hiding:
        return result
    shown = "; ".join(f"{u.path} cannot be read: {u.problem}" for u in hiding[:3]) + (
        f"; and {len(hiding) - 3} more" if len(hiding) > 3 else "")
    runners = " and ".join(sorted({u.runner for u in hiding}))
    note = (f"{shown}. {runners}'s default test patterns were used for its project, so its test files may be others "
            "than the targets and the selection is partial (fix the config, or choose the tests yourself).")
    return replace(result, confidence="partial",
                   hint=f"{result.hint.replace(COMPLETE_HINT, '').strip()} {note}".strip())


def _may_load(path: str, config: UnreadConfig) -> bool:
    """Whether a test of ``config``'s project may load changed ``path``: JavaScript/TypeScript anywhere (a test
    may import across projects), or any file of the project (a fixture, a snapshot, the config itself)."""
    info = detect(path)
    inside = config.project == "." or path.startswith(f"{config.project}/")
    return (info is not None and info.family == "javascript") or (inside and (info is None or info.family not in (
        "python", "go", "rust", "jvm", "dotnet")))
