"""Go test selection at test-function level (issue 22): the cases for ``go test -run '^(TestA|TestB)$'``.

The walk is Python's (``impact_symbols.SymbolWalk``) over the structural index's Go facts: same-package names
PROVEN, imported package members STRONG, a receiver's own members STRONG when one type declares them; the
rest (interface calls, promoted members, ``a.Push()`` on a local) is matched by name, ``low``, so nothing is
dropped for want of a resolved receiver. A reached top-level ``Test*``/``Fuzz*`` function of a ``_test.go`` file,
or an ``Example*`` with an output comment, is a case of its package's target; a benchmark or an example without
output is not (``go test`` never runs them).

What runs when a package loads cannot be followed by uses: a changed line outside any function, a changed
definition called by a package-level initializer or reached by an ``init`` function, ``TestMain`` or
package-level code of a test file. Such a change selects whole every test package that imports the changed
file's package, directly or through other packages (import paths from the nearest ``go.mod``), and the
answer says so. A ``go.mod`` that cannot be read makes that every Go test package.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from codeplane.testing.impact_code import ReadLines
from codeplane.testing.impact_reach import Def, Reach
from codeplane.testing.impact_symbols import SymbolWalk

#: ``go test`` runs these top-level functions of a ``_test.go`` file: the name goes on with a non-lower-case
#: character or ends (``Testify`` is no test). Benchmarks run only under ``-bench``, which neither ``go test``
#: nor a selected run passes: one asked for by ``-run`` never runs, and the run would report it missing.
_CASE = re.compile(r"^(?:Test|Example|Fuzz)(?:[^a-z].*)?$")
_BENCHMARK = re.compile(r"^Benchmark(?:[^a-z].*)?$")
#: An example runs only when its body ends with an output comment; without one it is compiled, never run.
_OUTPUT = re.compile(r"^\s*//\s*(?:Unordered output|Output):")
_MODULE = re.compile(r"^\s*module\s+(\S+)")
#: A package variable's value that is a function literal: ``var check = func(`` / ``check = func(`` in a block.
_FUNC_VALUE = re.compile(r"=\s*func\s*\(")


def is_go_test(path: str) -> bool:
    return path.endswith("_test.go")


def package_dir(path: str) -> str:
    """``svc/calc/calc.go`` → ``svc/calc``; a file at the root → ``""``."""
    return path.rpartition("/")[0]


@dataclass
class GoSelection:
    #: Package directory (``""``: the root) → case name (``""``: the whole package) → how it was reached.
    cases: dict[str, dict[str, Reach]] = field(default_factory=dict)
    #: (path, why) for every change selected by package imports instead.
    fallbacks: list[tuple[str, str]] = field(default_factory=list)
    seeds: list[str] = field(default_factory=list)


class GoWalk(SymbolWalk):
    suffixes = (".go",)
    language = "Go"

    def _test_side(self, d: Def, path: str, reach: Reach) -> bool:
        if d.parent is None and d.kind == "function" and d.name == "TestMain":
            self.select(path, "", reach.then(f"{path}::TestMain (runs every test of the package)", "high"))
            return True
        if d.parent is None and d.kind == "function" and _CASE.match(d.name):
            if not d.name.startswith("Example") or self._has_output(path, d):
                self.select(path, d.name, reach)
            return True
        return d.parent is None and d.kind == "function" and bool(_BENCHMARK.match(d.name))

    def _has_output(self, path: str, d: Def) -> bool:
        lines = self.read_lines(path)
        return any(_OUTPUT.match(line) for line in lines[max(0, d.start - 1):d.end])

    def _spread(self, d: Def, reach: Reach) -> None:
        if d.name == "_":
            return  # the blank identifier: nothing can use it (a ``_`` elsewhere is another blank, not a use)
        if d.parent is None and d.kind == "function" and d.name == "init":
            path = self.path_of.get(d.file_id, "")
            self._module_level(path, d.start, reach.then(f"{path}:{d.start} (init runs when the package loads)",
                                                         "high"), "an init function reaches it")
            return
        super()._spread(d, reach)

    def _seed(self, path: str, ranges: Sequence[tuple[int, int]]) -> None:
        """A changed package-level initializer that calls anything runs when the package loads (a panic there
        fails every test that loads it): package imports decide, not the variable's uses."""
        file_id = self.id_of.get(path)
        lines = self.read_lines(path)
        for first, last in ranges if file_id is not None else ():
            for line in range(max(1, first), min(last, len(lines), first + 5_000) + 1):
                d = self.innermost(file_id, line) if file_id is not None else None
                if d is not None and d.kind not in ("function", "method") and self._import_time(d, line) \
                        and "(" in lines[line - 1]:
                    self._module_level(path, line, Reach("high", (f"{path}:{line} (package-level initializer)",)),
                                       "a package-level initializer changed")
                    return
        super()._seed(path, ranges)

    def _import_time(self, user: Def | None, line: int) -> bool:
        """Go evaluates no default values: a function's header line holds only its body's code (``func (t T)
        String() string { return f(t) }``, common in Go), where Python's may hold defaults. A package variable
        whose value is a function literal (``var _ = func(a A) { a.Equal(a) }``, a compile-time check) runs its
        body only when called, unless the literal is called right there (``}()``)."""
        if user is None:
            return True
        if any(a.kind in ("function", "method") and a.start <= line for a in self.ancestors(user)):
            return False
        return not (user.kind == "variable" and user.start < line <= user.end and self._uncalled_literal(user))

    def _uncalled_literal(self, d: Def) -> bool:
        lines = self.read_lines(self.path_of.get(d.file_id, ""))
        if d.end > len(lines):
            return False
        return bool(_FUNC_VALUE.search(lines[d.start - 1])) and lines[d.end - 1].rstrip().endswith("}")

    def _is_keyword(self, path: str, line: int, col: int) -> bool:
        return False  # Go has no keyword arguments: ``name = ...`` is an assignment, a use

    def bare_visible(self, file_id: int, d: Def, owner: Def | None) -> bool:
        return True  # a package's names are bare in every file of the package

    def member_visible(self, file_id: int, d: Def, owner: Def | None) -> bool:
        return True  # ``pkg.Name``: Python's module rules do not apply

    def external_receiver(self, file_id: int, line: int, col: int, *, foreign: bool) -> bool:
        return False

    def definition_receiver(self, file_id: int, line: int, col: int) -> bool:
        return False  # ``T.Method`` is a method expression: Go's names are not Python's


def select_go(conn: sqlite3.Connection, id_of: Mapping[str, int], path_of: Mapping[int, str],
              changes: Mapping[str, Sequence[tuple[int, int]]], read_lines: ReadLines) -> GoSelection:
    """The Go test cases ``changes`` (``.go`` path → changed lines, 1-based, in the file as it is now; empty:
    the whole file) reach."""
    tests = [p for p in id_of if is_go_test(p)]
    walk = GoWalk(conn, id_of, path_of, tests, read_lines)
    sharp = {p: r for p, r in changes.items() if r}
    out = walk.run(sharp) if sharp else walk.out
    selection = GoSelection(seeds=list(out.seeds))
    for test_file, cases in sorted(out.cases.items()):
        package = selection.cases.setdefault(package_dir(test_file), {})
        for case, reach in cases.items():
            if reach.better_than(package.get(case)):
                package[case] = reach
    blunt = {p: "no changed lines given" for p, r in changes.items() if not r}
    blunt.update(out.fallbacks)
    selection.fallbacks = sorted(blunt.items())
    if blunt:
        for directory, why in _PackageImports(conn, path_of, read_lines).dependents(
                {package_dir(p): p for p in blunt}).items():
            selection.cases.setdefault(directory, {})[""] = Reach("high", (why,))
    return selection


class _PackageImports:
    """Which package directories import which: ``st_import`` literals against ``go.mod`` module paths."""

    def __init__(self, conn: sqlite3.Connection, path_of: Mapping[int, str], read_lines: ReadLines) -> None:
        self.read_lines = read_lines
        self.go_files = sorted(p for p in path_of.values() if p.endswith(".go"))
        self.importers: dict[str, set[tuple[str, bool]]] = {}  # import path → (importing dir, from a test file)
        for path, literal in conn.execute(
                "SELECT f.path, i.source_literal FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
                "WHERE f.path LIKE '%.go' AND i.source_literal IS NOT NULL"):
            self.importers.setdefault(str(literal), set()).add((package_dir(str(path)), is_go_test(str(path))))
        self._modules: dict[str, tuple[str, str] | None] = {}

    def _module(self, directory: str) -> tuple[str, str] | None:
        """(module directory, module path) of the nearest ``go.mod`` at or above ``directory``."""
        if directory in self._modules:
            return self._modules[directory]
        found = None
        for line in self.read_lines(f"{directory}/go.mod" if directory else "go.mod"):
            match = _MODULE.match(line)
            if match:
                found = (directory, match.group(1).strip('"'))
                break
        else:
            if directory:
                found = self._module(package_dir(directory))
        self._modules[directory] = found
        return found

    def import_path(self, directory: str) -> str | None:
        module = self._module(directory)
        if module is None:
            return None
        root, name = module
        return name if directory == root else f"{name}/{directory[len(root) + 1:] if root else directory}"

    def dependents(self, changed: Mapping[str, str]) -> dict[str, str]:
        """Package directories whose tests load a changed package (changed directory → a changed file in it),
        each with why; every Go package directory when a changed package has no import path."""
        found: dict[str, str] = {}
        frontier: list[tuple[str, str]] = []
        for directory, path in sorted(changed.items()):
            found[directory] = f"{path} (a change the walk cannot follow: its package's tests run whole)"
            imported = self.import_path(directory)
            if imported is None:
                why = f"{path}: no go.mod names its package (every Go test package runs)"
                return {package_dir(p): why for p in self.go_files if is_go_test(p)}
            frontier.append((imported, path))
        seen = {p for p, _ in frontier}
        while frontier:
            imported, path = frontier.pop()
            for directory, from_test in sorted(self.importers.get(imported, ())):
                found.setdefault(directory, f"imports {imported} (changed: {path})")
                above = None if from_test else self.import_path(directory)
                if above is not None and above not in seen:
                    seen.add(above)
                    frontier.append((above, path))
        return found
