"""Imports through a JS test runner's own module aliases, which the import walk cannot follow (QA s51).

Jest's ``moduleNameMapper`` (``"^@lib/(.*)$": "<rootDir>/src/$1"``) and Vite/Vitest's ``resolve.alias``
(``{ '@lib': path.resolve(__dirname, 'src') }``) let a test write ``require('@lib/math')`` for ``src/math.js``. The
index resolves relative specifiers and tsconfig ``paths``; a specifier only the runner maps stays an unresolved bare
import, which the walk took for another library's package: a change to ``src/math.js`` selected ``complete`` without
the test that fails. Evaluating the maps is the runner's business (a config is code); here, for a changed
JavaScript/TypeScript file:

- a test file of a project whose runner config declares aliases, importing an unresolved specifier an alias
  matches (a ``moduleNameMapper`` key as a regular expression, an ``alias`` key as a prefix; any unresolved bare
  specifier when the keys cannot be read), is selected whole, ``low``, naming the specifier and the config;
- another file of the project importing such a specifier makes the selection ``partial``: what imports *it* is
  not followed through the alias.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Literal

from codeplane.index.languages import detect
from codeplane.testing import impact_jsresolve as jsresolve
from codeplane.testing.impact_models import ImpactResult, TestMatch
from codeplane.testing.impact_modules import COMPLETE_HINT, NO_TEST_IMPORTS, NO_TEST_REACHES, selection_hint
from codeplane.testing.model import Target

_CONFIG_STEMS = ("jest.config", "vitest.config", "vite.config")
_CONFIG_SUFFIXES = (".js", ".ts", ".mjs", ".cjs", ".mts", ".cts", ".json")
#: ``moduleNameMapper: { '^@lib/(.*)$': ... }`` / ``alias: { '@lib': ... }``: the object after the key.
_BLOCK = re.compile(r"\b(moduleNameMapper|alias)\s*:\s*([\[{])")
_KEY = re.compile(r"""(?:^|[{,\s])(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([A-Za-z_$@][\w$@-]*))\s*:""")
_FIND = re.compile(r"""find\s*:\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(/.*?/)[gimsuy]*\s*[,}])""")
#: What scanning reads of a config at most (configs are small; a huge one is not read).
_MAX_CONFIG = 200_000


@dataclass(frozen=True)
class AliasMap:
    """A project's runner config declaring module aliases."""

    project: str
    config: str
    #: ``moduleNameMapper`` or ``alias``.
    kind: str
    #: Regular expressions a specifier must match; ``None``: the keys could not be read (any bare specifier).
    patterns: tuple[re.Pattern[str], ...] | None

    def matches(self, specifier: str) -> bool:
        if specifier.startswith((".", "/")):
            return False
        return self.patterns is None or any(p.search(specifier) for p in self.patterns)


@dataclass(frozen=True)
class Aliases:
    maps: tuple[AliasMap, ...]
    #: Every Jest/Vitest project directory (``.``: the root), aliased or not.
    projects: tuple[str, ...]
    #: The checkout the projects are in (``impact_jsresolve`` reads their runner configs); None: not read.
    root: Path | None = None

    def for_change(self, path: str) -> list[AliasMap]:
        """The maps that may lead to changed ``path``: its own project's, or every one when it lies in no project
        (a shared directory an alias may point at)."""
        owner = max((p for p in self.projects if _inside(path, p)), key=len, default=None)
        return [m for m in self.maps if owner is None or owner in (".", m.project)]


def alias_maps(root: Path, targets: Sequence[Target]) -> Aliases:
    """The alias maps of the Jest/Vitest projects that own ``targets``: where each runs (a workspace member's test
    may run from the root, whose config sets its aliases and setup files), else its nearest ``package.json``."""
    projects = sorted({t.cwd or _project_of(root, t.path) for t in targets
                       if t.path and t.runner in ("jest", "vitest")})
    found: list[AliasMap] = []
    for project in projects:
        base = root / project if project != "." else root
        for stem in _CONFIG_STEMS:
            for suffix in _CONFIG_SUFFIXES:
                path = base / f"{stem}{suffix}"
                if path.is_file():
                    found += _from_text(project, _rel(project, path.name), _read(path), stem)
        package = base / "package.json"
        if package.is_file():
            try:
                data = json.loads(_read(package) or "{}")
            except ValueError:
                data = {}
            jest = data.get("jest") if isinstance(data, dict) else None
            mapper = jest.get("moduleNameMapper") if isinstance(jest, dict) else None
            if isinstance(mapper, dict) and mapper:
                found.append(AliasMap(project, _rel(project, "package.json"), "moduleNameMapper",
                                      _compiled(list(mapper), regex=True)))
    return Aliases(tuple(found), tuple(projects), root)


def with_aliases(result: ImpactResult, conn: sqlite3.Connection, aliases: Aliases,
                 changed: Sequence[str], test_files: Sequence[str]) -> ImpactResult:
    """``result`` with the test files importing through an alias selected (``low``), ``partial`` when other
    files of an aliased project do (see the module docstring)."""
    if aliases.root is not None and aliases.projects:
        result = _with_resolved(result, conn, aliases, changed, test_files)
    maps = list({id(m): m for p in changed if _is_js(p) for m in aliases.for_change(p)}.values())
    if not maps:
        return result
    tests = set(test_files)
    matches = {m.test_file: m for m in result.matches}
    through: list[str] = []
    for row in conn.execute(
            "SELECT f.path, i.source_literal FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
            "WHERE i.resolved_file_id IS NULL AND i.source_literal IS NOT NULL ORDER BY f.path, i.start_line"):
        path, specifier = str(row[0]), str(row[1])
        alias = next((m for m in maps if _inside(path, m.project) and m.matches(specifier)), None)
        if alias is None or not _is_js(path):
            continue
        if path not in tests:
            through.append(f"{path} imports '{specifier}'")
            continue
        why = f"imports '{specifier}' through {alias.config}'s {alias.kind} (not resolved here)"
        known = matches.get(path)
        if known is None:
            matches[path] = TestMatch(path, "low", (why,))
        elif not known.cases and why not in known.reasons and len(known.reasons) < 5:
            matches[path] = replace(known, reasons=tuple(sorted((*known.reasons, why))))
    if len(matches) == len(result.matches) and not through:
        return result
    hint, confidence = result.hint, result.confidence
    if not result.matches and hint in (NO_TEST_REACHES, NO_TEST_IMPORTS) and not result.unresolved_files and \
            not result.null_literal_imports and not result.unresolved_imports:
        # Partial only because no test was reached: now some are, and nothing else is left unknown.
        confidence = "complete"
        hint = selection_hint(confidence, list(matches.values()), (), 0)
    if through:
        confidence = "partial"
        shown = "; ".join(sorted(set(through))[:3]) + (f"; and {len(set(through)) - 3} more" if
                                                      len(set(through)) > 3 else "")
        hint = (f"{hint.replace(COMPLETE_HINT, '').strip()} Files import through the runner's module aliases, which "
                f"are not followed ({shown}): what imports them may be affected too, so the selection is "
                "partial.").strip()
    return replace(result, matches=tuple(m for _, m in sorted(matches.items())), confidence=confidence, hint=hint)


def _with_resolved(result: ImpactResult, conn: sqlite3.Connection, aliases: Aliases, changed: Sequence[str],
                   test_files: Sequence[str]) -> ImpactResult:
    """``result`` plus the tests reached through what Node and the runners resolve that the index does not
    (``impact_jsresolve.py``); ``partial``, with the reason, where a specifier naming the repository resolves to
    no file."""
    assert aliases.root is not None
    found = jsresolve.reach(conn, aliases.root, aliases.projects, changed, test_files)
    # As for aliases: an unresolvable import leaves unknown only what lies in a changed JS file's project.
    owners = {max((p for p in aliases.projects if _inside(c, p)), key=len, default=".") for c in changed if _is_js(c)}
    found.unknown = [u for u in found.unknown if any(_inside(u, o) for o in owners)]
    matches = {m.test_file: m for m in result.matches}
    added = False
    for test, (tier, why) in sorted(found.tests.items()):
        known = matches.get(test)
        if known is None or (known.confidence == "low" and tier == "high"):
            matches[test] = TestMatch(test, "high" if tier == "high" else "low", (why,))
            added = True
    unresolved = tuple(p for p in result.unresolved_files if p not in found.loaded)
    if not added and not found.unknown and unresolved == result.unresolved_files:
        return result
    hint = result.hint
    confidence: Literal["complete", "partial"] = result.confidence
    only_unreached = hint in (NO_TEST_REACHES, NO_TEST_IMPORTS) or (
        result.unresolved_files and not unresolved)
    if confidence == "partial" and only_unreached and not unresolved and not result.null_literal_imports and \
            not result.unresolved_imports and added:
        # Partial only because nothing was reached, or a changed data file was loaded by no known import: now
        # the tests loading it are selected, and nothing else is left unknown.
        confidence = "complete"
    # Tests the runner loads the change for (setup files, manual mocks) are low for a reason of their own, not the
    # package-level guess ``selection_hint`` words its low matches as.
    by_runner = sorted(t for t, (c, why) in found.tests.items() if c == "low" and matches[t].reasons == (why,))
    if only_unreached:
        plain = [m for m in matches.values() if m.test_file not in by_runner]
        hint = selection_hint(confidence, plain, unresolved, result.null_literal_imports,
                              len(result.unresolved_imports)) if plain or not by_runner else ""
    if by_runner:
        hint = (f"{hint.replace(COMPLETE_HINT, '').strip()} {len(by_runner)} test file(s) load the change through "
                "their runner, not an import (setup files, a manual mock): low confidence, each one's reason says "
                "which.").strip()
    if found.unknown:
        confidence = "partial"
        unknown = sorted(set(found.unknown))
        shown = "; ".join(unknown[:3]) + (f"; and {len(unknown) - 3} more" if len(unknown) > 3 else "")
        hint = (f"{hint.replace(COMPLETE_HINT, '').strip()} Imports name the repository's own packages but resolve "
                f"to no file ({shown}): what imports them may be affected too, so the selection is partial.").strip()
    return replace(result, matches=tuple(m for _, m in sorted(matches.items())), confidence=confidence, hint=hint,
                   unresolved_files=unresolved)


def _from_text(project: str, config: str, text: str, stem: str) -> list[AliasMap]:
    out: list[AliasMap] = []
    for match in _BLOCK.finditer(text):
        kind = match.group(1)
        if kind == "alias" and stem == "jest.config":
            continue
        body = _balanced(text, match.end(2) - 1)
        if body is None:
            out.append(AliasMap(project, config, kind, None))
            continue
        if match.group(2) == "[":  # Vite's ``alias: [{ find: '@lib', replacement: ... }]``
            keys = [a or b or (c.strip("/") if c else "") for a, b, c in _FIND.findall(body)]
            regex = [bool(c) for _, _, c in _FIND.findall(body)]
            out.append(AliasMap(project, config, kind, tuple(
                re.compile(k if r else f"^{re.escape(k)}(?:/|$)") for k, r in zip(keys, regex, strict=True) if k)
                if keys else None))
            continue
        keys = [a or b or c for a, b, c in _KEY.findall(_top_level(body))]
        out.append(AliasMap(project, config, kind, _compiled(keys, regex=kind == "moduleNameMapper")))
    return out


def _compiled(keys: list[str], *, regex: bool) -> tuple[re.Pattern[str], ...] | None:
    patterns: list[re.Pattern[str]] = []
    for key in keys:
        try:
            patterns.append(re.compile(key) if regex else re.compile(f"^{re.escape(key)}(?:/|$)"))
        except re.error:
            return None  # a JavaScript-only construct: any bare specifier may be it
    return tuple(patterns) if patterns else None


def _balanced(text: str, start: int) -> str | None:
    """The bracketed text opening at ``start`` (quotes respected), or ``None`` when it never closes."""
    depth, quote, i = 0, "", start
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
        i += 1
    return None


def _top_level(body: str) -> str:
    """``body`` without what nested brackets hold (a value's ``path.resolve(__dirname, 'src')``)."""
    out, depth, quote = [], 0, ""
    for char in body:
        if quote:
            if depth == 0:
                out.append(char)
            if char == quote:
                quote = ""
            continue
        if char in "'\"`":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
            continue
        if depth == 0:
            out.append(char)
    return "".join(out)


def _project_of(root: Path, test_file: str) -> str:
    """The directory of the nearest ``package.json`` at or above a test file (``.``: the root)."""
    parent = PurePosixPath(test_file).parent
    while str(parent) not in ("", "."):
        if (root / parent / "package.json").is_file():
            return str(parent)
        parent = parent.parent
    return "."


def _rel(project: str, name: str) -> str:
    return name if project == "." else f"{project}/{name}"


def _inside(path: str, project: str) -> bool:
    return project == "." or path.startswith(f"{project}/")


def _is_js(path: str) -> bool:
    info = detect(path)
    return info is not None and info.family == "javascript"


def _read(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return handle.read(_MAX_CONFIG).decode("utf-8", "replace")
    except OSError:
        return ""
