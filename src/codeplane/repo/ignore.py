"""Which paths are outside CodePlane's universe: PRUNABLE_DIRS and ``.cplignore`` (spec §6.3–6.5).

``.cplignore`` has full gitignore semantics (negation, anchoring, directory patterns) via ``pathspec``.
A ``.cplignore``d path is neither indexed nor writable through CodePlane (5001); git-ignored files are
a different matter (indexable unless also ``.cplignore``d, writable but flagged).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pathspec
from pathspec.pattern import RegexPattern

#: Directories never walked, whatever ``.cplignore`` says. Tools' caches among them are written by the test runs
#: CodePlane starts (Hypothesis's example database: 35 hash-named files in attrs' map after one run).
PRUNABLE_DIRS: frozenset[str] = frozenset({
    ".git", ".codeplane", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".hypothesis", ".tox", ".nox", "target", "dist", "build", ".eggs", ".gradle",
    ".idea", ".next", ".nuxt", ".cache", ".terraform",
})


#: A named group's opening in a pattern's regex (pathspec marks directory matches with one); literal parentheses
#: are escaped there, so this matches only real groups.
_PLAIN_GROUP = re.compile(r"(?<!\\)\(\?P<[A-Za-z_][A-Za-z0-9_]*>")
_DEFAULT_FLAGS = re.compile("").flags


#: Temp and restore files the mutation engine creates next to their targets for the length of a batch;
#: never part of the universe, so neither the watcher nor a reconcile indexes them mid-batch.
TRANSIENT_SUFFIXES: tuple[str, ...] = (".cpl-tmp", ".cpl-restore")


@dataclass(frozen=True)
class IgnoreRules:
    spec: pathspec.GitIgnoreSpec
    #: SHA-free identity of the rules (the raw text), to notice when ``.cplignore`` changed.
    source_text: str

    @classmethod
    def load(cls, root: Path) -> IgnoreRules:
        path = root / ".cplignore"
        return cls.from_text(path.read_text(encoding="utf-8", errors="replace") if path.is_file() else "")

    @classmethod
    def from_text(cls, text: str) -> IgnoreRules:
        return cls(spec=pathspec.GitIgnoreSpec.from_lines(text.splitlines()), source_text=text)

    def is_pruned_dir(self, name: str) -> bool:
        return name in PRUNABLE_DIRS

    @cached_property
    def matches(self) -> Callable[[str], bool]:
        """``spec.match_file`` for a canonical path (a directory with a trailing ``/``), made cheap.

        Without a negated pattern, a path is ignored exactly when some pattern matches it, so one regex, the
        alternation of the patterns' own (their named groups made plain), answers in one search instead of
        pathspec's priority loop over every pattern; a walk asks this for every entry (~10k times on Django).
        With a negation, gitignore's last-match rules need pathspec itself.
        """
        active = [p for p in self.spec.patterns if p.include is not None]
        compiled = [p.regex for p in active if isinstance(p, RegexPattern) and p.include and p.regex is not None]
        regexes = [r.pattern for r in compiled if r.flags == _DEFAULT_FLAGS]
        if len(regexes) != len(active) or not all(isinstance(r, str) for r in regexes):
            return self.spec.match_file
        if not regexes:
            return lambda _path: False
        try:
            combined = re.compile("|".join(f"(?:{_PLAIN_GROUP.sub('(?:', r)})" for r in regexes))
        except re.error:
            return self.spec.match_file
        search = combined.search
        return lambda path: search(path) is not None

    def entry_matcher(self) -> Callable[[str, str, bool], bool]:
        """For one walk: ``match(rel, name, is_dir)``, whether a ``.cplignore`` pattern matches the entry ``rel``
        (basename ``name``) of a directory the walk entered, so none of its ancestors is ignored.

        Such an entry is matched by a pattern with no inner ``/`` (``*.pyc``, ``node_modules/``) exactly when its
        basename is: the pattern may match at any level, and a match at an ancestor's level would have kept the
        walk out. So those patterns are asked once per distinct basename (a tree repeats ``__init__.py``,
        ``tests/``...) and only the anchored ones per path. With a negation, every entry asks :attr:`matches`.
        """
        matches = self.matches
        active = [p for p in self.spec.patterns if p.include is not None]
        if any(not p.include for p in active):
            return lambda rel, _name, is_dir: matches(rel + "/" if is_dir else rel)
        by_name = [p for p in active if _matches_any_level(p)]
        if not by_name:
            return lambda rel, _name, is_dir: matches(rel + "/" if is_dir else rel)
        name_rules = IgnoreRules(pathspec.GitIgnoreSpec(by_name), self.source_text).matches
        anchored = [p for p in active if p not in by_name]
        path_rules = IgnoreRules(pathspec.GitIgnoreSpec(anchored), self.source_text).matches
        seen: dict[str, bool] = {}

        def match(rel: str, name: str, is_dir: bool) -> bool:
            key = name + "/" if is_dir else name
            hit = seen.get(key)
            if hit is None:
                hit = seen[key] = name_rules(key)
            return hit or (bool(anchored) and path_rules(rel + "/" if is_dir else rel))

        return match

    def ignores(self, rel: str, *, is_dir: bool = False) -> bool:
        """True if ``rel`` (canonical POSIX, relative) is outside the universe."""
        parts = rel.split("/")
        if any(p in PRUNABLE_DIRS for p in (parts if is_dir else parts[:-1])) or parts[-1] == ".git":
            return True  # a ``.git`` file is a submodule's or worktree's pointer to its git directory
        if not is_dir and rel.endswith(TRANSIENT_SUFFIXES):
            return True
        return self.matches(rel + "/" if is_dir else rel)

    def excludes(self, rel: str, *, is_dir: bool = False) -> bool:
        """Like :meth:`ignores`, but also true when an ancestor directory is ignored.

        Git cannot re-include a file whose parent directory is excluded, and the walk never enters such a
        directory; checking ancestors keeps single-path lookups consistent with the walk.
        """
        parts = rel.split("/")
        for end in range(1, len(parts)):
            if self.ignores("/".join(parts[:end]), is_dir=True):
                return True
        return self.ignores(rel, is_dir=is_dir)


def _matches_any_level(pattern: pathspec.Pattern) -> bool:
    """Whether a gitignore pattern has no ``/`` but a trailing one (then it matches a basename at any depth)."""
    text = getattr(pattern, "pattern", None)
    if not isinstance(text, str):
        return False
    body = text.rstrip("/")
    return bool(body) and "/" not in body and "\\" not in body
