"""Symbol-level impact selection (issue 22): changed definitions → the test cases that reach them through the
structural index's references, each with its chain; what the graph cannot follow falls back to module level."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.testing import ImpactIndex, ImpactResult, TestingService, impact_modules, impact_symbols
from tests.builders import indexed_repo

SHOP: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src tests\n",
    "src/shop/__init__.py": "from .cart import Cart\nfrom .pricing import price\n",
    "src/shop/pricing.py": (
        "TAX = 0.2\n"                                      # 1
        "\n\n"
        "def price(name):\n"                               # 4
        "    return len(name)\n"                           # 5
        "\n\n"
        "def discount(x):\n"                               # 8
        "    return x - 1\n"                               # 9
        "\n\n"
        "def taxed(x):\n"                                  # 12
        "    return x * (1 + TAX)\n"                       # 13
        "\n\n"
        "class Money:\n"                                   # 16
        "    def __init__(self, value):\n"                 # 17
        "        self.value = value\n"                     # 18
        "\n"
        "    def __eq__(self, other):\n"                   # 20
        "        return self.value == other.value\n"       # 21
        "\n"
        "    def amount(self):\n"                          # 23
        "        return self.value\n"                      # 24
        "\n\n"
        "REGISTRY = []\n"                                  # 27
        "REGISTRY.append(discount(3))\n"),                 # 28
    "src/shop/cart.py": (
        "from shop.pricing import price\n\n\n"
        "class Cart:\n    def __init__(self):\n        self.items = []\n\n"
        "    def add(self, name):\n        self.items.append(name)\n\n"
        "    def total(self):\n        return sum(price(i) for i in self.items)\n"),
    "tests/helpers.py": ("from shop.pricing import taxed\n\n\ndef doubled_tax(x):\n    return 2 * taxed(x)\n\n\n"
                         "def unused():\n    return 0\n"),  # line 9: no test calls it
    "tests/conftest.py": (
        "import pytest\nfrom shop.pricing import Money\n\n\n@pytest.fixture\ndef money():\n"
        "    return Money(3)\n"),
    "tests/test_cart.py": (
        "from shop import Cart\n\n\ndef test_total():\n    c = Cart()\n    c.add('ab')\n    assert c.total() == 2\n"
        "\n\ndef test_empty():\n    assert Cart().items == []\n"),
    "tests/test_pricing.py": (
        "from shop.pricing import discount, price\nfrom helpers import doubled_tax\n\n\n"
        "def test_price():\n    assert price('abc') == 3\n\n\n"
        "def test_discount():\n    assert discount(3) == 2\n\n\n"
        "def test_tax():\n    assert doubled_tax(10) == 24\n"),
    "tests/test_money.py": (
        "def test_eq(money):\n    assert money == money\n\n\n"
        "def test_amount(money):\n    assert money.amount() == 3\n\n\n"
        "def test_plain():\n    assert True\n"),
    "tests/test_base.py": (
        "from shop.pricing import price\n\n\n"
        "class TestBase:\n    def test_price(self):\n        assert price('a') == 1\n\n"
        "    def test_other(self):\n        assert True\n"),
    "tests/test_child.py": "from test_base import TestBase\n\n\nclass TestChild(TestBase):\n    pass\n",
    # Another language spelling a Python function's name is no use of it (no module-level fallback here).
    "web/app.js": "window.price('a');\nprice('b');\n",
}
TESTS = sorted(p for p in SHOP if p.rsplit("/", 1)[-1].startswith("test_"))


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService]]:
    with indexed_repo(tmp_path_factory.mktemp("symbols") / "repo", SHOP) as indexed:
        yield indexed


def _affected(repo: Path, index: IndexService, path: str, *lines: int) -> ImpactResult:
    def read(rel: str) -> list[str]:
        return (repo / rel).read_text().splitlines()

    return ImpactIndex(index.read_connection).affected(
        [path], TESTS, ranges={path: [(n, n) for n in lines]}, read_lines=read)


def _selected(result: ImpactResult) -> set[str]:
    return {node for m in result.matches for node in m.node_ids}


def test_a_changed_function_selects_the_cases_that_reach_it(shop: tuple[Path, IndexService]) -> None:
    repo, index = shop
    result = _affected(repo, index, "src/shop/pricing.py", 5)
    assert result.changed_symbols == ("shop.pricing.price",)
    assert _selected(result) == {
        "tests/test_cart.py::test_total",  # test → Cart.total → price
        "tests/test_pricing.py::test_price",
        "tests/test_base.py::TestBase::test_price",
        "tests/test_child.py::TestChild",  # inherits the selected test
        "tests/test_child.py::TestBase::test_price",  # pytest collects an imported test class again
    }
    assert result.confidence == "complete" and result.fallbacks == ()
    cart = next(m for m in result.matches if m.test_file == "tests/test_cart.py")
    assert cart.cases[0].chain == ("tests/test_cart.py::test_total", "shop.cart.Cart.total",
                                   "shop.pricing.price (changed)")
    assert cart.confidence == "high"  # c = Cart() then c.total(): a local of one certain class (impact_locals)
    assert next(m for m in result.matches if m.test_file == "tests/test_pricing.py").confidence == "high"


def test_a_change_nothing_references_falls_back_to_the_importers_of_its_module(
        shop: tuple[Path, IndexService]) -> None:
    """No resolved reference reaches ``unused``: code may read it by a computed name, so the tests importing
    its module are selected whole, with the reason (QA31 F1: 0 tests selected, 48 failed)."""
    repo, index = shop
    result = _affected(repo, index, "tests/helpers.py", 9)
    assert result.changed_symbols == ("helpers.unused",)
    assert _selected(result) == {"tests/test_pricing.py"}
    assert result.fallbacks and "no reference the index resolves reaches helpers.unused" in result.fallbacks[0]
    assert "No test reaches the changed definitions" not in result.hint, result.hint


def test_helpers_and_module_constants_are_followed(shop: tuple[Path, IndexService]) -> None:
    repo, index = shop
    assert _selected(_affected(repo, index, "src/shop/pricing.py", 13)) == {"tests/test_pricing.py::test_tax"}
    # TAX is used by taxed() only: the chain goes through the constant's users
    assert _selected(_affected(repo, index, "src/shop/pricing.py", 1)) == {"tests/test_pricing.py::test_tax"}


def test_dunders_reach_the_class_and_fixtures_reach_the_tests_taking_them(shop: tuple[Path, IndexService]) -> None:
    repo, index = shop
    eq = _affected(repo, index, "src/shop/pricing.py", 21)
    assert _selected(eq) == {"tests/test_money.py::test_eq", "tests/test_money.py::test_amount"}
    amount = _affected(repo, index, "src/shop/pricing.py", 24)
    assert _selected(amount) == {"tests/test_money.py::test_amount"}
    assert all(c.confidence == "low" for m in amount.matches for c in m.cases)  # money.amount(): by name
    # the hint gives the symbol walk's reasons for a low match, not the import walk's
    assert "reached only through a guess" in amount.hint and "parent/child package" not in amount.hint, amount.hint
    fixture = _affected(repo, index, "tests/conftest.py", 7)
    assert _selected(fixture) == {"tests/test_money.py::test_eq", "tests/test_money.py::test_amount"}


def test_an_import_time_call_falls_back_to_module_level_and_says_so(shop: tuple[Path, IndexService]) -> None:
    repo, index = shop
    result = _affected(repo, index, "src/shop/pricing.py", 9)  # discount() runs when shop.pricing is imported
    assert any(f.startswith("src/shop/pricing.py: calls shop.pricing.discount at import time")
               for f in result.fallbacks)
    assert "tests/test_money.py" in _selected(result)  # whole files: the import of shop.pricing changed
    module_level = _affected(repo, index, "src/shop/pricing.py", 2)
    assert module_level.fallbacks == ("src/shop/pricing.py: module-level code changed (line 2)",)
    assert "tests/test_cart.py" in _selected(module_level)


def test_a_changed_test_and_a_file_without_ranges(shop: tuple[Path, IndexService]) -> None:
    repo, index = shop
    assert _selected(_affected(repo, index, "tests/test_cart.py", 11)) == {"tests/test_cart.py::test_empty"}
    whole = ImpactIndex(index.read_connection).affected(["src/shop/pricing.py"], TESTS)
    assert all(not m.cases for m in whole.matches) and whole.changed_symbols == ()


def test_a_removed_definition_reaches_its_former_users(shop: tuple[Path, IndexService]) -> None:
    repo, index = shop
    path = repo / "src/shop/pricing.py"
    original = path.read_text()
    path.write_text(original.replace("def discount(x):\n    return x - 1\n", "\n\n").replace(
        "REGISTRY.append(discount(3))\n", ""))
    try:
        assert index.wait_ready(30)
        index.refresh_paths(["src/shop/pricing.py"])
        result = _affected(repo, index, "src/shop/pricing.py", 8)
    finally:
        path.write_text(original)
        index.refresh_paths(["src/shop/pricing.py"])
    # test_pricing imports the name that is gone: the whole file fails to import
    assert "tests/test_pricing.py" in _selected(result)


FAULTS = [
    ("src/shop/pricing.py", 5, "    return len(name)\n", "    raise RuntimeError('injected')\n"),
    ("src/shop/pricing.py", 21, "        return self.value == other.value\n", "        raise RuntimeError('x')\n"),
    ("tests/conftest.py", 7, "    return Money(3)\n", "    raise RuntimeError('injected')\n"),
]


def test_selected_cases_cover_every_failure_and_run_alone(shop: tuple[Path, IndexService],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Faults injected into a function, a dunder and a fixture fail only selected cases; a case-level run
    runs exactly the selected cases."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    repo, index = shop
    layout = RepoLayout(repo)
    service = TestingService(repo, CodePlaneConfig().tests.model_copy(update={"retry_failed": False}), layout,
                             ArtifactStore(layout.artifacts_dir, 1), impact=ImpactIndex(index.read_connection))
    try:
        for rel, line, old, new in FAULTS:
            selected = service.tests_for([rel], {rel: [(line, line)]})
            path = repo / rel
            original = path.read_text()
            path.write_text(original.replace(old, new))
            try:
                record = service.start_run(["tests"])
                while not record.finished:
                    record.wait(record.version, 1.0)
                failing = {f"{r.target.target_id}::{c.case_id.split('::', 1)[1]}" for r in record.snapshot().targets
                           for c in (r.final.cases if r.final else ()) if c.failing}
                sharp = service.start_run(selected)
                while not sharp.finished:
                    sharp.wait(sharp.version, 1.0)
                ran = {c.case_id for r in sharp.snapshot().targets for c in (r.final.cases if r.final else ())}
            finally:
                path.write_text(original)
            assert failing, f"fault in {rel}:{line} broke no test"
            covered = {f for f in failing if f in selected or f.split("::", 1)[0] in selected
                       or any(f.startswith(s + "::") for s in selected)}
            assert covered == failing, f"{rel}:{line}: missed {sorted(failing - covered)}"
            assert "tests/test_money.py::test_plain" not in ran
    finally:
        service.close()


def test_a_walk_that_grows_too_big_falls_back_to_module_level(shop: tuple[Path, IndexService],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    repo, index = shop
    monkeypatch.setattr(impact_symbols, "MAX_DEFS", 1)
    result = _affected(repo, index, "src/shop/pricing.py", 5)
    assert result.fallbacks == ("src/shop/pricing.py: more than 1 definitions reached",)
    assert {m.test_file for m in result.matches} >= {"tests/test_cart.py", "tests/test_pricing.py"}
    assert all(not m.cases for m in result.matches if m.test_file == "tests/test_cart.py")


def test_a_walk_past_its_time_budget_falls_back_to_module_level(shop: tuple[Path, IndexService],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # The mutation delta's selection has a budget (a write on Django waited 1 s for QuerySet.get_or_create's):
    # past it the change is selected through imports, wider than the walk would have, and says why.
    repo, index = shop
    monkeypatch.setattr(impact_symbols, "DEADLINE_AFTER_DEFS", 0)  # this walk is small: checked from the start

    def read(rel: str) -> list[str]:
        return (repo / rel).read_text().splitlines()

    impact = ImpactIndex(index.read_connection)
    ranges = {"src/shop/pricing.py": [(5, 5)]}
    timed_out = impact.affected(["src/shop/pricing.py"], TESTS, ranges=ranges, read_lines=read, budget_sec=0.0)
    assert timed_out.fallbacks == ("src/shop/pricing.py: the symbol walk ran out of its time "
                                   "(inspect_affected_tests walks without a limit)",)
    walked = impact.affected(["src/shop/pricing.py"], TESTS, ranges=ranges, read_lines=read, budget_sec=60.0)
    assert walked.fallbacks == () and _selected(walked) == _selected(_affected(repo, index, "src/shop/pricing.py", 5))
    assert {m.test_file for m in timed_out.matches} >= {m.test_file for m in walked.matches}
    assert all(not m.cases for m in timed_out.matches if m.test_file == "tests/test_cart.py")
    # A walk smaller than the threshold finishes however late it is: a loaded machine does not blunt it.
    monkeypatch.setattr(impact_symbols, "DEADLINE_AFTER_DEFS", 200)
    late = impact.affected(["src/shop/pricing.py"], TESTS, ranges=ranges, read_lines=read, budget_sec=0.0)
    assert late.fallbacks == () and _selected(late) == _selected(walked)


LAZY: dict[str, str] = {
    "lazy/__init__.py": (
        "def _compute():\n    return 3\n\n\n"
        "def __getattr__(name):\n    if name == 'VERSION':\n        return _compute()\n"
        "    raise AttributeError(name)\n"),
    "tests/test_lazy.py": (
        "import importlib\n\nimport pytest\n\n\n@pytest.fixture\ndef mod():\n"
        "    return importlib.import_module('lazy')\n"
        "\n\ndef test_version(mod):\n    assert mod.VERSION == 3\n\n\ndef test_other():\n    assert True\n"),
}


def test_a_module_getattr_reaches_the_accesses_of_the_names_it_serves(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """attrs' ``mod.__version_info__`` (a module passed in by a fixture) is served by a PEP 562 ``__getattr__``."""
    with indexed_repo(tmp_path_factory.mktemp("lazy") / "repo", LAZY) as (repo, index):
        result = ImpactIndex(index.read_connection).affected(
            ["lazy/__init__.py"], ["tests/test_lazy.py"], ranges={"lazy/__init__.py": [(2, 2)]},
            read_lines=lambda rel: (repo / rel).read_text().splitlines())
    assert _selected(result) == {"tests/test_lazy.py::test_version"}


BOX: dict[str, str] = {
    "box/__init__.py": "",
    "box/funcs.py": "def register(x):\n    return x\n",                                   # 2: register's body
    "box/store.py": (
        "class Store:\n    def set(self, v):\n        self.v = v\n\n"                     # 3: Store.set's body
        "    def join(self, x):\n        return x\n"),                                    # 6: Store.join's body
    # An import-time `set()` is the builtin: a method cannot be named bare outside its class body.
    # ... and ``os.path.join`` an attribute of another distribution's module, not ``Store.join``.
    "box/other.py": "import os\n\nCACHE = set()\nJOINED = os.path.join('a', 'b')\n",
    # `hooks.register` is an attribute of an object from box.hooks, which cannot hold box.funcs' function.
    "box/hooks.py": "class Hooks:\n    def add(self, f):\n        return f\n\n\nhooks = Hooks()\n",
    "box/plugin.py": "from box.hooks import hooks\n\nhooks.register(print)\n",
    # A lambda assigned at import time runs when called, not at import.
    "box/lazy.py": "from box import funcs as f\n\nGETTER = lambda: f.register(2)\n",
    "tests/test_box.py": (
        "from box import funcs as f\nfrom box.lazy import GETTER\nfrom box.store import Store\n\n\n"
        "def test_register():\n    assert f.register(1) == 1\n\n\n"
        "def test_lazy():\n    assert GETTER() == 2\n\n\n"
        "def test_store():\n    s = Store()\n    s.set(1)\n    s.join(1)\n\n\n"
        "def test_plain():\n    import box.other, box.plugin\n"),
}


def test_bare_builtins_unrelated_modules_and_assigned_lambdas_are_no_uses(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """Name-matched uses that cannot denote the changed definition widen nothing: a bare ``set()`` is no use of a
    method ``set``; ``hooks.register`` in a module that cannot hold ``box.funcs`` is no use of its ``register``; a
    lambda assigned at import time calls nothing then; ``os.path.join`` is no use of a method ``join``."""
    with indexed_repo(tmp_path_factory.mktemp("box") / "repo", BOX) as (repo, index):
        impact = ImpactIndex(index.read_connection)

        def select(path: str, line: int) -> ImpactResult:
            return impact.affected([path], ["tests/test_box.py"], ranges={path: [(line, line)]},
                                   read_lines=lambda rel: (repo / rel).read_text().splitlines())

        register = select("box/funcs.py", 2)
        store = select("box/store.py", 3)
        join = select("box/store.py", 6)
    assert register.fallbacks == () and store.fallbacks == () and join.fallbacks == ()
    assert _selected(register) == {"tests/test_box.py::test_register", "tests/test_box.py::test_lazy"}
    assert _selected(store) == _selected(join) == {"tests/test_box.py::test_store"}


URLS: dict[str, str] = {
    "web/__init__.py": "",
    "web/conf.py": (
        "from functools import partial\n\n\n"
        "def _route(path, view):\n    return (path, view)\n\n\n"                          # 5: _route's body
        "route = partial(_route)\n"),
    "web/admin.py": "class Admin:\n    def urls(self):\n        return []\n\n\nsite = Admin()\n",  # 3: urls' body
    # `route(...)` is the callee of each line, not where the admin's urls are stored.
    "web/urls.py": (
        "from web.admin import site\nfrom web.conf import route\n\n"
        "patterns = []\npatterns += [\n    route('admin/', site.urls),\n]\n"),
    "web/other.py": "from web.conf import route\n\nOTHER = [\n    route('x/', None),\n]\n",
    "tests/test_urls.py": "import web.urls\n\n\ndef test_urls():\n    assert web.urls.patterns\n",
    "tests/test_other.py": (
        "import pytest\n\nfrom web.other import OTHER\nfrom web.admin import site\n\n\n"
        "@pytest.mark.parametrize('x', [\n" + "".join(f"    {n},\n" for n in range(40)) +
        "    site.urls,\n])\ndef test_table(x):\n    assert x is not None\n\n\n"
        "def test_other():\n    assert OTHER\n"),
}


def test_a_callee_is_no_store_and_a_long_decorator_belongs_to_its_test(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """An import-time ``route('admin/', site.urls)`` stores into neither ``route`` (its callee: following it
    reached every URL table of Django) nor anything named on its line: its module falls back to module level.
    A ``parametrize`` table naming the change 40 lines above its test selects that test, not its whole file."""
    with indexed_repo(tmp_path_factory.mktemp("urls") / "repo", URLS) as (repo, index):
        result = ImpactIndex(index.read_connection).affected(
            ["web/admin.py"], ["tests/test_urls.py", "tests/test_other.py"], ranges={"web/admin.py": [(3, 3)]},
            read_lines=lambda rel: (repo / rel).read_text().splitlines())
    assert [f.split(" (", 1)[0] for f in result.fallbacks] == ["web/urls.py: module-level code uses web.admin.site"]
    assert _selected(result) == {"tests/test_urls.py", "tests/test_other.py::test_table"}


def test_the_walk_stops_once_module_level_selection_holds_every_test(shop: tuple[Path, IndexService],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``discount`` runs when ``shop.pricing`` is imported, which every test does: once that fallback selects
    every test file whole, nothing the walk could still find would change the answer (in a repository with
    many test files; here the threshold is lowered)."""
    repo, index = shop
    assert "the walk stopped there" not in _affected(repo, index, "src/shop/pricing.py", 9).hint
    monkeypatch.setattr(impact_modules, "_STOP_MIN_TESTS", 1)
    result = _affected(repo, index, "src/shop/pricing.py", 9)
    assert {m.test_file for m in result.matches if not m.cases} >= {"tests/test_cart.py", "tests/test_money.py"}
    assert result.reached is None and "the walk stopped there" in result.hint


KIT: dict[str, str] = {
    "kit/__init__.py": (
        "def __getattr__(name):\n    if name == 'OLD':\n        return 1\n"            # 3: __getattr__'s body
        "    raise AttributeError(name)\n"),
    "kit/sub.py": "X = 1\n",
    "kit/valid.py": (
        "class Check:\n    def __init__(self, n):\n        self.n = n\n\n"
        "    def __repr__(self):\n        return f'Check({self.n})'\n\n\n"               # 6: __repr__'s body
        "def make_check(n):\n    return Check(n)\n\n\n"
        "DEFAULT = make_check(1)\n"),
    "kit/rec.py": (
        "from kit.valid import make_check\n\n\ndef frozen(cls):\n    return cls\n\n\n"
        "@frozen\nclass Rec:\n    check = make_check(3)\n\n\n"
        "class Plain:\n    check = make_check(4)\n"),
    "kit/util.py": (
        "def index(x):\n    return x\n\n\n"                                               # 2: index's body
        "def pick(sort):\n    sorts = ['a', 'b']\n    sorts.append('c')\n    return sorts.index(sort)\n\n\n"
        "def get(key):\n    return key\n\n\n"                                          # 12: get's body
        "class Box:\n    def fetch(self, key):\n        return self.__dict__.get(key)\n"),
    "kit/conf.py": (
        "class Settings:\n    @property\n    def debug(self):\n        return True\n\n"   # 4: the getter's body
        "    @debug.setter\n    def debug(self, value):\n        pass\n\n\n"
        "settings = Settings()\nFLAG = settings.debug\n"),                               # 12: reads it at import
    "gen/__init__.py": "",
    "gen/attr.py": (
        "class Attr:\n    def __init__(self, name):\n        self.name = name\n\n"        # 3: __init__'s body
        "    def __class_getitem__(cls, item):\n        return cls\n\n\n"
        "class App:\n    testing = Attr[bool]('TESTING')\n"),
    "tests/test_gen.py": "from gen.attr import App\n\n\ndef test_app():\n    assert App.testing\n",
    "tests/test_dyn.py": (
        "import importlib\nimport sys\n\n\ndef test_dyn(tmp_path):\n"
        "    (tmp_path / 'mod.py').write_text('import gen.attr\\nX = gen.attr.App\\n')\n"
        "    sys.path.insert(0, str(tmp_path))\n    assert importlib.import_module('mod').X\n\n\n"
        "def test_other():\n    pass\n"),
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef env():\n    return 1\n",  # 6: env's body
    "tests/test_fix.py": (
        "import pytest\n\n\n@pytest.mark.usefixtures('env')\ndef test_uses():\n    pass\n\n\n"
        "def test_not():\n    pass\n"),
    "tests/test_valid.py": (
        "from kit.valid import DEFAULT, make_check\n\n\n"
        "def test_repr():\n    assert repr(make_check(2)) == 'Check(2)'\n\n\ndef test_other():\n    assert True\n"),
    "tests/test_rec.py": (
        "from kit.rec import Plain, Rec\n\n\ndef test_rec():\n    assert Rec()\n\n\n"
        "def test_plain():\n    assert Plain()\n"),
    "tests/test_util.py": (
        "from kit.util import Box, get, index, pick\n\n\ndef test_index():\n    assert index(1) == 1\n\n\n"
        "def test_pick():\n    assert pick('a') == 0\n\n\ndef test_get():\n    assert get(1) == 1\n\n\n"
        "def test_box():\n    assert Box().fetch('x') is None\n"),
    "tests/test_conf.py": "import kit.conf\n\n\ndef test_conf():\n    assert kit.conf.FLAG\n",
    "tests/test_sub.py": "import kit.sub\n\n\ndef test_sub():\n    assert kit.sub.X == 1\n",
}


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService]]:
    with indexed_repo(tmp_path_factory.mktemp("kit") / "repo", KIT) as indexed:
        yield indexed


def _kit(kit: tuple[Path, IndexService], path: str, line: int) -> ImpactResult:
    repo, index = kit
    tests = sorted(p for p in KIT if p.startswith("tests/test_"))
    return ImpactIndex(index.read_connection).affected(
        [path], tests, ranges={path: [(line, line)]}, read_lines=lambda rel: (repo / rel).read_text().splitlines())


def test_a_factory_returning_an_instance_runs_none_of_its_changed_behaviour(kit: tuple[Path, IndexService]) -> None:
    """``make_check`` returns a new ``Check`` at once: with only ``Check.__repr__`` changed, calling it at import
    (``DEFAULT = make_check(1)``) imports as before. A class attribute reaches its class only where unseen code
    makes instances (a decorated class: attrs, dataclasses), not a plain class's ``Plain()``."""
    result = _kit(kit, "kit/valid.py", 6)
    assert result.fallbacks == ()
    assert _selected(result) == {"tests/test_valid.py::test_repr", "tests/test_rec.py::test_rec"}


def test_a_literal_bound_receiver_and_a_submodule_attribute_are_no_uses(kit: tuple[Path, IndexService]) -> None:
    """``sorts.index(sort)`` with ``sorts = [...]`` is ``list.index``, ``self.__dict__.get`` is ``dict.get``;
    ``kit.sub`` after ``import kit.sub`` is the submodule, never served by the package's ``__getattr__``."""
    assert _selected(_kit(kit, "kit/util.py", 2)) == {"tests/test_util.py::test_index"}
    assert _selected(_kit(kit, "kit/util.py", 12)) == {"tests/test_util.py::test_get"}
    served = _kit(kit, "kit/__init__.py", 3)
    assert served.fallbacks == () and "tests/test_sub.py" not in {m.test_file for m in served.matches}


def test_a_property_read_at_import_time_runs_its_getter(kit: tuple[Path, IndexService]) -> None:
    """``FLAG = settings.debug`` runs the getter when ``kit.conf`` is imported; ``@debug.setter`` does not."""
    result = _kit(kit, "kit/conf.py", 4)
    assert [f.split(" (", 1)[0] for f in result.fallbacks] == [
        "kit/conf.py: calls kit.conf.Settings.debug at import time"]
    assert "line 12" in result.fallbacks[0]
    assert "tests/test_conf.py" in _selected(result)


def test_usefixtures_selects_the_decorated_test(kit: tuple[Path, IndexService]) -> None:
    assert _selected(_kit(kit, "tests/conftest.py", 6)) == {"tests/test_fix.py::test_uses"}


def test_a_generic_alias_call_and_code_written_in_a_string(kit: tuple[Path, IndexService]) -> None:
    """``Attr[bool]('TESTING')`` in a class body constructs ``Attr`` at import time (flask's ``ConfigAttribute``);
    a test that writes code importing the changed package into a file and imports it runs that code where no
    reference shows it."""
    result = _kit(kit, "gen/attr.py", 3)
    assert [f.split(" (", 1)[0] for f in result.fallbacks] == ["gen/attr.py: calls gen.attr.Attr at import time"]
    assert {"tests/test_gen.py", "tests/test_dyn.py::test_dyn"} <= _selected(result)
    assert "tests/test_dyn.py::test_other" not in _selected(result)
