"""QA31's impact-selection defects (§11.9, issue 22) on the real index: a changed definition read only by name
selects the tests importing its module (not nothing), a test mixin pytest never collects yields no case ids of its
own, and a run whose partial selection holds no test says that nothing was tested."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.testing import ImpactIndex, ImpactResult, TestingService
from tests.builders import indexed_repo

# marshmallow's shape: ``tests/base.py``'s ``User`` is read by schemas through attribute names only.
BASE: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = .\n",
    "tests/__init__.py": "",
    "tests/base.py": (
        "class User:\n"                                   # 1
        "    SPECIES = 'Homo sapiens'\n"                  # 2: a class attribute, read as getattr(obj, 'SPECIES')
        "\n"
        "    def __init__(self, name):\n"                 # 4
        "        self.name = name\n"                      # 5
        "\n"
        "    @property\n"                                 # 7
        "    def since_created(self):\n"                  # 8
        "        return 3\n"),                            # 9: the getter's body
    "tests/schema.py": (
        "FIELDS = {'since_created': 'since_created', 'species': 'SPECIES'}\n\n\n"
        "def dump(obj):\n    return {k: getattr(obj, a) for k, a in FIELDS.items()}\n"),
    "tests/test_schema.py": (
        "from tests.base import User\nfrom tests.schema import dump\n\n\n"
        "def test_dump():\n    assert dump(User('a')) == {'since_created': 3, 'species': 'Homo sapiens'}\n"),
    "tests/test_plain.py": "def test_plain():\n    assert True\n",
    "NOTES.txt": "notes\n",
}
BASE_TESTS = ["tests/test_plain.py", "tests/test_schema.py"]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService]]:
    with indexed_repo(tmp_path_factory.mktemp("s49") / "repo", BASE) as indexed:
        yield indexed


def _affected(repo: Path, index: IndexService, tests: list[str], path: str, line: int) -> ImpactResult:
    return ImpactIndex(index.read_connection).affected(
        [path], tests, ranges={path: [(line, line)]}, read_lines=lambda rel: (repo / rel).read_text().splitlines())


def _selected(result: ImpactResult) -> set[str]:
    return {node for m in result.matches for node in m.node_ids}


@pytest.mark.parametrize(("line", "symbol"), [(9, "tests.base.User.since_created"), (2, "tests.base.User.SPECIES")])
def test_a_definition_read_only_by_name_selects_the_tests_importing_its_module(
        base: tuple[Path, IndexService], line: int, symbol: str) -> None:
    repo, index = base
    result = _affected(repo, index, BASE_TESTS, "tests/base.py", line)
    assert result.changed_symbols == (symbol,)
    assert _selected(result) == {"tests/test_schema.py"}, result
    assert len(result.fallbacks) == 1 and f"no reference the index resolves reaches {symbol}" in result.fallbacks[0]
    assert "No test reaches" not in result.hint and "fell back to module-level selection" in result.hint


def test_a_run_whose_partial_selection_holds_no_test_says_nothing_was_tested(
        base: tuple[Path, IndexService]) -> None:
    repo, index = base
    layout = RepoLayout(repo)
    service = TestingService(repo, CodePlaneConfig().tests, layout, ArtifactStore(layout.artifacts_dir, 1),
                             impact=ImpactIndex(index.read_connection))
    try:
        record = service.start_run(affected_by=["NOTES.txt"])
        while not record.finished:
            record.wait(record.version, 1.0)
        message = record.snapshot().message
    finally:
        service.close()
    assert message.startswith("nothing ran: the selection for NOTES.txt is partial") and "no pass" in message, message
    assert "no test target reaches" not in message


# more-itertools' shape: ``PeekableMixinTests`` (no base, not ``Test*``) runs only inside its test subclasses.
MIXIN: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/peek.py": "class Peekable:\n    def __bool__(self):\n        return True\n",   # 3: __bool__'s body
    "tests/test_peek.py": (
        "from unittest import TestCase\n\nfrom pkg.peek import Peekable\n\n\n"
        "class PeekableMixinTests:\n    def test_truthiness(self):\n        assert Peekable()\n\n\n"
        "class PeekableTests(PeekableMixinTests, TestCase):\n    pass\n\n\n"
        "class TestPlain:\n    def test_truthiness(self):\n        assert Peekable()\n"),
    "tests/test_orphan.py": (
        "from pkg.peek import Peekable\n\n\n"
        "class OrphanMixin:\n    def test_truthiness(self):\n        assert Peekable()\n\n\n"
        "def test_other():\n    assert True\n"),
}


def test_a_mixin_pytest_never_collects_names_no_case_of_its_own(tmp_path: Path) -> None:
    """pytest collects ``PeekableTests`` (a ``TestCase``) and ``TestPlain``, never the mixin: a case id under the
    mixin made the run report its file ``error``. A mixin no test class derives from: its file, whole."""
    tests = ["tests/test_orphan.py", "tests/test_peek.py"]
    with indexed_repo(tmp_path / "repo", MIXIN) as (repo, index):
        result = _affected(repo, index, tests, "src/pkg/peek.py", 3)
    assert _selected(result) == {"tests/test_peek.py::PeekableTests", "tests/test_peek.py::TestPlain::test_truthiness",
                                 "tests/test_orphan.py"}, result


# jinja2's shapes: import-time code that names a reached definition without running it.
IMPORT_TIME: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/env.py": (
        "from collections import abc\n\n\n"
        "class Template:\n    pass\n\n\n"
        "class Environment:\n    def __init__(self):\n        self.x = 1\n\n\n"           # 10: __init__'s body
        "Environment.template_class = Template\n\n\n"                                     # 13: an attribute store
        "class Undefined:\n    __slots__ = ()\n\n    def __str__(self):\n        return ''\n\n\n"  # 20: __str__'s body
        "del (\n    Undefined.__slots__,\n)\n\n\n"
        "@abc.MutableMapping.register\nclass Cache:\n    def __init__(self, n):\n        self.n = n\n\n"
        "    def copy(self):\n        return Cache(self.n)\n\n    __copy__ = copy\n\n\n"    # 34: copy's body
        "CACHE = Cache(50)\n\n\n"
        "def optimizeconst(f):\n    def new_func(self, node):\n        return f(self, node) + 1\n"  # 44: new_func's
        "    return new_func\n\n\n"
        "def _make_unop(op):\n    @optimizeconst\n    def visitor(self, node):\n        return op\n"
        "    return visitor\n\n\n"
        "class Gen:\n    visit_pos = _make_unop(1)\n\n\n"
        "class Page:\n    def __init__(self):\n        self.n = 1\n\n\n"                   # 61: __init__'s body
        "class Site:\n    page_class = None\n\n\nSite.page_class = Page\n"),
    "tests/test_env.py": "from pkg.env import Environment\n\n\ndef test_env():\n    assert Environment().x == 1\n",
    "tests/test_undef.py": "from pkg.env import Undefined\n\n\ndef test_str():\n    assert str(Undefined()) == ''\n",
    "tests/test_cache.py": (
        "from pkg.env import CACHE, Cache\n\n\ndef test_copy():\n    assert Cache(1).copy().n == 1\n\n\n"
        "def test_plain():\n    assert CACHE.n == 50\n"),
    "tests/test_gen.py": "from pkg.env import Gen\n\n\ndef test_pos():\n    assert Gen().visit_pos(None) == 2\n",
    "tests/test_site.py": "from pkg.env import Site\n\n\ndef test_site():\n    assert Site.page_class().n == 1\n",
}


@pytest.mark.parametrize(("line", "expected"), [
    # ``Environment.template_class = Template`` makes no Environment: only the test constructing one.
    (10, {"tests/test_env.py::test_env"}),
    # ``del (Undefined.__slots__,)`` runs no ``__str__``.
    (20, {"tests/test_undef.py::test_str"}),
    # ``Cache(50)`` runs ``__init__``, not ``__copy__``: the instance it makes is reached, not its import.
    (34, {"tests/test_cache.py::test_copy", "tests/test_cache.py::test_plain"}),
    # ``_make_unop(1)`` applies ``@optimizeconst``, which only defines ``new_func``: whoever calls it runs it.
    (44, {"tests/test_gen.py::test_pos"}),
    # ``Site.page_class = Page`` stores ``Page`` in ``Site.page_class``: its readers, not every importer of the module.
    (61, {"tests/test_site.py::test_site"}),
])
def test_import_time_code_that_runs_none_of_a_change_selects_no_whole_file(
        tmp_path: Path, line: int, expected: set[str]) -> None:
    tests = sorted(p for p in IMPORT_TIME if p.startswith("tests/"))
    with indexed_repo(tmp_path / "repo", IMPORT_TIME) as (repo, index):
        result = _affected(repo, index, tests, "src/pkg/env.py", line)
    assert result.fallbacks == () and _selected(result) == expected, result
