"""What pytest makes of reached code, in a symbol-level impact walk (``impact_symbols.py``).

A reached test function (``test*`` at module level or in a class) is a selected case (``file::Class::test``),
selected again in every test file that imports it by name; a reached non-test member of a test class selects
the class (a fixture, a decorated or ``setup_*``/``teardown_*`` method, a dunder, a class attribute: any test
of it may run it; a plain helper method selects the tests calling it), and the class's subclasses in test files
too (pytest runs inherited tests under them). A test in a mixin pytest never collects (no base, not ``Test*``)
is no case of its own: the test classes mixing it in are selected (with none, its file).

pytest fixtures spread to every function of their scope (the ``conftest.py`` directory, the test file, or
everywhere for a plugin module) that takes a parameter of the fixture's name, and to what names it in a string
in a test file of the scope (``usefixtures`` on a test or class, ``getfixturevalue`` in a function, read by
``impact_fixtures.py``; elsewhere the whole file); an ``autouse`` fixture or a ``pytest_*`` hook selects every
test of its scope; a fixture spreads no further (pytest refuses a direct call of one: ``ctx.invoke()`` is no
use of it).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from codeplane.testing.impact_code import ReadLines
from codeplane.testing.impact_fixtures import fixture_requests
from codeplane.testing.impact_reach import Def, Reach
from codeplane.testing.impact_text import header_end
from codeplane.testing.impact_walkfacts import WalkFacts
from codeplane.testing.impact_walkstate import WalkState, is_dunder

_FIXTURE_NAME = re.compile(r"""name\s*=\s*["']([A-Za-z_]\w*)["']""")
#: ``@pytest.fixture``, ``@fixture(...)``, ``@pytest_asyncio.fixture``: a decorator that is plainly pytest's.
_FIXTURE_DECORATOR = re.compile(r"@\s*(?:pytest(?:_asyncio)?\s*\.\s*)?fixture\b")
#: ``class Name:``, ``class Name():``, ``class Name(object):``: a class header naming no base that may collect it.
_BASELESS = re.compile(r"^\s*class\s+\w+\s*(?:\(\s*(?:object\s*,?\s*)?\))?\s*:")
#: Where a ``python_classes`` setting (which classes pytest collects) may stand.
_PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def is_conftest(path: str) -> bool:
    return path.rsplit("/", 1)[-1] == "conftest.py"


class PytestRules(WalkState):
    """The walk's rules for test cases, test classes, fixtures and hooks (mixed into ``SymbolWalk``)."""

    def __init__(self, conn: sqlite3.Connection, id_of: Mapping[str, int], path_of: Mapping[int, str],
                 tests: Iterable[str], read_lines: ReadLines, *, facts: WalkFacts | None = None) -> None:
        super().__init__(conn, id_of, path_of, tests, read_lines, facts=facts)
        #: test file → fixture name → lines requesting it by a string (``impact_fixtures``; None: every string).
        self._requests: dict[str, dict[str, frozenset[int]] | None] = {}
        #: Whether a pytest configuration sets ``python_classes`` (``_uncollected``; None: not read yet).
        self._custom_classes: bool | None = None

    def _test_side(self, d: Def, path: str, reach: Reach) -> bool:
        """Select what ``d`` (in a test file) makes run; True when nothing else can reach further."""
        chain = self.ancestors(d)
        for i, node in enumerate(chain):
            if node.name.startswith("test") and node.kind in ("function", "method") and all(
                    a.kind == "class" for a in chain[i + 1:]):
                owner = chain[i + 1] if i + 1 < len(chain) else None
                self._select_case(path, chain[-1], node.lexical_path.replace(".", "::"), chain[i + 1:], reach)
                if owner is not None:
                    self._subclasses(owner, reach)
                return True
        classes = [a for a in chain if a.kind == "class"]
        if classes and self._class_wide(chain):
            outer = classes[-1]
            self._select_case(path, outer, outer.lexical_path.replace(".", "::"), classes, reach)
            self._subclasses(outer, reach)
        return False

    def _select_case(self, path: str, top: Def, case: str, classes: list[Def], reach: Reach) -> None:
        """Select ``case`` (under ``top``, in the test classes ``classes``) where pytest collects it. Under a
        mixin pytest never collects (``class PeekableMixinTests:``, no base, not ``Test*``) a case id names
        nothing (the run reports its target ``error``): its tests run in the subclasses that mix it in, which
        ``_subclasses`` selects whole; with none in a test file, the file is selected whole (never narrower)."""
        mixin = next((c for c in classes if self._uncollected(c)), None)
        if mixin is None:
            self.select(path, case, reach)
            self._imported(top, case, reach)
            return
        if not any(self._derived_in_tests(mixin)):
            self.select(path, "", reach.then(f"{path} ({mixin.name} is not collected by pytest)", "low"))

    def _derived_in_tests(self, cls: Def) -> Iterator[Def]:
        """The classes in test files whose header names ``cls`` (its subclasses there)."""
        for file_id, line in self.rows(
                "SELECT file_id, start_line FROM st_ref WHERE target_uid = ? AND role = 'REFERENCE'", (cls.uid,)):
            sub = self.innermost(int(file_id), int(line))
            if self.path_of.get(int(file_id), "") in self.tests and sub is not None and sub.kind == "class" and (
                    sub.uid != cls.uid and int(line) == sub.start):
                yield sub

    def _uncollected(self, cls: Def) -> bool:
        """Whether pytest plainly never collects the class ``cls``: not named ``Test*``, with no base (so no
        ``unittest.TestCase``), and no ``python_classes`` setting that could name it otherwise."""
        if cls.name.startswith("Test"):
            return False
        lines = self.read_lines(self.path_of.get(cls.file_id, ""))
        header = " ".join(lines[cls.start - 1:header_end(lines, cls.start)]) if lines else ""
        if _BASELESS.match(header) is None:
            return False
        if self._custom_classes is None:
            self._custom_classes = any("python_classes" in text for config in _PYTEST_CONFIGS
                                       for text in self._config_lines(config))
        return not self._custom_classes

    def _config_lines(self, path: str) -> Sequence[str]:
        try:
            return self.read_lines(path)
        except OSError:  # no such file: it sets nothing
            return ()

    def _class_wide(self, chain: list[Def]) -> bool:
        """Whether a reached member of a test class (``chain``: it and what encloses it, innermost first) may run
        for any test of the class: a fixture or any decorated method, ``setup_method``/``teardown_method`` and the
        like, a dunder, a class attribute or a nested class. A plain helper method runs where a test calls it (a
        use of its own, which selects that test): not for the others."""
        at = next(i for i, a in enumerate(chain) if a.kind == "class")
        member = chain[at - 1] if at > 0 else None
        if member is None or member.kind not in ("function", "method") or len(chain) > at + 1:
            return True  # the class itself, a class attribute, or a class nested in another or in a function
        name = member.name
        return is_dunder(name) or name.lower().startswith(("setup", "teardown")) or bool(
            self.decorator_block(member)[1]) or not self.read_lines(self.path_of.get(member.file_id, ""))

    def _collected(self, d: Def) -> bool:
        """Whether pytest collects ``d`` as a test: ``test*`` at module level or in classes only."""
        chain = self.ancestors(d)
        return d.name.startswith("test") and d.kind in ("function", "method") and all(
            a.kind == "class" for a in chain[1:])

    def _imported(self, top: Def, case: str, reach: Reach) -> None:
        """pytest collects a test class or function again in every test file that imports it by name."""
        rows = self.rows("SELECT file_id, token_text FROM st_ref WHERE target_uid = ? AND role = 'IMPORT'",
                                 (top.uid,))
        for file_id, token in rows:
            path = self.path_of.get(int(file_id), "")
            if path in self.tests:
                again = str(token) + case[len(top.name):]
                self.select(path, again, reach.then(f"{path}::{again} (imports {top.name})", "high"))

    def _subclasses(self, cls: Def, reach: Reach) -> None:
        """Test classes deriving from ``cls`` run its tests too: select them whole."""
        rows = self.rows("SELECT file_id, start_line FROM st_ref WHERE target_uid = ? AND role = 'REFERENCE'",
                                 (cls.uid,))
        for file_id, line in rows:
            path = self.path_of.get(int(file_id), "")
            sub = self.innermost(int(file_id), int(line))
            if path in self.tests and sub is not None and sub.kind == "class" and sub.uid != cls.uid and (
                    int(line) == sub.start):
                case = sub.lexical_path.replace(".", "::")
                if case not in self.out.cases.get(path, {}):
                    self.select(path, case, reach.then(f"{path}::{case} (inherits {cls.name})", "high"))
                    self._imported(sub, case, reach)
                    self._subclasses(sub, reach)

    def _scope(self, path: str) -> Callable[[str], bool]:
        if is_conftest(path):
            directory = path.rpartition("/")[0]
            return lambda p: not directory or p.startswith(directory + "/")
        if path in self.tests:
            return lambda p: p == path
        return lambda p: True

    def _fixture(self, d: Def, path: str, reach: Reach) -> bool:
        """Select what a fixture or hook ``d`` runs for; True when ``d`` is plainly a pytest fixture
        (``@pytest.fixture``...): pytest refuses a direct call of one, so it runs only through its name (a
        parameter, ``usefixtures``, ``getfixturevalue``, ``autouse``), never where code calls something so
        named (``ctx.invoke(...)`` in flask is no use of a test class's ``invoke`` fixture)."""
        _, decorators = self.decorator_block(d)
        in_scope = self._scope(path)
        if not self.read_lines(path):  # no text: it may be an autouse fixture
            for test in sorted(t for t in self.tests if in_scope(t)):
                self.select(test, "", reach.then(f"{test} (under {path}, whose text is unreadable)", "low"))
            return False
        hook = d.name.startswith("pytest_") and d.parent is None
        if not hook and "fixture" not in decorators:
            return False
        fixture = not hook and _FIXTURE_DECORATOR.search(decorators) is not None
        if hook or "autouse" in decorators:
            why = "pytest hook" if hook else "autouse fixture"
            for test in sorted(t for t in self.tests if in_scope(t)):
                self.select(test, "", reach.then(f"{test} (runs under {why} {d.name})", "high"))
            return fixture
        named = _FIXTURE_NAME.search(decorators)
        name = named.group(1) if named else d.name
        for file_id, line in self.rows(
                "SELECT r.file_id, r.start_line FROM st_ref r JOIN st_bind b ON b.bind_id = r.bind_id "
                "WHERE r.token_text = ? AND r.role = 'DEFINITION' AND b.reason_code = 'PARAM'", (name,)):
            user_path = self.path_of.get(int(file_id), "")
            if not in_scope(user_path):
                continue
            user = self.innermost(int(file_id), int(line))  # the function whose parameter it is
            if user is not None and self.read_lines(user_path) and "fixture" not in self.decorator_block(user)[1] and (
                    user_path not in self.tests or not self._collected(user)):
                # pytest hands fixtures to tests and to other fixtures only: a helper outside the test files
                # (``tests/strategies.py``'s ``simple_classes(slots=...)``) or in one (attrs' ``_add_init(cls,
                # frozen)`` in ``test_dunders.py``) gets what its caller passes.
                continue
            if user is not None and user.uid != d.uid and user.kind in ("function", "method"):
                step = (f"{user_path}::{user.lexical_path.replace('.', '::')}" if user_path in self.tests
                        else user.qualified_name)
                self.enqueue(user, reach.then(f"{step} (takes fixture {name})", "high"))
        quoted = (f'"{name}"', f"'{name}'")
        for test in sorted(t for t in self.tests if in_scope(t)):
            lines = self.read_lines(test)
            if not any(name in text for text in lines):
                continue
            if test not in self._requests:
                self._requests[test] = fixture_requests(lines)
            by_name = self._requests[test]
            requested = by_name.get(name, frozenset()) if by_name is not None else frozenset(
                n for n, text in enumerate(lines, 1) if any(q in text for q in quoted))
            why = f"{test} (names fixture {name} in a string)"
            file_id = self.id_of.get(test)
            for number in sorted(requested):
                # ``@pytest.mark.usefixtures("name")`` on a test or test class (a decorator line belongs to the
                # definition it decorates) or ``request.getfixturevalue("name")`` in a function: what that
                # definition runs. Anywhere else (``pytestmark = ...``, a class attribute, module code): the file.
                user = self.innermost(file_id, number) if file_id is not None else None
                if user is not None and user.kind in ("function", "method", "class"):
                    self.enqueue(user, reach.then(why, "low"))
                else:
                    self.select(test, "", reach.then(why, "low"))
        return fixture
