"""Python's and pytest's rules that keep symbol-level impact selection sharp (issue 22): what ``import pkg.mod``
binds, a builtin base class, an annotation on a signature's continuation line, who receives a fixture. Each case also
shows the use that must still select."""

from __future__ import annotations

from pathlib import Path

from codeplane.testing import ImpactIndex
from codeplane.testing.impact_text import signature_annotations
from tests.builders import indexed_repo


def _cases(root: Path, index: object, path: str, line: int, tests: list[str]) -> set[str]:
    result = ImpactIndex(index.read_connection).affected(  # type: ignore[attr-defined]
        [path], tests, ranges={path: [(line, line)]}, read_lines=lambda rel: (root / rel).read_text().splitlines())
    return {n for m in result.matches for n in m.node_ids}


PACKAGE: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    # Defined twice: ``pkg.command`` resolves to no one definition (the index leaves its target empty).
    "src/pkg/__init__.py": (
        "import typing\n\n\ndef command(x=1):\n    return 0\n\n\ndef command(x=1):\n    return 1\n"),
    "src/pkg/impl.py": "def pager():\n    return 2\n",                                 # 2: pager's body
    "tests/test_impl.py": (
        "import pkg.impl\n\n\n"
        "def test_pager():\n    assert pkg.impl.pager() == 2\n\n\n"
        "def test_command():\n    assert pkg.command() == 1\n"),
}


def test_a_name_of_the_package_an_import_of_a_submodule_binds_is_not_the_submodule_s(tmp_path: Path) -> None:
    """``import pkg.impl`` binds ``pkg``: ``pkg.command`` (unresolved: defined twice) is the package's name, not one
    that ``impl`` lost (removed or dynamic), which would be reached as such."""
    with indexed_repo(tmp_path / "repo", PACKAGE) as (root, index):
        assert _cases(root, index, "src/pkg/impl.py", 2, ["tests/test_impl.py"]) == {"tests/test_impl.py::test_pager"}
    # The package itself changed: ``pkg.command`` is its name.
    with indexed_repo(tmp_path / "again", PACKAGE) as (root, index):
        assert "tests/test_impl.py::test_command" in _cases(root, index, "src/pkg/__init__.py", 9,
                                                            ["tests/test_impl.py"])


_CORE = (
    "class Command:\n"                                   # 1
    "    def __call__(self):\n"
    "        return self.main()\n"
    "\n"
    "    def main(self):\n"                              # 5
    "        return 1\n"                                 # 6: main's body
    "\n\n"
    "class Group(Command):\n"                            # 9
    "    def __init__(\n"
    "        self,\n"
    "        commands: dict[str, Command]\n"
    "        | list[Command]\n"                          # 13: an annotation's continuation
    "        | None = None,\n"
    "    ) -> None:\n"
    "        self.commands = commands\n"
    "\n\n"
    "class Hinted:\n"                                    # 19
    "    def __init__(\n"
    "        self,\n"
    "        factory: type[Command]\n"
    "        | None = Command,\n"                        # 23: a default value: the function may call it
    "    ):\n"
    "        self.made = factory()\n"
    "\n\n"
    "class Error(Exception):\n"                          # 28
    "    def show(self):\n"
    "        return self.render()\n"
    "\n\n"
    "class Page:\n"                                      # 33
    "    def render(self):\n"
    "        return 'page'\n"                            # 35: Page.render's body
)
CORE: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/core.py": _CORE,
    "tests/test_group.py": (
        "from pkg.core import Group\n\nGROUP = Group()\n\n\n"
        "def test_group():\n    assert GROUP.commands is None\n\n\n"
        "def test_other():\n    assert Group([]).commands == []\n"),
    "tests/test_hinted.py": (
        "from pkg.core import Hinted\n\nHINTED = Hinted()\n\n\ndef test_made():\n    assert HINTED.made\n"),
    "tests/test_command.py": "from pkg.core import Command\n\n\ndef test_call():\n    assert Command()() == 1\n",
    "tests/test_error.py": "from pkg.core import Error\n\n\ndef test_show():\n    assert Error().show() is None\n",
    "tests/test_page.py": "from pkg.core import Page\n\n\ndef test_render():\n    assert Page().render()\n",
}
CORE_TESTS = sorted(p for p in CORE if p.startswith("tests/"))


def test_a_class_named_in_an_annotation_on_a_continuation_line_runs_nothing(tmp_path: Path) -> None:
    """``Group.__init__`` names ``Command`` only in its parameters' annotation (over several lines):
    constructing a ``Group`` at import time runs nothing changed in ``Command.main``, so ``test_group.py`` is
    not selected whole. ``Hinted`` names it as a default value too, which its ``__init__`` calls: its test
    file is."""
    with indexed_repo(tmp_path / "repo", CORE) as (root, index):
        cases = _cases(root, index, "src/pkg/core.py", 6, CORE_TESTS)
    assert "tests/test_group.py" not in cases
    assert {"tests/test_command.py::test_call", "tests/test_hinted.py"} <= cases


def test_a_builtin_base_class_does_not_make_self_calls_reach_every_method_so_named(tmp_path: Path) -> None:
    """``self.render()`` in a class deriving from ``Exception`` is that class's ``render`` or a subclass's, never
    ``Page.render``: a builtin base holds no repository method."""
    with indexed_repo(tmp_path / "repo", CORE) as (root, index):
        cases = _cases(root, index, "src/pkg/core.py", 35, CORE_TESTS)
    assert cases == {"tests/test_page.py::test_render"}


def test_signature_annotations_are_read_from_the_whole_signature() -> None:
    lines = _CORE.splitlines()
    group = signature_annotations(lines, 10)
    assert (13, lines[12].index("Command")) in group
    assert (12, lines[11].index("Command")) in group
    hinted = signature_annotations(lines, 20)
    assert (22, lines[21].index("Command")) in hinted
    assert (23, lines[22].index("Command")) not in hinted  # a default value
    # ``K[int]`` runs ``K.__class_getitem__``; ``list[K]`` names ``K``.
    assert (2, 7) not in signature_annotations(["def f(", "    x: Box[int]", "    | None,", "):"], 1)
    assert (2, 16) in signature_annotations(["    def f(", "        x: list[Box]", "        | None,", "    ):"], 1)
    assert signature_annotations(["def f(x: K):  # a comment", "    return x"], 1) == frozenset()


FIXTURES: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = .\n",
    "tests/__init__.py": "",
    "tests/conftest.py": (
        "import pytest\n\n\n"
        "@pytest.fixture\ndef slots():\n    return True\n\n\n"            # 6: slots' body
        "@pytest.fixture\ndef wrapped(slots):\n    return slots\n"),
    # A helper, called at import time, whose parameter is spelled like the fixture: pytest hands it nothing.
    "tests/helpers.py": "def make(slots=False):\n    return slots\n\n\nMADE = make()\n",
    "tests/test_made.py": "from tests.helpers import MADE\n\n\ndef test_made():\n    assert MADE is False\n",
    "tests/test_slots.py": "def test_slots(slots):\n    assert slots\n",
    "tests/test_wrapped.py": "def test_wrapped(wrapped):\n    assert wrapped\n",
}


def test_a_fixture_reaches_tests_and_fixtures_taking_it_not_helpers_with_a_parameter_so_named(
        tmp_path: Path) -> None:
    with indexed_repo(tmp_path / "repo", FIXTURES) as (root, index):
        cases = _cases(root, index, "tests/conftest.py", 6,
                       ["tests/test_made.py", "tests/test_slots.py", "tests/test_wrapped.py"])
    assert cases == {"tests/test_slots.py::test_slots", "tests/test_wrapped.py::test_wrapped"}


PLUGINS: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/hooks.py": "class Registry:\n    def register(self, item):\n        return item\n",   # 3: register's body
    "tests/test_hooks.py": (
        "import pytest\n\nfrom pkg.hooks import Registry\n\n\n"
        "@pytest.fixture(autouse=True)\ndef plugin(pytestconfig):\n    pytestconfig.pluginmanager.register(object())\n"
        "    yield\n\n\n"
        "def test_plain():\n    assert True\n\n\n"
        "def test_registry():\n    assert Registry().register(1) == 1\n\n\n"
        "def test_patched(monkeypatch, tmp):\n    monkeypatch.register(1)\n    tmp.register(1)\n"),
    # ``tmp`` is the repository's own fixture: what it hands over may be a Registry.
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef tmp():\n    return None\n",
}


def test_an_attribute_of_pytest_s_own_fixture_is_no_repository_method(tmp_path: Path) -> None:
    """``pytestconfig.pluginmanager.register`` in an autouse fixture is pluggy's ``register``: the fixture does not
    make every test of the file reach ``Registry.register``. A fixture the repository defines counts."""
    with indexed_repo(tmp_path / "repo", PLUGINS) as (root, index):
        cases = _cases(root, index, "src/pkg/hooks.py", 3, ["tests/test_hooks.py"])
    assert cases == {"tests/test_hooks.py::test_registry", "tests/test_hooks.py::test_patched"}
    plugins = {**PLUGINS, "tests/conftest.py": (
        "import pytest\n\n\n@pytest.fixture(name='pytestconfig')\ndef config():\n    return None\n")}
    with indexed_repo(tmp_path / "again", plugins) as (root, index):
        assert _cases(root, index, "src/pkg/hooks.py", 3, ["tests/test_hooks.py"]) == {"tests/test_hooks.py"}


GETATTR_PACKAGE: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": (
        "from .impl import pager as pager\n\n\n"
        "def __getattr__(name):\n"                       # 4
        "    if name == 'old_pager':\n"
        "        return pager\n"                         # 6: the module __getattr__'s body
        "    raise AttributeError(name)\n"),
    "src/pkg/impl.py": "def pager():\n    return 2\n",
    "tests/test_pkg.py": (
        "import pkg\n\n\n"
        "def test_submodule():\n    assert pkg.impl.pager() == 2\n\n\n"
        "def test_served():\n    assert pkg.old_pager() == 2\n"),
}


def test_a_submodule_the_package_imports_is_bound_there_not_served_by_its_getattr(tmp_path: Path) -> None:
    """``from .impl import pager`` in ``pkg/__init__.py`` binds ``impl`` in the package (the import system sets it):
    ``pkg.impl`` never reaches the package's module ``__getattr__``, whose change selects the use of the name it
    serves (``old_pager``) only."""
    with indexed_repo(tmp_path / "repo", GETATTR_PACKAGE) as (root, index):
        assert _cases(root, index, "src/pkg/__init__.py", 6, ["tests/test_pkg.py"]) == {
            "tests/test_pkg.py::test_served"}


_TYPES = (
    "class ParamType:\n"                                 # 1
    "    def __call__(self, value):\n"
    "        return self.convert(value)\n"
    "\n"
    "    def convert(self, value):\n"                    # 5
    "        return value\n"                             # 6: the changed line
    "\n\n"
    "class BoolType(ParamType):\n"
    "    pass\n"
    "\n\n"
    "BOOL = BoolType()\n"
    "\n\n"
    "def convert_type(ty):\n"
    "    if ty is bool:\n"
    "        return BOOL\n"                              # hands the instance back, calls none of it
    "    return ParamType()\n"
    "\n\n"
    "class Tuple(ParamType):\n"
    "    def __init__(self, types):\n"
    "        self.types = [convert_type(t) for t in types]\n"   # stored, read nowhere else in __init__
    "\n\n"
    "class Pair(ParamType):\n"
    "    def __init__(self, types):\n"
    "        self.types = [convert_type(t) for t in types]\n"
    "        self.first = self.types[0](1)\n"            # calls what it stored: construction runs the change
    "\n\n"
    "class Later(ParamType):\n"
    "    def __init__(self, types):\n"
    "        self.types = [convert_type(t) for t in types]\n"
    "        self.setup()\n"                            # a method that reads and calls what was stored
    "\n"
    "    def setup(self):\n"
    "        self.first = self.types[0](1)\n"
)
TYPES: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/types.py": _TYPES,
    "tests/test_tuple.py": (
        "import pytest\n\nfrom pkg.types import Tuple\n\n\n"
        "@pytest.mark.parametrize('t', [Tuple([bool])])\ndef test_tuple(t):\n    assert t.types\n\n\n"
        "def test_other():\n    assert True\n"),
    "tests/test_pair.py": (
        "import pytest\n\nfrom pkg.types import Pair\n\n\n"
        "@pytest.mark.parametrize('p', [Pair([bool])])\ndef test_pair(p):\n    assert p.first\n\n\n"
        "def test_other():\n    assert True\n"),
    "tests/test_later.py": (
        "import pytest\n\nfrom pkg.types import Later\n\n\n"
        "@pytest.mark.parametrize('p', [Later([bool])])\ndef test_later(p):\n    assert p.first\n\n\n"
        "def test_other():\n    assert True\n"),
}


def test_making_an_instance_that_is_stored_or_returned_untouched_runs_nothing_changed(tmp_path: Path) -> None:
    """``Tuple([bool])`` at import time (a ``parametrize`` argument) makes instances of classes whose ``__call__``
    changed: ``convert_type`` hands ``BOOL`` back (``return BOOL``), ``Tuple.__init__`` stores what it returns and
    reads it nowhere else, so the import runs nothing changed and only the test given the instance is selected.
    ``Pair.__init__`` calls what it stored, ``Later.__init__`` a method that does: importing ``test_pair.py`` or
    ``test_later.py`` runs the change, the whole file is selected."""
    with indexed_repo(tmp_path / "repo", TYPES) as (root, index):
        cases = _cases(root, index, "src/pkg/types.py", 6,
                       ["tests/test_later.py", "tests/test_pair.py", "tests/test_tuple.py"])
    assert cases == {"tests/test_tuple.py::test_tuple", "tests/test_pair.py", "tests/test_later.py"}


DESCRIPTOR: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/fields.py": (
        "class Field:\n"
        "    def __get__(self, obj, owner):\n"
        "        return 1\n"                                   # 3: the changed line
        "\n\n"
        "class Model:\n"
        "    field = Field()\n"
        "\n"
        "    def value(self):\n"
        "        return self.field\n"),                        # reading it runs Field.__get__
    "tests/test_model.py": (
        "from pkg.fields import Model\n\nVALUE = Model().value()\n\n\n"
        "def test_value():\n    assert VALUE == 1\n\n\n"
        "def test_other():\n    assert True\n"),
}


def test_returning_a_class_attribute_may_run_its_descriptor(tmp_path: Path) -> None:
    """``return self.field`` hands back what ``Field.__get__`` returns: it runs the descriptor, so calling
    ``Model().value()`` at import time runs the change and the whole test file is selected."""
    with indexed_repo(tmp_path / "repo", DESCRIPTOR) as (root, index):
        assert _cases(root, index, "src/pkg/fields.py", 3, ["tests/test_model.py"]) == {"tests/test_model.py"}


RENAMED: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    # ``discount`` was just renamed ``rebate`` (line 5): ``from pkg.pricing import discount`` now fails.
    "src/pkg/pricing.py": "def price(x):\n    return x\n\n\ndef rebate(x):\n    return x - 1\n",
    "src/pkg/cart.py": "from pkg.pricing import discount\n\n\ndef total(x):\n    return discount(x)\n",
    "tests/test_pricing.py": (
        "from pkg.pricing import discount, price\n\n\n"
        "def test_price():\n    assert price(1) == 1\n\n\ndef test_discount():\n    assert discount(3) == 2\n"),
    "tests/test_cart.py": "from pkg.cart import total\n\n\ndef test_total():\n    assert total(3) == 2\n",
    "tests/test_other.py": "import pkg\n\n\ndef test_nothing():\n    assert pkg\n",
}


def test_a_name_imported_from_the_changed_module_that_it_no_longer_binds_breaks_the_importer(tmp_path: Path) -> None:
    """A renamed definition leaves ``from m import old`` behind: those modules fail to import, so every test
    importing one, directly or through another module, fails whole (``import pkg`` alone reaches ``pkg.cart``
    only as its parent package: selected too, with low confidence, as module-level selection does)."""
    tests = ["tests/test_cart.py", "tests/test_other.py", "tests/test_pricing.py"]
    with indexed_repo(tmp_path / "repo", RENAMED) as (root, index):
        assert {"tests/test_cart.py", "tests/test_pricing.py"} <= _cases(root, index, "src/pkg/pricing.py", 5, tests)


DYNAMIC: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/job.py": (
        "class Job:\n    def run_now(self):\n        return 1\n\n    def other(self):\n        return 2\n"),
    "tests/test_dyn.py": (
        "from pkg.job import Job\n\n\n"
        "def test_by_name():\n    assert getattr(Job(), 'run_now')() == 1\n\n\n"
        "def test_lookalike():\n    assert getattr(Job(), 'runxnow', None) is None\n"),
}


def test_a_dynamic_access_spelling_the_changed_name_reaches_it_and_a_lookalike_does_not(tmp_path: Path) -> None:
    """``getattr(x, 'run_now')`` runs ``run_now`` where no reference shows it; ``'runxnow'`` differs by the one
    character SQL's ``LIKE`` took ``_`` to match."""
    with indexed_repo(tmp_path / "repo", DYNAMIC) as (root, index):
        assert _cases(root, index, "src/pkg/job.py", 3, ["tests/test_dyn.py"]) == {"tests/test_dyn.py::test_by_name"}


WRAPPED: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/wrappers.py": (
        "def helper():\n    return 1\n\n\n"                 # 2: helper's body
        "class Request:\n"
        "    @classmethod\n"
        "    def application(cls, f):\n"
        "        def application(*args):\n"                    # 8: a local function named as its method
        "            return f(*args) + helper()\n"
        "        return application\n"),
    "src/pkg/app.py": "from pkg.wrappers import Request\n\n\n@Request.application\ndef app(*args):\n    return 1\n",
    "tests/test_app.py": "from pkg.app import app\n\n\ndef test_app():\n    assert app() == 2\n\n\n"
                         "def test_other():\n    assert True\n",
}


def test_a_member_access_never_names_a_function_s_local_function(tmp_path: Path) -> None:
    """werkzeug's ``Request.application`` makes a closure named ``application``: ``@Request.application`` is the
    classmethod, never the local (a call of the local at import time would select the decorated module whole);
    the classmethod hands the closure back, and whoever calls the decorated function runs it."""
    with indexed_repo(tmp_path / "repo", WRAPPED) as (root, index):
        assert _cases(root, index, "src/pkg/wrappers.py", 2, ["tests/test_app.py"]) == {"tests/test_app.py::test_app"}


IMPORTED_OBJECT: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/codes.py": "CODES = {1: 'one'}\n\n\ndef helper():\n    return 2\n",     # 5: helper's body
    "src/pkg/exc.py": ("class Error(Exception):\n    @property\n    def name(self):\n"
                       "        from pkg.codes import CODES\n\n        return CODES.get(1)\n"),
    "src/pkg/app.py": "from pkg.exc import Error\n\nNAME = Error().name\n",
    "tests/test_app.py": "import pkg.app\n\n\ndef test_app():\n    assert pkg.app.NAME\n",
    "tests/test_codes.py": "from pkg.codes import helper\n\n\ndef test_helper():\n    assert helper() == 2\n",
}


def test_a_member_of_a_name_imported_from_the_changed_module_is_that_object_s_not_a_lost_name(
        tmp_path: Path) -> None:
    """werkzeug's ``HTTP_STATUS_CODES.get`` after ``from .http import HTTP_STATUS_CODES``: ``get`` is the dict's,
    not a name ``http`` lost (which would reach ``HTTPException.name`` and every module reading it at import)."""
    with indexed_repo(tmp_path / "repo", IMPORTED_OBJECT) as (root, index):
        assert _cases(root, index, "src/pkg/codes.py", 5, ["tests/test_app.py", "tests/test_codes.py"]) == {
            "tests/test_codes.py::test_helper"}


CLASS_RECEIVER: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/wrappers.py": ("class Request:\n    @classmethod\n    def application(cls, f):\n        return f\n"),
    # A script in a directory of examples: a top-level module ``upload`` nobody imports by name.
    "examples/upload.py": "def application(environ, start_response):\n    return [b'ok']\n",  # 2: its body
    "src/pkg/run.py": ("from importlib import import_module\n\nfrom pkg.wrappers import Request\n\n"
                       "mod = import_module('pkg.wrappers')\n\n\n@Request.application\ndef app():\n    return 1\n"),
    "tests/test_run.py": "import pkg.run\n\n\ndef test_app():\n    assert pkg.run.app() == 1\n",
    "tests/test_upload.py": ("import sys\n\nsys.path.insert(0, 'examples')\nimport upload  # noqa: E402\n\n\n"
                             "def test_upload():\n    assert upload.application({}, None) == [b'ok']\n"),
}


def test_a_member_of_a_name_bound_to_a_class_is_no_module_level_definition_of_another_module(tmp_path: Path) -> None:
    """werkzeug's ``tests/live_apps/run.py`` imports ``import_module`` (any module object may be there) and writes
    ``@Request.application``: ``Request`` is a class, so that is no use of ``examples/upload.py``'s ``application``
    (at import time it would select every test importing ``run`` whole)."""
    with indexed_repo(tmp_path / "repo", CLASS_RECEIVER) as (root, index):
        assert _cases(root, index, "examples/upload.py", 2, ["tests/test_run.py", "tests/test_upload.py"]) == {
            "tests/test_upload.py::test_upload"}


BUILTIN_CALL: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/request.py": "class Request:\n    @property\n    def values(self):\n        return [1]\n",  # 4
    "src/pkg/registry.py": ("def _find():\n    return [k for k in globals().values() if k]\n\n\nFOUND = _find()\n\n\n"
                            "def sorted(x):\n    return x\n\n\ndef listed(r):\n    return sorted(r).values\n"),
    "tests/test_registry.py": "import pkg.registry\n\n\ndef test_found():\n    assert pkg.registry.FOUND\n",
    "tests/test_listed.py": ("from pkg.registry import listed\nfrom pkg.request import Request\n\n\n"
                             "def test_listed():\n    assert listed(Request()) == [1]\n"),
}


def test_a_member_of_a_builtin_call_s_result_is_no_repository_definition(tmp_path: Path) -> None:
    """werkzeug's ``_find_exceptions`` runs at import time over ``globals().values()``: a dict's ``values``, not
    ``Request.values`` (which would select every importer of ``werkzeug.exceptions`` whole). A ``sorted`` the
    module defines itself is no builtin: its result may be anything."""
    with indexed_repo(tmp_path / "repo", BUILTIN_CALL) as (root, index):
        assert _cases(root, index, "src/pkg/request.py", 4, ["tests/test_listed.py", "tests/test_registry.py"]) == {
            "tests/test_listed.py::test_listed"}


SCRIPT: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/core.py": "def helper():\n    return 2\n",                                      # 2: helper's body
    "src/pkg/script.py": ("from pkg.core import helper\n\n\ndef run():\n    return 1\n\n\n"
                          "if __name__ == '__main__':\n    app = helper()\n    print(app)\n\nDONE = run()\n"),
    "tests/test_script.py": "from pkg.script import DONE, run\n\n\ndef test_run():\n    assert run() == DONE\n",
    "tests/test_core.py": "from pkg.core import helper\n\n\ndef test_helper():\n    assert helper() == 2\n",
}


def test_code_under_the_main_guard_never_runs_when_a_test_imports_the_module(tmp_path: Path) -> None:
    """werkzeug's examples end with ``if __name__ == "__main__": run_simple(..., application)``: that runs as a
    script only, not at import time (which would select every test importing the module whole). Module-level
    code after the block runs as ever."""
    with indexed_repo(tmp_path / "repo", SCRIPT) as (root, index):
        assert _cases(root, index, "src/pkg/core.py", 2, ["tests/test_core.py", "tests/test_script.py"]) == {
            "tests/test_core.py::test_helper"}
        assert _cases(root, index, "src/pkg/script.py", 5, ["tests/test_core.py", "tests/test_script.py"]) == {
            "tests/test_script.py"}  # run() at import time, after the block: the module's import changed


CONTAINER_ATTRIBUTE: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/request.py": "class Request:\n    @property\n    def values(self):\n        return [1]\n",  # 4
    # A class with an attribute hook and the standard library's base: no subclass of ``Map``, whose ``self.x``
    # it cannot intercept.
    "src/pkg/handler.py": ("from http.server import BaseHTTPRequestHandler\n\n\n"
                           "class Handler(BaseHTTPRequestHandler):\n    def __getattr__(self, name):\n"
                           "        return name\n"),
    "src/pkg/rules.py": ("class Map:\n    def __init__(self):\n        self._rules: dict[str, int] = {}\n"
                         "        self._other = [r for r in ()]\n        self.mapping = dict(a=1)\n"
                         "        self.update()\n\n"
                         "    def update(self):\n        self.mapping.update(b=2)\n"
                         "        return list(self._rules.values()) + self._other.values()\n\n\n"
                         "class Matcher:\n    def update(self, request):\n        return request.values\n\n\n"
                         "MAP = Map()\n"),
    "tests/test_rules.py": "from pkg.rules import MAP\n\n\ndef test_map():\n    assert MAP\n",
    "tests/test_request.py": ("from pkg.request import Request\n\n\n"
                              "def test_values():\n    assert Request().values == [1]\n"),
}


def test_a_member_of_an_attribute_holding_a_builtin_container_is_no_repository_definition(tmp_path: Path) -> None:
    """werkzeug's ``Map.update`` walks ``self._rules_by_endpoint.values()`` (stored only as ``{}``): a dict's
    ``values``, not ``Request.values`` (which would reach ``Map.update`` and every module making a ``Map`` at
    import time); ``Aborter``'s ``self.mapping = dict(...)`` then ``self.mapping.update(...)`` is a dict's
    ``update``, not a matcher's."""
    with indexed_repo(tmp_path / "repo", CONTAINER_ATTRIBUTE) as (root, index):
        assert _cases(root, index, "src/pkg/request.py", 4, ["tests/test_request.py", "tests/test_rules.py"]) == {
            "tests/test_request.py::test_values"}


MODULE_DICT: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/client.py": "class Client:\n    def get(self, url):\n        return url\n",  # 3: get's body
    "src/pkg/exc.py": "registry = {}\n\n\ndef lookup(code):\n    return registry.get(code)\n",
    # ``items`` is rebound from outside (to a Client): ``items.get`` may be Client.get.
    "src/pkg/other.py": "items = {}\n\n\ndef find(key):\n    return items.get(key)\n",
    "src/pkg/setup.py": ("import pkg.other\nfrom pkg.client import Client\n\n\n"
                         "def install():\n    pkg.other.items = Client()\n"),
    "tests/test_client.py": "from pkg.client import Client\n\n\ndef test_get():\n    assert Client().get('x') == 'x'\n",
    "tests/test_exc.py": "from pkg.exc import lookup\n\n\ndef test_lookup():\n    assert lookup(1) is None\n",
    "tests/test_other.py": "from pkg.other import find\n\n\ndef test_find():\n    assert find(1) is None\n",
}


def test_a_module_dict_nothing_rebinds_is_a_dict_inside_functions_too(tmp_path: Path) -> None:
    """werkzeug's ``_find_exceptions`` calls ``default_exceptions.get(...)`` on a module-level ``{}`` that no code
    stores from outside: a dict's ``get``, not ``Client.get``. One another module rebinds may be anything."""
    tests = ["tests/test_client.py", "tests/test_exc.py", "tests/test_other.py"]
    with indexed_repo(tmp_path / "repo", MODULE_DICT) as (root, index):
        assert _cases(root, index, "src/pkg/client.py", 3, tests) == {
            "tests/test_client.py::test_get", "tests/test_other.py::test_find"}


COMPUTED: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/spec.py": (
        "class Base:\n"                                            # 1
        "    def check(self, op):\n"
        "        found = getattr(\n"
        "            self, f\"_cmp_{op}\"\n"
        "        )\n"                                              # 5
        "        return found()\n\n\n"
        "class Spec(Base):\n"
        "    def _cmp_eq(self):\n"
        "        return True\n"                                    # 10: _cmp_eq's body
        "\n"
        "    def helper(self):\n"
        "        return 1\n"                                       # 13: helper's body (no _cmp_ prefix)
        "\n\n"
        "class Other:\n"
        "    def _cmp_eq(self):\n"
        "        return False\n"),                                 # 18: another class's _cmp_eq
    "tests/test_spec.py": "from pkg.spec import Spec\n\n\ndef test_check():\n    assert Spec().check('eq')\n",
}


def test_getattr_of_self_by_a_computed_name_reaches_the_members_it_may_spell(tmp_path: Path) -> None:
    """packaging's ``Specifier._get_operator`` is ``getattr(self, f"_compare_{...}")``: a change to
    ``_compare_compatible`` selected no test, and 18 failed. ``self`` in a method of ``Base`` may be a ``Spec``;
    the name starts ``_cmp_``: ``Spec._cmp_eq`` may be it, ``Spec.helper`` and the unrelated ``Other._cmp_eq``
    are not."""
    tests = ["tests/test_spec.py"]
    with indexed_repo(tmp_path / "repo", COMPUTED) as (root, index):
        assert _cases(root, index, "src/pkg/spec.py", 10, tests) == {"tests/test_spec.py::test_check"}
        # No computed name reaches these (no ``_cmp_`` prefix; another class): referenced by nothing resolved,
        # they fall back to the tests importing their module (QA31 F1), not to a case through ``check``.
        assert _cases(root, index, "src/pkg/spec.py", 13, tests) == {"tests/test_spec.py"}
        assert _cases(root, index, "src/pkg/spec.py", 18, tests) == {"tests/test_spec.py"}


REGISTERED: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/app.py": ("import functools\n\n\nclass Registry:\n    def __init__(self):\n        self.fns = []\n\n"
                       "    def register(self, f):\n        self.fns.append(f)\n        return f\n\n"
                       "    def run(self):\n        return [f() for f in self.fns]\n\n\nREG = Registry()\n\n\n"
                       "@REG.register\ndef _():\n    return 1\n\n\n"                          # 21: the body of _
                       "@functools.singledispatch\ndef conv(x):\n    return x\n\n\n"
                       "@conv.register\ndef _(x: int):\n    return x + 1\n\n\n"                 # 30: the body
                       "@functools.lru_cache\ndef cached():\n    return 2\n\n\n"              # 35: the body
                       "HOOKS = {}\n\n\ndef hook(f):\n    HOOKS[f.__name__] = f\n    return f\n\n\n"
                       "@hook\ndef on_start():\n    return 3\n\n\n"                             # 48: the body
                       "CONFIG = {'on': True}\n\n\ndef traced(f):\n    if CONFIG['on']:\n        pass\n"
                       "    return f\n\n\n@traced\ndef quiet():\n    return 4\n"),                # 63: the body
    "tests/test_app.py": ("from pkg.app import REG, conv, cached\n\n\n"
                          "def test_run():\n    assert REG.run() == [1]\n\n\n"
                          "def test_conv():\n    assert conv(1) == 2\n\n\n"
                          "def test_cached():\n    assert cached() == 2\n"),
    "tests/test_hooks.py": ("from pkg.app import CONFIG, HOOKS, quiet\n\n\n"
                            "def test_hooks():\n    assert HOOKS['on_start']() == 3\n\n\n"
                            "def test_config():\n    assert CONFIG['on']\n\n\n"
                            "def test_quiet():\n    assert quiet() == 4\n"),
}


def test_a_function_a_repository_object_registers_is_reached_through_that_object(tmp_path: Path) -> None:
    """packaging's ``@canonicalize_version.register def _(...)`` (singledispatch) is never named again: a change
    to it selected nothing while 2,802 tests failed. ``@REG.register`` / ``@conv.register`` hand the function to
    an object of the repository, which runs it; a decorator of another distribution (``functools.lru_cache``)
    keeps nothing of the repository's, and the function is followed through its own name."""
    tests = ["tests/test_app.py", "tests/test_hooks.py"]
    with indexed_repo(tmp_path / "repo", REGISTERED) as (root, index):
        assert _cases(root, index, "src/pkg/app.py", 21, tests) == {"tests/test_app.py::test_run"}
        assert _cases(root, index, "src/pkg/app.py", 30, tests) == {"tests/test_app.py::test_conv"}
        assert _cases(root, index, "src/pkg/app.py", 35, tests) == {"tests/test_app.py::test_cached"}
        # A plain decorator of the repository keeping it in a module dict: reached through that dict; one that only
        # reads a module variable keeps nothing there.
        assert _cases(root, index, "src/pkg/app.py", 48, tests) == {"tests/test_hooks.py::test_hooks"}
        assert _cases(root, index, "src/pkg/app.py", 63, tests) == {"tests/test_hooks.py::test_quiet"}


ALIASED: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    # click's ``_termui_impl``: ``getchar`` defined under ``if``/``else``, so an import of it resolves to no one
    # definition.
    "src/pkg/impl.py": (
        "import sys\n\n\n"
        "def pager():\n    return 2\n\n\n"                    # 5: pager's body
        "if sys.platform == 'win32':\n"
        "    def getchar():\n        return 'w'\n"            # 10: the Windows body
        "else:\n"
        "    def getchar():\n        return 'p'\n"),          # 13: the other body
    "src/pkg/termui.py": (
        "def getchar():\n    from pkg.impl import getchar as f\n\n    return f()\n\n\n"
        "def pager():\n    from pkg.impl import pager\n\n    return pager()\n"),
    "tests/test_termui.py": (
        "from pkg import termui\n\n\n"
        "def test_getchar():\n    assert termui.getchar() in 'wp'\n\n\n"
        "def test_pager():\n    assert termui.pager() == 2\n"),
}


def test_an_aliased_import_of_a_name_defined_twice_is_a_use_of_that_name_not_of_the_whole_module(
        tmp_path: Path) -> None:
    """``from pkg.impl import getchar as f`` then ``f()``: ``f`` is a use of ``getchar`` (either definition), not a
    name ``impl`` lost, which every change to ``impl`` would reach."""
    tests = ["tests/test_termui.py"]
    with indexed_repo(tmp_path / "repo", ALIASED) as (root, index):
        assert _cases(root, index, "src/pkg/impl.py", 5, tests) == {"tests/test_termui.py::test_pager"}
        assert _cases(root, index, "src/pkg/impl.py", 10, tests) == {"tests/test_termui.py::test_getchar"}
        assert _cases(root, index, "src/pkg/impl.py", 13, tests) == {"tests/test_termui.py::test_getchar"}
