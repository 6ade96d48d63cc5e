"""``.cplignore`` matching: the fast path every walk uses agrees with pathspec's gitignore rules."""

from __future__ import annotations

import itertools
from pathlib import Path

import pathspec
import pytest

from codeplane.repo.ignore import IgnoreRules
from codeplane.repo.universe import walk_universe
from codeplane.repo.workspace import DEFAULT_CPLIGNORE

EXTRA_PATTERNS = [
    "/anchored.txt", "docs/**/*.md", "*.py[cod]", "a?c", "[!x]yz", "out/", "**/gen", "\\#hash", "with space/",
    "paren(?P<x>)s", "deep/*/leaf", "*.min.js", "trailing\\ ", "logs/**",
]
NAMES = ["anchored.txt", "x.md", "m.pyc", "m.pyo", "m.py", "abc", "a/c", "xyz", "ayz", "out", "gen", "#hash",
         "with space", "paren(?P<x>)s", "leaf", "app.min.js", "app.js", "trailing ", "node_modules", "keep.log",
         "build", "coverage", "readme"]
DIRS = ["", "docs/", "docs/a/b/", "src/", "deep/x/", "deep/", "logs/", "lib/out/"]


def _paths() -> list[str]:
    found = []
    for prefix, name in itertools.product(DIRS, NAMES):
        found += [f"{prefix}{name}", f"{prefix}{name}/"]
    return found


def _rules(lines: list[str]) -> IgnoreRules:
    text = "\n".join(lines)
    return IgnoreRules(spec=pathspec.GitIgnoreSpec.from_lines(lines), source_text=text)


@pytest.mark.parametrize("lines", [
    DEFAULT_CPLIGNORE.splitlines(),
    [*DEFAULT_CPLIGNORE.splitlines(), *EXTRA_PATTERNS],
    [],
    ["# only a comment", ""],
])
def test_fast_matching_agrees_with_pathspec_without_negations(lines: list[str]) -> None:
    rules = _rules(lines)
    assert rules.matches != rules.spec.match_file  # the fast path is the one in use
    disagreements = [p for p in _paths() if rules.matches(p) != bool(rules.spec.match_file(p))]
    assert disagreements == []
    assert any(rules.matches(p) for p in _paths()) == any(not line.startswith("#") and line for line in lines)


@pytest.mark.parametrize("lines", [
    DEFAULT_CPLIGNORE.splitlines(),
    [*DEFAULT_CPLIGNORE.splitlines(), *EXTRA_PATTERNS],
    ["/anchored.txt", "deep/*/leaf"],  # anchored patterns only
    ["*.py?", "!m.pyc"],  # a negation: every entry asks the whole-path rules
])
def test_the_walks_per_entry_matcher_agrees_with_whole_path_matching(lines: list[str]) -> None:
    """For every entry a walk reaches (no ancestor ignored), asking basename-only patterns about the basename
    gives what matching the whole path gives, including for a second entry with the same basename (cached)."""
    rules = _rules(lines)
    match = rules.entry_matcher()
    reached = [p for p in _paths()
               if not any(rules.matches(p[:i + 1]) for i, ch in enumerate(p.rstrip("/")) if ch == "/")]
    compared = [(p, match(p.rstrip("/"), p.rstrip("/").rpartition("/")[2], p.endswith("/")), bool(rules.matches(p)))
                for p in reached]
    assert [c for c in compared if c[1] != c[2]] == []
    assert len(reached) > len(NAMES) * 4 and any(c[2] for c in compared)


def test_a_negated_pattern_keeps_gitignore_last_match_rules() -> None:
    rules = _rules(["*.log", "!keep.log", "logs/**", "!logs/keep/"])
    assert rules.matches == rules.spec.match_file  # pathspec decides: order matters with negations
    assert rules.matches("x/app.log") and not rules.matches("x/keep.log")
    assert [p for p in _paths() if rules.matches(p) != bool(rules.spec.match_file(p))] == []


def test_walk_skips_what_the_rules_ignore_and_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for rel in ["src/app.py", "src/app.pyc", "docs/a/guide.md", "docs/index.rst", "out/bundle.js",
                "lib/out/x.js", "node_modules/pkg/index.js", "build/x.o", "keep.log", "src/edit.py.cpl-tmp",
                "anchored.txt", "src/anchored.txt", "deep/x/leaf", "deep/leaf"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    (root / ".cplignore").write_text("\n".join(["*.pyc", "docs/**/*.md", "out/", "/anchored.txt", "deep/*/leaf",
                                                "*.tmp"]) + "\n")
    rules = IgnoreRules.load(root)
    assert rules.matches != rules.spec.match_file
    walked = [e.path for e in walk_universe(root, rules)]
    assert walked == [".cplignore", "deep/leaf", "docs/index.rst", "keep.log", "src/anchored.txt", "src/app.py"]


def test_a_symlink_named_like_a_pruned_directory_is_left_out_like_the_watcher_does(tmp_path: Path) -> None:
    from codeplane.repo.universe import walk_paths

    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    elsewhere = tmp_path / "venvs" / "env"
    elsewhere.mkdir(parents=True)
    (root / ".venv").symlink_to(elsewhere, target_is_directory=True)
    (root / "src" / "node_modules").symlink_to(elsewhere, target_is_directory=True)
    (root / "src" / "build").write_text("#!/bin/sh\n")  # a file named like a pruned directory stays
    (root / "link.py").symlink_to(root / "src" / "app.py")  # other symlinks stay, unfollowed
    rules = IgnoreRules.load(root)
    walked = [e.path for e in walk_universe(root, rules)]
    assert walked == ["link.py", "src/app.py", "src/build"]
    assert sorted(walk_paths(root, [".venv", "src/node_modules", "src/build", "link.py"], rules)) == [
        "link.py", "src/build"]
