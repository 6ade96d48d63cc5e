"""Changed files the import walk cannot name, in languages whose tests build the whole project (Rust, JVM, .NET).

The module walk (``impact_modules``) maps files to importable modules; a ``.rs``, ``.java`` or ``.cs`` file maps to
none, so a selection for it held no test and ``run_test_targets(affected_by=["src/eval.rs"])`` ran nothing on a
Rust crate whose every test target compiles that file. Those runners build and test a project as one unit (a crate,
a Maven/Gradle build, a .NET solution), and which of several projects depends on which is not in the index: every
discovered target of the file's runner family is selected, whole. Wider than a graph would be, never narrower.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from codeplane.index.languages import detect
from codeplane.testing.impact_models import ImpactResult, TestMatch
from codeplane.testing.impact_modules import selection_hint
from codeplane.testing.model import Target
from codeplane.testing.runners import FAMILY

#: Language families whose test runners build the whole project (``index.languages`` family → its name in a hint).
WHOLE_PROJECT = {"rust": "Rust", "jvm": "JVM", "dotnet": ".NET"}


def by_project(result: ImpactResult, targets: Sequence[Target]) -> ImpactResult:
    """``result`` with every target of the runner family of each unresolved file of such a language, whole."""
    chosen: dict[str, list[str]] = {}
    handled: list[str] = []
    runners: set[str] = set()
    families: set[str] = set()
    for path in result.unresolved_files:
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
        why = f"{paths[0]} is built with every target of its project" + (
            f" (and {len(paths) - 1} more changed file(s))" if len(paths) > 1 else "")
        previous = matches.get(key)
        reasons = tuple(sorted({why, *(previous.reasons if previous is not None else ())}))[:5]
        matches[key] = TestMatch(key, previous.confidence if previous is not None else "low", reasons)
    remaining = tuple(p for p in result.unresolved_files if p not in handled)
    ours = (f"{len(handled)} changed {'/'.join(sorted(families))} file(s) select every "
            f"{', '.join(sorted(runners))} target whole: the import walk names no module of theirs, and the runner "
            "builds the project as one.")
    others = [m for k, m in matches.items() if k not in chosen]
    rest = selection_hint(result.confidence, others, remaining, result.null_literal_imports,
                          len(result.unresolved_imports)) if others or remaining or result.null_literal_imports \
        or result.unresolved_imports else ""
    return replace(result, matches=tuple(m for _, m in sorted(matches.items())), unresolved_files=remaining,
                   hint=f"{ours} {rest}".strip())
