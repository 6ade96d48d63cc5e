"""Narrowings of impact selection found on the issue 22 benchmark (click, attrs, requests, flask): fixture names
written as data, helpers that take a fixture's name as a parameter, pytest marks' arguments, ``hasattr``, a method
read and stored under its own name, imports inside test functions. Each test also shows the use that must still
select, and the doubt that widens."""

from __future__ import annotations

from pathlib import Path

from codeplane.testing import ImpactIndex, ImpactResult
from codeplane.testing.impact_fixtures import fixture_requests
from codeplane.testing.impact_text import calls_at, restored_at
from tests.builders import indexed_repo


def _select(root: Path, index: object, path: str, line: int | None, tests: list[str]) -> ImpactResult:
    return ImpactIndex(index.read_connection).affected(  # type: ignore[attr-defined]
        [path], tests, ranges={path: [(line, line)]} if line else None,
        read_lines=lambda rel: (root / rel).read_text().splitlines())


def _nodes(result: ImpactResult) -> set[str]:
    return {n for m in result.matches for n in m.node_ids}


FIXTURES: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "tests/conftest.py": (
        "import pytest\n\n\n"
        "@pytest.fixture(name='slots', params=(True, False))\n"
        "def _slots(request):\n"
        "    return request.param\n"),                                     # 6: the fixture's body
    # "slots" only as data (keyword names), in a helper called at import time; a helper taking ``slots``.
    "tests/test_data.py": (
        "import pytest\n\n\n"
        "def _kwargs():\n    return [{'slots': True}, {'frozen': True}]\n\n\n"
        "def _build(cls, slots):\n    return cls\n\n\n"
        "@pytest.mark.parametrize('kw', _kwargs())\n"
        "def test_kw(kw):\n    assert _build(object, kw)\n\n\n"
        "def test_other():\n    assert True\n"),
    # Requested by name: ``usefixtures`` on one test, a parameter of another.
    "tests/test_marked.py": (
        "import pytest\n\n\n"
        "@pytest.mark.usefixtures('slots')\n"
        "def test_marked():\n    assert True\n\n\n"
        "def test_param(slots):\n    assert slots in (True, False)\n\n\n"
        "def test_unrelated():\n    assert True\n"),
    # ``getfixturevalue`` of a name from elsewhere: any string in the file may be one.
    "tests/test_dynamic.py": (
        "NAMES = ['slots']\n\n\n"
        "def test_dynamic(request):\n    for name in NAMES:\n        request.getfixturevalue(name)\n\n\n"
        "def test_plain():\n    assert True\n"),
}
FIXTURE_TESTS = ["tests/test_data.py", "tests/test_marked.py", "tests/test_dynamic.py"]


def test_a_fixture_named_as_data_or_taken_by_a_helper_selects_nothing(tmp_path: Path) -> None:
    """pytest reads a fixture's name from a string only in ``usefixtures``, ``getfixturevalue`` and ``indirect``
    parametrization, and hands fixtures only to tests and fixtures: ``{'slots': True}`` and ``_build(cls,
    slots)`` (a helper called at import time) request nothing. A ``getfixturevalue`` of a variable widens to every
    string spelling the name."""
    with indexed_repo(tmp_path / "repo", FIXTURES) as (root, index):
        result = _select(root, index, "tests/conftest.py", 6, FIXTURE_TESTS)
    assert _nodes(result) == {"tests/test_marked.py::test_marked", "tests/test_marked.py::test_param",
                              "tests/test_dynamic.py"}


def test_fixture_requests_reads_pytest_s_places_only() -> None:
    lines = ["@pytest.mark.usefixtures('a', 'b')", "def test_x(request):", "    request.getfixturevalue('c')",
             "@pytest.mark.parametrize('d, e', [(1, 2)], indirect=True)", "def test_y(d, e): pass",
             "OPTIONS = ['f']"]
    assert fixture_requests(lines) == {k: frozenset(v) for k, v in {"a": {1}, "b": {1}, "c": {3}, "d": {4},
                                                                    "e": {4}}.items()}
    assert fixture_requests(["def test_x(request):", "    request.getfixturevalue(NAME)"]) is None
    assert fixture_requests(["def pytest_collection_modifyitems(items):", "    item.add_marker(m)"]) is None
    assert fixture_requests(["def broken(:"]) is None


MARKS: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/errors.py": (
        "class Bad(Exception):\n"
        "    def __init__(self, why=''):\n"
        "        super().__init__(why)\n"),                                  # 3: __init__'s body
    "src/pkg/deco.py": "def register(*handlers):\n    def wrap(f):\n        return f\n    return wrap\n",
    # The class is an argument of pytest's mark: only the test it decorates uses it.
    "tests/test_marks.py": (
        "import pytest\n\nfrom pkg.errors import Bad\n\n\n"
        "@pytest.mark.parametrize('exc', [Bad])\n"
        "def test_raises(exc):\n    with pytest.raises(exc):\n        raise exc()\n\n\n"
        "def test_other():\n    assert True\n"),
    # Any other decorator may call what it is handed while the file is imported: the whole file.
    "tests/test_custom.py": (
        "from pkg.deco import register\nfrom pkg.errors import Bad\n\n\n"
        "@register(Bad)\n"
        "def test_custom():\n    assert True\n\n\n"
        "def test_other():\n    assert True\n"),
}


def test_a_pytest_mark_s_argument_is_not_called_while_another_decorator_s_is(tmp_path: Path) -> None:
    with indexed_repo(tmp_path / "repo", MARKS) as (root, index):
        result = _select(root, index, "src/pkg/errors.py", 3, ["tests/test_marks.py", "tests/test_custom.py"])
    assert _nodes(result) == {"tests/test_marks.py::test_raises", "tests/test_custom.py"}


def test_calls_at_on_decorator_lines() -> None:
    line = "@pytest.mark.parametrize('exc', [Bad, make()])"
    assert not calls_at(line, line.index("Bad"))
    assert calls_at(line, line.index("make"))
    assert calls_at(line, line.index("parametrize"))
    assert calls_at("@register(Bad)", len("@register("))
    assert not calls_at("@value.setter", 1)


ACCESS: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/client.py": (
        "class Client:\n"
        "    def request(self, url):\n"
        "        return url\n"                                                  # 3: request's body
        "\n"
        "    @property\n"
        "    def ready(self):\n"
        "        return True\n"                                               # 7: the property's getter
        "\n"
        "    @reify\n"
        "    def cached(self):\n"
        "        return 1\n"                                                  # 11: a descriptor's method
        "\n\n"
        "def reify(f):\n"
        "    return f\n"),
    "src/pkg/errors.py": (
        "class Failure(Exception):\n"
        "    def __init__(self, response=None):\n"
        "        self.response = response\n"
        "        if hasattr(response, 'request'):\n"
        "            self.request = self.response.request\n"),
    "src/pkg/probe.py": (
        "def probe(obj):\n    return hasattr(obj, 'ready')\n\n\n"
        "def cached(obj):\n    return hasattr(obj, 'cached')\n\n\n"
        "def later(obj):\n    call = obj.request\n    return call\n"),
    "tests/test_errors.py": "from pkg.errors import Failure\n\n\ndef test_failure():\n    assert Failure()\n",
    "tests/test_probe.py": (
        "from pkg import probe\n\n\n"
        "def test_probe():\n    assert probe.probe(1) is False\n\n\n"
        "def test_later():\n    assert probe.later\n\n\n"
        "def test_cached():\n    assert probe.cached(1) is False\n"),
}
ACCESS_TESTS = ["tests/test_errors.py", "tests/test_probe.py"]


def test_hasattr_and_a_read_stored_under_its_own_name_run_no_method(tmp_path: Path) -> None:
    """``hasattr(x, 'request')`` and ``self.request = self.response.request`` run no ``request``: whoever calls
    the stored method does so by its name, a use of its own. A read kept under another name (``call =
    obj.request``) may be called by that name: it counts; so does ``hasattr`` of a property, which runs its
    getter."""
    with indexed_repo(tmp_path / "repo", ACCESS) as (root, index):
        method = _select(root, index, "src/pkg/client.py", 3, ACCESS_TESTS)
        prop = _select(root, index, "src/pkg/client.py", 7, ACCESS_TESTS)
        decorated = _select(root, index, "src/pkg/client.py", 11, ACCESS_TESTS)
    assert _nodes(method) == {"tests/test_probe.py::test_later"}
    assert "tests/test_probe.py::test_probe" in _nodes(prop)
    assert "tests/test_probe.py::test_cached" in _nodes(decorated)


def test_restored_at_reads_a_same_name_store_only() -> None:
    line = "        self.request = self.response.request"
    assert restored_at(line, line.rindex("request"))
    assert not restored_at("        self.call = self.response.request", len("        self.call = self.response."))
    assert not restored_at("        self.request = self.response.request()", line.rindex("request"))


LOCAL: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src tests/apps\n",
    "src/pkg/__init__.py": "",
    "src/pkg/core.py": "def make():\n    return 1\n",
    "tests/apps/helloapp/__init__.py": "from pkg.core import make\n\nmake()\nAPP = 1\n",  # 3: import-time code
    # Imported inside one test only: only that test runs the import.
    "tests/test_local.py": (
        "import pytest\n\n\n"
        "def test_hello():\n    from helloapp import APP\n    assert APP == 1\n\n\n"
        "def test_other():\n    assert True\n"),
    # The same, but a string names the module: code it calls may import it by name.
    "tests/test_spelled.py": (
        "import importlib\n\n\n"
        "def test_hello():\n    from helloapp import APP\n    assert APP\n\n\n"
        "def test_by_name():\n    assert importlib.import_module('helloapp').APP\n"),
    # At module level: every test of the file imports it.
    "tests/test_module.py": "from helloapp import APP\n\n\ndef test_app():\n    assert APP\n\n\n"
                            "def test_other():\n    assert True\n",
    # Inside a helper, not a test: the whole file.
    "tests/test_helper.py": (
        "def _app():\n    from helloapp import APP\n    return APP\n\n\n"
        "def test_app():\n    assert _app()\n\n\n"
        "def test_other():\n    assert True\n"),
}
LOCAL_TESTS = ["tests/test_local.py", "tests/test_spelled.py", "tests/test_module.py", "tests/test_helper.py"]


def test_an_import_inside_a_test_selects_that_test_only(tmp_path: Path) -> None:
    """A module-level change of ``helloapp`` selects, of a test file importing it only inside a test function,
    that test; a file naming the module in a string, importing it at module level or in a helper: whole."""
    with indexed_repo(tmp_path / "repo", LOCAL) as (root, index):
        sharp = _select(root, index, "tests/apps/helloapp/__init__.py", 3, LOCAL_TESTS)
        blunt = _select(root, index, "tests/apps/helloapp/__init__.py", None, LOCAL_TESTS)
    expected = {"tests/test_local.py::test_hello", "tests/test_spelled.py", "tests/test_module.py",
                "tests/test_helper.py"}
    assert _nodes(sharp) == expected
    assert _nodes(blunt) == expected


CLASSES: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/calc.py": "def double(x):\n    return x * 2\n",                    # 2: double's body
    "tests/test_classes.py": (
        "import pytest\n\nfrom pkg.calc import double\n\n\n"
        "class TestHelper:\n"
        "    def _twice(self, x):\n        return double(x)\n\n"
        "    def test_uses(self):\n        assert self._twice(1) == 2\n\n"
        "    def test_other(self):\n        assert True\n\n\n"
        "class TestSetup:\n"
        "    def setup_method(self):\n        self.value = double(1)\n\n"
        "    def test_one(self):\n        assert self.value == 2\n\n"
        "    def test_two(self):\n        assert True\n\n\n"
        "class TestFixture:\n"
        "    @pytest.fixture\n"
        "    def value(self):\n        return double(1)\n\n"
        "    def test_fixture(self, value):\n        assert value == 2\n\n"
        "    def test_plain(self):\n        assert True\n"),
}


def test_a_plain_helper_of_a_test_class_selects_its_callers_not_the_class(tmp_path: Path) -> None:
    """A plain helper method runs where a test calls it; ``setup_method`` or a decorated method (a fixture) may
    run for every test of its class: the whole class."""
    with indexed_repo(tmp_path / "repo", CLASSES) as (root, index):
        result = _select(root, index, "src/pkg/calc.py", 2, ["tests/test_classes.py"])
    assert _nodes(result) == {"tests/test_classes.py::TestHelper::test_uses", "tests/test_classes.py::TestSetup",
                              "tests/test_classes.py::TestFixture",
                              "tests/test_classes.py::TestFixture::test_fixture"}
