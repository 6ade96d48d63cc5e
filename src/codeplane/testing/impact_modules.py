"""Module-level impact selection (§11.9): the reverse import walk over the structural index's ImportFact rows.

Changed files become module keys (``py:attr._make``, ``js:web/src/sum``) from ``st_module_key``. A reverse
import walk then finds every file that imports an affected module, level by level, with the three match
types of §11.9.3 over the import's module (its ``source_literal`` made absolute by the index: ``target_key``):
exact (``= m``), parent (the import names a package prefix of ``m``) and child (the import names a submodule
of ``m``, the spec's ``LIKE 'm.%'``, here a range of the sorted keys). ``from pkg import mod`` also matches
exactly through ``alt_key`` when the index resolved it to a module file — still module-level, never a symbol.
The walk runs over the epoch's reverse graph (``impact_graph.py``); the test-scoped questions (dynamic
imports, imported sources, coverage gaps) are SQL queries scoped with ``WHERE path IN (test files)``.

A test file is ``high`` when an exact chain links it to a change, ``low`` when only prefix matches do, and
every ``conftest.py`` above a test counts as imported by it. The tier is ``complete`` only if every changed
file resolved to a module and no test-scope import has a NULL literal; otherwise ``partial`` — and nothing
is added to make up for it (§11.9.7): the agent decides.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from codeplane.index.languages import detect
from codeplane.index.structural.modules import file_keys
from codeplane.testing.impact_code import ReadLines
from codeplane.testing.impact_graph import ImportGraph
from codeplane.testing.impact_jvm import JvmUsers, is_jvm_key
from codeplane.testing.impact_local import (
    Affected,
    ImportRow,
    import_rows,
    local_cases,
    package_prefixes,
)
from codeplane.testing.impact_models import (
    MAX_REASONS,
    UNCOVERED_CAP,
    CaseMatch,
    Confidence,
    ImpactResult,
    TestMatch,
)

#: A dotless module name shorter than this is too common a word to look for in strings.
_MIN_NAMED = 6
#: Files that may hold pytest's configuration, and the section that says they do.
_RUNNER_CONFIGS = frozenset({"pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"})
_PYTEST_SECTION = re.compile(r"\s*\[(?:pytest|tool:pytest|tool\.pytest(?:\.ini_options)?)\]")
_MAX_LEVELS = 64
_CHUNK = 200
#: The symbol walk stops once module-level selection holds all test files but one in this many (which are then
#: selected whole too, so stopping never narrows): Django's test files that import no repository code are
#: never reached by imports, and without this the walk would run on through thousands of definitions.
_NEARLY_ALL = 100
#: ... in a repository with at least this many test files: a walk that stops leaves no ``reached`` definitions
#: for coverage evidence to tell which tests led to the change (``coverage_select.py`` then keeps every test
#: recorded after it ran), and a small repository's walk is fast anyway.
_STOP_MIN_TESTS = 200


def _marks(count: int) -> str:
    return ",".join("?" * count)


def _chunks(items: Sequence[str], size: int = _CHUNK) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _display(key: str) -> str:
    return key.split(":", 1)[1] if ":" in key else key


class ModuleWalk:
    """The reverse import walk over one read transaction: ``add`` changed files (more as they come), then
    ``finish`` into an :class:`ImpactResult`. ``sources``: the per-epoch memo of what each test file imports."""

    def __init__(self, conn: sqlite3.Connection, graph: ImportGraph, test_files: Sequence[str],
                 sources: dict[str, tuple[str, ...]] | None = None, read_lines: ReadLines | None = None, *,
                 local_imports: dict[int, list[ImportRow] | None] | None = None) -> None:
        self.conn = conn
        #: test file id → its imports when one is inside a function (``impact_local.import_rows``; a memo).
        self.local_imports = local_imports
        #: A file's current lines; None: no test file is narrowed to the tests holding its imports.
        self.read_lines = read_lines
        #: test file → the repository files it imports directly (a memo).
        self.sources = sources if sources is not None else {}
        self.graph = graph
        self.tests = set(test_files)
        #: module key → confidence; path → (confidence, reasons)
        self.modules: dict[str, Confidence] = {}
        self.files: dict[str, tuple[Confidence, set[str]]] = {}
        #: Best confidence known per file id (a file already ``high`` cannot learn anything new).
        self.by_id: dict[int, Confidence] = {}
        #: Parent and child matches are always ``low``: each prefix and each package range is visited once.
        self.visited_prefixes: set[str] = set()
        self.visited_ranges: set[str] = set()
        #: What ``add`` was given, and what it made of it.
        self.added: set[str] = set()
        self.changed_modules: list[str] = []
        self.unresolved: list[str] = []
        #: The test files among ``files`` (every one of them: nothing can add to a module-level answer).
        self.tests_reached: set[str] = set()
        #: conftest.py → the confidence its tests were selected with (``_conftests`` runs after every ``add``).
        self.expanded: dict[str, Confidence] = {}
        #: Test files reached otherwise than by one of their imports (changed, under a conftest, the rest): whole.
        self.whole: set[str] = set()
        self.affected: Affected | None = None
        #: The modules of the files the symbol walk selected for, and whether it reached a test (``symbol_level``).
        self.unreached_sharp: list[str] = []
        self.sharp_reached = False
        self._jvm: JvmUsers | None = None

    # -- changed files → module keys -----------------------------------------------------------------
    def _keys_of(self, path: str) -> list[str]:
        file_id = self.graph.id_of.get(path)
        return list(self.graph.keys_of.get(file_id, ())) if file_id is not None else []

    def _keys_of_missing(self, path: str) -> list[str]:
        """Keys of a file the index no longer has (deleted): what it was named by, from its path."""
        init_dirs = {p.rpartition("/")[0] for p in self.graph.id_of if p.endswith(("/__init__.py", "/__init__.pyi"))}
        info = detect(path)
        return [k for k, _ in file_keys(path, info.language if info else None, None, init_dirs)]

    def primary_names(self, path: str) -> list[str]:
        keys = self._keys_of(path) or self._keys_of_missing(path)
        return [_display(keys[0])] if keys else []

    def run(self, changed_files: Sequence[str], *, uncovered: bool) -> ImpactResult:
        self.add(changed_files)
        return self.finish(uncovered=uncovered)

    def add(self, changed_files: Iterable[str]) -> bool:
        """Walk the importers of more changed files (the walk is monotone: adding files one batch at a time
        reaches what adding them at once does). True when every test file is selected by now."""
        changed = sorted({p.strip().removeprefix("./") for p in changed_files if p.strip()} - self.added)
        self.added.update(changed)
        frontier: set[str] = set()
        for path in changed:
            keys = self._keys_of(path) or self._keys_of_missing(path)
            if not keys:
                self.unresolved.append(path)
                self._non_code(path)
                continue
            self.changed_modules.append(_display(keys[0]))  # the primary name; the others are aliases
            for key in keys:
                self.modules[key] = "high"
                frontier.add(key)
            self._reach(path, "high", "is a changed test file" if path in self.tests else "is a changed file")
        for _ in range(_MAX_LEVELS):
            if not frontier:
                break
            frontier = self._level(frontier)
        if len(self.tests_reached) < len(self.tests):
            self._conftests()
        return len(self.tests) >= _STOP_MIN_TESTS and (
            len(self.tests) - len(self.tests_reached) <= len(self.tests) // _NEARLY_ALL)

    def select_rest(self, why: str) -> None:
        """Select whole every test file not reached yet (what a walk that stopped early could have reached)."""
        for test in sorted(self.tests - self.tests_reached):
            self._reach(test, "low", why)

    def finish(self, *, uncovered: bool) -> ImpactResult:
        changed_modules, unresolved = self.changed_modules, self.unresolved
        self._conftests()
        # A changed module no test imports, directly or not, may still be loaded by its name (``__import__``,
        # ``importlib``, an app factory string): its name in a test's string selects that test, and "no test is
        # affected" is not claimed complete (flask's ``cliapp.factory`` answered 0 tests, complete; 4 failed).
        unreached = (bool(changed_modules) or bool(self.unreached_sharp)) and not any(
            p in self.tests for p in self.files) and not self.sharp_reached
        if unreached:
            self._named_in_strings([*changed_modules, *self.unreached_sharp])
            self._directories_named_in_strings(sorted(self.added))
        nulls = self._null_literals()
        broken = self.unresolved_imports_of(changed_modules)
        narrowable = self._narrowable()
        matches = tuple(self._match(path, conf, tuple(sorted(reasons))[:MAX_REASONS], narrowable)
                        for path, (conf, reasons) in sorted(self.files.items()) if path in self.tests)
        tier: Literal["complete", "partial"] = (
            "complete" if not unresolved and not nulls and not broken and not unreached else "partial")
        gaps, total = self._uncovered() if uncovered else ((), 0)
        return ImpactResult(
            changed_modules=tuple(sorted(set(changed_modules))), unresolved_files=tuple(unresolved),
            confidence=tier, matches=matches, null_literal_imports=nulls,
            source_dirs=self.source_dirs([m.test_file for m in matches]),
            uncovered_modules=gaps, uncovered_total=total,
            hint=selection_hint(tier, matches, unresolved, nulls, len(broken)),
            unresolved_imports=broken[:UNCOVERED_CAP])

    def _non_code(self, path: str) -> None:
        """A changed file no import names: the test runner's configuration selects every test (an added
        ``usefixtures`` errored all 589 of click's tests, and nothing was selected); a data file or a template
        selects the tests that name it in a string (flask's ``config.json``, ``template_filter.html``), low."""
        name = path.rsplit("/", 1)[-1]
        lines = self.read_lines(path) if self.read_lines is not None and name in _RUNNER_CONFIGS else ()
        if name in ("pytest.ini", "conftest.py") or any(_PYTEST_SECTION.match(line) for line in lines):
            self.select_rest(f"{path} configures pytest")
            return
        if self.read_lines is None or len(name) < _MIN_NAMED or "." not in name:
            return
        tail = path.rsplit("/", 2)[-2:]
        quoted = re.compile(r"""["'/](?:""" + re.escape("/".join(tail)) + "|" + re.escape(name) + r""")["']""")
        for test in sorted(self.tests - self.tests_reached):
            if any(quoted.search(line) for line in self.read_lines(test)):
                self._reach(test, "low", f"names {name} in a string (reads the file)")

    def symbol_level(self, paths: Sequence[str], *, reached: bool) -> None:
        """The files the symbol walk selected for (``impact._sharp``), and whether it reached any test: when neither
        walk did, their modules' names are looked for in strings too, and the answer is partial."""
        self.sharp_reached = self.sharp_reached or reached
        self.unreached_sharp += [_display(keys[0]) for p in paths if (keys := self._keys_of(p))]

    def _named_in_strings(self, modules: Sequence[str]) -> None:
        """Select (low) the test files that write one of ``modules``' dotted names in a string."""
        if self.read_lines is None:
            return
        names = [m for m in modules if "." in m or len(m) >= _MIN_NAMED]  # ``"app"`` alone would name anything
        if not names:
            return
        quoted = re.compile(r"""["'](""" + "|".join(re.escape(n) for n in names) + r""")(?=["':.\s])""")
        for test in sorted(self.tests):
            lines = self.read_lines(test)
            found = next((m.group(1) for line in lines if (m := quoted.search(line))), None)
            if found is not None:
                self._reach(test, "low", f"names {found} in a string (a module loaded by its name)")

    def _directories_named_in_strings(self, paths: Sequence[str]) -> None:
        """Select (low) the test files that name, in a string, the directory of a changed Python file outside any
        package: code loaded from a directory a test changes into or puts on ``sys.path`` (flask's
        ``monkeypatch.chdir(test_path / "helloworld")`` then ``load_app()`` imports ``wsgi.py`` from there)."""
        if self.read_lines is None:
            return
        packages = {p.rpartition("/")[0] for p in self.graph.id_of if p.endswith(("/__init__.py", "/__init__.pyi"))}
        names = sorted({directory.rpartition("/")[2] for p in paths if p.endswith(".py")
                        and (directory := p.rpartition("/")[0]) and directory not in packages
                        and len(directory.rpartition("/")[2]) >= _MIN_NAMED})
        if not names:
            return
        quoted = re.compile(r"""["'/](""" + "|".join(re.escape(n) for n in names) + r""")["'/]""")
        for test in sorted(self.tests - self.tests_reached):
            found = next((m.group(1) for line in self.read_lines(test) if (m := quoted.search(line))), None)
            if found is not None:
                self._reach(test, "low", f"names the directory {found} in a string (code loaded from there)")

    def _narrowable(self) -> dict[int, list[ImportRow]]:
        """The imports of each test file reached through its imports only (candidates for ``_match``)."""
        if self.read_lines is None:
            return {}
        ids = [f for p in self.files if p in self.tests and p not in self.whole and p.endswith(".py")
               and (f := self.graph.id_of.get(p)) is not None]
        if not ids:
            return {}
        self.affected = Affected(self.modules, {keys[0] for p in self.files if (keys := self._keys_of(p))})
        return import_rows(self.conn, ids, self.local_imports)

    def _match(self, path: str, confidence: Confidence, reasons: tuple[str, ...],
               narrowable: Mapping[int, list[ImportRow]]) -> TestMatch:
        """A test file reached only through imports inside its test functions needs only those tests
        (``impact_local.py``); any other the whole file."""
        file_id = self.graph.id_of.get(path)
        rows = narrowable.get(file_id) if file_id is not None else None
        if rows is None or self.affected is None or self.read_lines is None:
            return TestMatch(path, confidence, reasons)
        cases = local_cases(self.conn, file_id, rows, self.affected) if file_id is not None else None
        if not cases:
            return TestMatch(path, confidence, reasons)
        lines = self.read_lines(path)
        if not lines or self.affected.spelled(lines):
            return TestMatch(path, confidence, reasons)
        why = reasons[0] if reasons else "imports an affected module"
        return TestMatch(path, confidence, reasons, tuple(
            CaseMatch(case, confidence, (f"{path}::{case} (imports inside the test)", why)) for case in cases))

    def unresolved_imports_of(self, changed_modules: Sequence[str]) -> tuple[str, ...]:
        """Imports of the changed modules' top-level packages that name no file: the module naming or the
        repository layout left an edge the walk cannot follow (never assumed harmless)."""
        tops = sorted({m.split(".", 1)[0] for m in changed_modules})
        found = {f"{self.graph.path_of.get(file_id, '?')} imports {_display(key)}"
                 for top in tops for file_id, key in self.graph.unresolved.get(top, ())}
        return tuple(sorted(found))

    # -- the reverse walk ------------------------------------------------------------------------------
    def _reach(self, path: str, confidence: Confidence, reason: str, *, imported: bool = False) -> bool:
        """Record that ``path`` is affected; True if this is news (new file or upgraded to high).

        Reasons are kept for the file's best confidence only, so a ``high`` match explains itself.
        ``imported``: reached through one of its imports (a test file then may need only some of its tests).
        """
        if not imported and path in self.tests:
            self.whole.add(path)
        known = self.files.get(path)
        if known is None or (known[0] == "low" and confidence == "high"):
            self.files[path] = (confidence, {reason})
            if path in self.tests:
                self.tests_reached.add(path)
            return True
        if known[0] == confidence and len(known[1]) < 2 * MAX_REASONS:
            known[1].add(reason)
        return False

    def _conftests(self) -> None:
        """pytest imports every ``conftest.py`` above a test file before the test: an affected conftest affects
        every test below its directory, with the conftest's own confidence."""
        for path, (confidence, _) in sorted(self.files.items()):
            directory, _, name = path.rpartition("/")
            if name != "conftest.py" or self.expanded.get(path) == confidence:
                continue
            self.expanded[path] = confidence
            for test in sorted(self.tests):
                if test.endswith(".py") and (not directory or test.startswith(directory + "/")):
                    self._reach(test, confidence, f"runs under {path} (affected conftest.py)")

    def _new_prefixes(self, module: str) -> list[str]:
        """``package_prefixes(module)`` not visited yet, now marked visited (shortest first). Every visited prefix
        came with all its shorter ones, so the search stops at the longest one visited."""
        if not module.startswith("py:"):
            return []
        fresh: list[str] = []
        end = len(module)
        while (dot := module.rfind(".", 3, end)) != -1 and module[:dot] not in self.visited_prefixes:
            fresh.append(module[:dot])
            end = dot
        fresh.reverse()
        self.visited_prefixes.update(fresh)
        return fresh

    def _level(self, frontier: set[str]) -> set[str]:
        """One reverse-import step: every importer of a frontier module, by exact/parent/child match."""
        graph = self.graph
        grew: dict[int, Confidence] = {}

        def consider(file_id: int, kind: str, module: str, imported: str) -> None:
            exact_high = kind == "exact" and self.modules.get(module) == "high"
            confidence: Confidence = "high" if exact_high else "low"
            known = self.by_id.get(file_id)
            if known in (confidence, "high"):
                return
            via = "" if imported == module else f" of {_display(module)}"
            weak = ", itself reached by a package match" if kind == "exact" and not exact_high else ""
            if self._reach(graph.path_of[file_id], confidence, f"imports {_display(imported)} ({kind}{via}{weak})",
                           imported=True):
                self.by_id[file_id] = grew[file_id] = confidence

        # The checks ``consider`` starts with, made first in the loops: a walk of Django asks ~25k times, and most
        # importers are known already.
        by_id = self.by_id
        for module in sorted(frontier):
            high = self.modules.get(module) == "high"
            for file_id in (*graph.importers(module), *graph.alt_importers(module)):
                known = by_id.get(file_id)
                if known != "high" and (high or known is None):
                    consider(file_id, "exact", module, module)
            for prefix in self._new_prefixes(module):
                for file_id in graph.importers(prefix):
                    if file_id not in by_id:  # a parent match is "low"
                        consider(file_id, "parent", module, prefix)
            if module in graph.packages and module not in self.visited_ranges:
                self.visited_ranges.add(module)
                for key in graph.submodule_imports(module):
                    for file_id in graph.importers(key):
                        if file_id not in by_id:  # so is a child match
                            consider(file_id, "child", module, key)
            if is_jvm_key(module):
                if self._jvm is None:
                    self._jvm = JvmUsers(self.conn, graph.keys_of)
                for file_id, how, why in self._jvm.users(module):
                    confidence: Confidence = "high" if how == "high" and high else "low"
                    if by_id.get(file_id) not in (confidence, "high") and self._reach(
                            graph.path_of[file_id], confidence, why, imported=True):
                        by_id[file_id] = grew[file_id] = confidence
        next_frontier: set[str] = set()
        for file_id in sorted(grew):
            for key in graph.keys_of.get(file_id, ()):
                if self.modules.get(key) is None or (self.modules[key] == "low" and grew[file_id] == "high"):
                    self.modules[key] = grew[file_id]
                    next_frontier.add(key)
        return next_frontier

    # -- test-scoped facts -----------------------------------------------------------------------------
    def _null_literals(self) -> int:
        count = 0
        for chunk in _chunks(sorted(self.tests)):
            count += int(self.conn.execute(
                f"SELECT count(*) FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
                f"WHERE f.path IN ({_marks(len(chunk))}) AND i.source_literal IS NULL", list(chunk)).fetchone()[0])
        return count

    def _imported_sources(self, test_files: Iterable[str]) -> list[str]:
        """``imported_sources`` (§11.9.2): repository files the given test files import directly."""
        wanted = sorted(set(test_files))
        missing = [p for p in wanted if p not in self.sources]
        for chunk in _chunks(missing):
            by_test: dict[str, set[str]] = {p: set() for p in chunk}
            for test, path in self.conn.execute(
                    f"SELECT DISTINCT f.path, rf.path FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
                    f"JOIN st_file rf ON rf.file_id IN (i.resolved_file_id, i.resolved_alt_file_id) "
                    f"WHERE f.path IN ({_marks(len(chunk))})", list(chunk)):
                by_test[str(test)].add(str(path))
            self.sources.update((p, tuple(sorted(found))) for p, found in by_test.items())
        return sorted({path for p in wanted for path in self.sources.get(p, ())})

    def source_dirs(self, test_files: Sequence[str]) -> tuple[str, ...]:
        dirs = {p.rpartition("/")[0] or "." for p in self._imported_sources(test_files)
                if p not in self.tests and not _test_like(p)}
        minimal = sorted(d for d in dirs if not any(d != o and (o == "." or d.startswith(o + "/")) for o in dirs))
        return tuple(minimal)

    def _uncovered(self) -> tuple[tuple[str, ...], int]:
        """Python source modules that no test run imports: not a test's import, nor one of those modules' own
        imports, transitively (``attr._funcs``, which tests reach through ``attr``'s ``__init__``, was listed beside
        the 25 test files selected for it). The 20 sharing the most leading package names with a changed module
        (then by name), and how many in all."""
        graph = self.graph
        # A name can be several files (``attr/__init__.py`` and its stub ``__init__.pyi``): importing it marks each.
        files_of: dict[str, list[int]] = {}
        for file_id, keys in graph.keys_of.items():
            for key in keys:
                files_of.setdefault(key, []).append(file_id)
        # What a test run loads: the test files and the conftest.py files pytest loads beside them.
        stack = [f for p, f in graph.id_of.items() if p in self.tests or p.rsplit("/", 1)[-1] == "conftest.py"]
        loaded = set(stack)
        while stack:
            targets, alts, _ = graph.edges.get(stack.pop(), ((), (), ()))
            for key in (*targets, *alts):
                for name in (*package_prefixes(key), key):
                    for found in files_of.get(name, ()):
                        if found not in loaded:
                            loaded.add(found)
                            stack.append(found)
        # A file is one module under several names (``shop.cart`` and, from the repository root, ``src.shop.cart``):
        # it is named by its primary one (the first by rank).
        gaps = set()
        for file_id, keys in graph.keys_of.items():
            path = graph.path_of.get(file_id, "")
            primary = next((k for k in keys if k.startswith("py:")), None)
            if primary is not None and file_id not in loaded and path not in self.tests and not _test_like(path):
                gaps.add(_display(primary))
        # The 20 shown are those nearest the change (a changed module itself first, then its package's): on Django
        # the first 20 by name were ``conf`` and ``django.conf.locale.*`` whatever had changed.
        changed = [m.split(".") for m in self.changed_modules]

        def distance(module: str) -> tuple[int, str]:
            parts = module.split(".")
            shared = max((next((i for i, (a, b) in enumerate(zip(parts, c, strict=False)) if a != b),
                               min(len(parts), len(c))) for c in changed), default=0)
            return -shared, module

        return tuple(sorted(gaps, key=distance)[:UNCOVERED_CAP]), len(gaps)


def _test_like(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.startswith(("test_", "conftest.")) or name.endswith("_test.py") or "/tests/" in f"/{path}"


#: The hint of a symbol-level selection that reached no test (``coverage_select`` replaces it when evidence adds).
NO_TEST_REACHES = "No test reaches the changed definitions; consider adding one."
#: Partial, as a walk that reaches no test always is: why, rather than only a suggestion to add tests (QA s53: the
#: change was a setup file, a manual mock, a snapshot... that tests did load).
NO_TEST_IMPORTS = ("No test imports the changed modules, directly or through other files. Partial: code may still "
                   "load them by a computed name (a dynamic import or require, a name in a string), which is not "
                   "followed; if nothing does, no test covers them yet.")


#: The hint's last sentence for a ``complete`` tier (dropped where a later step makes the answer ``partial``).
COMPLETE_HINT = "Selection is complete: every match is an exact import chain."


def selection_hint(tier: str, matches: Sequence[TestMatch], unresolved: Sequence[str], nulls: int,
                   broken: int = 0, *, symbol_level: bool = False) -> str:
    """The agent's hint for an answer; ``symbol_level``: the symbol walk's merge (``impact.py``), whose matches
    are low for its own reasons, not a package import's."""
    if not matches and not unresolved and not broken:
        if symbol_level:
            return NO_TEST_REACHES
        return NO_TEST_IMPORTS
    parts = []
    low = sum(1 for m in matches if m.confidence == "low")
    if low and symbol_level:
        parts.append(f"{low} test file(s) are reached only through a guess (low confidence: a member used by name on "
                     "a receiver whose class is unknown, code in a string, a package import); each one's chain says "
                     "which.")
    elif low:
        parts.append(f"{low} test file(s) match only through a package-level guess (low confidence: a parent/child "
                     "package import, or a JVM class of the same package or a wildcard import naming the changed "
                     "class); run them too unless inspect_affected_tests shows they are unrelated.")
    if unresolved:
        parts.append(f"{len(unresolved)} changed file(s) map to no importable module; CodePlane added no tests "
                     "for them: choose those yourself.")
    if nulls:
        parts.append(f"{nulls} test import(s) have no static source literal (dynamic imports).")
    if broken:
        parts.append(f"{broken} import(s) of the changed package resolve to no file (see unresolved_imports); "
                     "tests reaching the change through them may be missing.")
    if tier == "complete" and not low:
        parts.append(COMPLETE_HINT)
    return " ".join(parts)
