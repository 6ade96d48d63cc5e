"""Impact-aware test selection (§11.9) over the real structural index, and a small recall check."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.testing import ImpactIndex, ImpactResult, TestingService
from codeplane.testing.service import NO_TARGETS_HINT
from tests.builders import indexed_repo
from tests.runner_projects import CARGO_PROJECT, require

SHOP: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/shop/__init__.py": "from .cart import Cart\nfrom . import pricing\n",
    "src/shop/cart.py": (
        "from shop.pricing import price\n\n"
        "class Cart:\n    def __init__(self):\n        self.items = []\n\n"
        "    def add(self, name):\n        self.items.append(name)\n\n"
        "    def total(self):\n        return sum(price(i) for i in self.items)\n"),
    "src/shop/pricing.py": "def price(name):\n    return len(name)\n",
    "src/shop/tax/__init__.py": "",
    "src/shop/tax/rates.py": "def rate(country):\n    return 0.2 if country == 'fr' else 0.1\n",
    "src/shop/unused.py": "def nobody():\n    return None\n",
    "tests/helpers.py": "from shop.pricing import price\n\ndef priced(name):\n    return price(name)\n",
    "tests/test_cart.py": (
        "from shop.cart import Cart\n\ndef test_total():\n    c = Cart()\n    c.add('ab')\n"
        "    assert c.total() == 2\n"),
    "tests/test_shop.py": "import shop\n\ndef test_package():\n    assert shop.Cart\n",
    "tests/test_rates.py": "from shop.tax import rates\n\ndef test_rate():\n    assert rates.rate('fr') == 0.2\n",
    "tests/test_helper.py": "import helpers\n\ndef test_priced():\n    assert helpers.priced('abc') == 3\n",
    "tests/test_plain.py": "def test_plain():\n    assert True\n",
    "tests/tax/conftest.py": "import pytest\nfrom shop.tax.rates import rate\n\n@pytest.fixture\ndef fr():\n"
                             "    return rate('fr')\n",
    "tests/tax/test_fixture.py": "def test_fixture(fr):\n    assert fr == 0.2\n",
    "web/package.json": '{"name": "web", "private": true}\n',
    "web/src/sum.js": "export const sum = (a, b) => a + b;\n",
    "web/src/sum.test.js": "import { sum } from './sum';\ntest('sum', () => expect(sum(1, 2)).toBe(3));\n",
    # CommonJS, as most of npm is written: ``var`` requires were no imports at all, so nothing selected this test.
    "web/src/mul.js": "module.exports = function mul(a, b) { return a * b; };\n",
    "web/src/mul.test.js": "var mul = require('./mul');\ntest('mul', () => expect(mul(2, 3)).toBe(6));\n",
    "README.md": "# shop\n",
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService]]:
    with indexed_repo(tmp_path_factory.mktemp("impact") / "repo", SHOP) as indexed:
        yield indexed


def _affected(index: IndexService, changed: list[str], *, uncovered: bool = False) -> ImpactResult:
    tests = [p for p in SHOP if p.rsplit("/", 1)[-1].startswith("test_") or p.endswith(".test.js")]
    return ImpactIndex(index.read_connection).affected(changed, tests, uncovered=uncovered)


def _matches(result: ImpactResult) -> dict[str, str]:
    return {m.test_file: m.confidence for m in result.matches}


def test_exact_chains_are_high_and_package_matches_low(shop: tuple[Path, IndexService]) -> None:
    _, index = shop
    began = time.perf_counter()
    result = _affected(index, ["src/shop/pricing.py"])
    elapsed = time.perf_counter() - began
    assert result.confidence == "complete" and result.changed_modules == ("shop.pricing",)
    assert _matches(result) == {
        "tests/test_cart.py": "high",  # test → shop.cart → shop.pricing
        "tests/test_shop.py": "high",  # test → shop (from . import pricing) → shop.pricing
        "tests/test_helper.py": "high",  # test → helpers → shop.pricing
        "tests/test_rates.py": "low",  # imports shop.tax: its parent package shop imports pricing
        "tests/tax/test_fixture.py": "low",  # its conftest.py imports shop.tax.rates (child of shop)
    }
    cart = next(m for m in result.matches if m.test_file == "tests/test_cart.py")
    assert cart.reasons == ("imports shop.cart (exact)",)
    assert result.source_dirs == ("src/shop",)
    assert elapsed < 5  # generous; the benchmark measures the real number


def test_child_and_parent_matches_and_a_changed_test_file(shop: tuple[Path, IndexService]) -> None:
    _, index = shop
    rates = _affected(index, ["src/shop/tax/rates.py"])
    assert _matches(rates)["tests/test_rates.py"] == "high"
    fixture = next(m for m in rates.matches if m.test_file == "tests/tax/test_fixture.py")
    assert fixture.confidence == "high"
    assert fixture.reasons == ("runs under tests/tax/conftest.py (affected conftest.py)",)
    assert _matches(_affected(index, ["tests/tax/conftest.py"])) == {"tests/tax/test_fixture.py": "high"}
    assert _matches(rates)["tests/test_shop.py"] == "low"
    package = _affected(index, ["src/shop/tax/__init__.py"])
    rate_match = next(m for m in package.matches if m.test_file == "tests/test_rates.py")
    assert rate_match.confidence == "high" and any("exact" in r for r in rate_match.reasons)
    itself = _affected(index, ["tests/test_plain.py"])
    assert _matches(itself) == {"tests/test_plain.py": "high"}


def test_unresolved_files_make_it_partial_without_broadening(shop: tuple[Path, IndexService]) -> None:
    _, index = shop
    result = _affected(index, ["README.md", "src/shop/tax/rates.py"])
    assert result.confidence == "partial" and result.unresolved_files == ("README.md",)
    assert set(_matches(result)) == set(_matches(_affected(index, ["src/shop/tax/rates.py"])))
    assert "README.md" in result.hint or "map to no importable module" in result.hint
    empty = _affected(index, [])
    assert empty.confidence == "complete" and empty.matches == ()


def test_javascript_relative_imports_and_uncovered_modules(shop: tuple[Path, IndexService]) -> None:
    _, index = shop
    js = _affected(index, ["web/src/sum.js"])
    assert js.confidence == "complete" and _matches(js) == {"web/src/sum.test.js": "high"}
    gaps = _affected(index, ["src/shop/unused.py"], uncovered=True)
    assert gaps.matches == () or all(m.confidence == "low" for m in gaps.matches)
    assert "shop.unused" in gaps.uncovered_modules and "shop.cart" not in gaps.uncovered_modules
    # One name per file, its primary one: src/shop/cart.py is also ``src.shop.cart`` from the root, imported by no test
    # under that name, and is still covered; src/shop/unused.py is listed once.
    assert not any(name.startswith("src.") for name in gaps.uncovered_modules), gaps.uncovered_modules
    assert gaps.uncovered_total == len(gaps.uncovered_modules)
    assert len(gaps.uncovered_modules) <= 20



def test_the_uncovered_modules_shown_are_those_nearest_the_change(tmp_path: Path) -> None:
    # 25 untested modules sort before the change's by name; the 20 shown start with the changed module and its
    # package's, and the count is all 30 (before: the first 20 by name, none of them near the change). What the
    # tested module imports, and what that imports, is loaded by the test: zzz.helper and zzz.deep are not listed.
    files = {f"src/aaa/m{n:02}.py": "X = 1\n" for n in range(25)}
    files |= {"src/aaa/__init__.py": "", "src/zzz/__init__.py": "", "src/zzz/sub/__init__.py": "",
              "src/zzz/sub/changed.py": "def f():\n    return 1\n", "src/zzz/sub/sibling.py": "Y = 2\n",
              "src/zzz/other.py": "Z = 3\n", "src/zzz/tested.py": "from zzz.helper import H\nW = 4\n",
              "src/zzz/helper.py": "from zzz import deep\nH = 5\n", "src/zzz/deep.py": "D = 6\n",
              "src/zzz/tested.pyi": "W: int\n",  # a stub of the same name: the module's imports are still followed
              "pytest.ini": "[pytest]\npythonpath = src\n",
              "tests/test_w.py": "from zzz.tested import W\n\ndef test_w():\n    assert W == 4\n"}
    with indexed_repo(tmp_path / "repo", files) as (_, index):
        gaps = ImpactIndex(index.read_connection).affected(["src/zzz/sub/changed.py"], ["tests/test_w.py"],
                                                          uncovered=True)
    nearest = ("zzz.sub.changed", "zzz.sub", "zzz.sub.sibling", "zzz.other", "aaa", "aaa.m00")
    assert gaps.uncovered_modules[:6] == nearest
    assert len(gaps.uncovered_modules) == 20 and gaps.uncovered_total == 30
    assert not {"zzz.helper", "zzz.deep", "zzz.tested", "zzz"} & set(gaps.uncovered_modules)

def test_service_filters_targets_and_tests_for(shop: tuple[Path, IndexService]) -> None:
    repo, index = shop
    layout = RepoLayout(repo)
    service = TestingService(repo, CodePlaneConfig().tests, layout, ArtifactStore(layout.artifacts_dir, 1),
                             impact=ImpactIndex(index.read_connection))
    try:
        view = service.discover(affected_by=["src/shop/tax/rates.py"])
        assert view.impact is not None
        assert [t.target_id for t in view.targets] == [
            "tests/tax/test_fixture.py", "tests/test_cart.py", "tests/test_helper.py", "tests/test_rates.py",
            "tests/test_shop.py"]
        assert service.tests_for(["web/src/sum.js"]) == ["web/src/sum.test.js"]
        assert service.tests_for(["web/src/mul.js"]) == ["web/src/mul.test.js"]
        assert service.tests_for([]) == []
    finally:
        service.close()



def test_a_javascript_test_loading_a_module_by_a_computed_name_makes_the_selection_partial(tmp_path: Path) -> None:
    files = {"web/package.json": '{"name": "web", "private": true}\n',
             "web/src/sum.js": "exports.sum = (a, b) => a + b;\n",
             "web/src/sum.test.js": "const { sum } = require('./sum');\ntest('sum', () => sum(1, 2));\n",
             "web/src/any.test.js": "const name = './' + 'sum';\ntest('any', () => require(name));\n"}
    with indexed_repo(tmp_path / "repo", files) as (_, index):
        found = ImpactIndex(index.read_connection).affected(["web/src/sum.js"], ["web/src/sum.test.js",
                                                                                 "web/src/any.test.js"])
    assert [m.test_file for m in found.matches] == ["web/src/sum.test.js"]
    assert found.confidence == "partial" and found.null_literal_imports == 1

def test_a_rust_change_selects_every_cargo_target_whole(tmp_path: Path) -> None:
    # The import walk names no Rust module: run_test_targets(affected_by=["src/eval.rs"]) on semver's crate ran
    # nothing and said "passed", while every cargo target of the crate compiles that file.
    require("cargo")
    files = {**CARGO_PROJECT, "rs/src/eval.rs": "pub fn ev() -> i32 { 1 }\n", "README.md": "# r\n"}
    with indexed_repo(tmp_path / "repo", files) as (repo, index):
        layout = RepoLayout(repo)
        service = TestingService(repo, CodePlaneConfig().tests, layout, ArtifactStore(layout.artifacts_dir, 1),
                                 impact=ImpactIndex(index.read_connection))
        try:
            inspected = service.inspect_affected(["rs/src/eval.rs", "README.md"])
            targets = service.discover(affected_by=["rs/src/eval.rs"]).targets
        finally:
            service.close()
    assert _matches(inspected) == {"rs/src/lib.rs": "low", "rs/tests/integration.rs": "low"}
    assert inspected.unresolved_files == ("README.md",) and inspected.confidence == "partial"
    assert inspected.hint.startswith("1 changed Rust file(s) select every cargo target whole"), inspected.hint
    assert "README.md" not in inspected.hint and "map to no importable module" in inspected.hint
    # (the library's doc-tests too: the change may break an example)
    assert sorted(t.target_id for t in targets) == [
        "rs/src/lib.rs", "rs/src/lib.rs#doctests", "rs/tests/integration.rs"]

def test_a_repository_with_no_test_target_says_so_rather_than_that_no_test_imports_the_change(tmp_path: Path) -> None:
    # qs's tests use tape, which CodePlane has no adapter for: test/utils.js requires lib/utils.js, and the hint said
    # "No test imports the changed modules".
    files = {"package.json": '{"name": "q", "scripts": {"test": "tape test/*.js"}}\n',
             "lib/utils.js": "exports.merge = function merge(a, b) { return a; };\n",
             "test/utils.js": "var utils = require('../lib/utils');\nutils.merge(1, 2);\n"}
    with indexed_repo(tmp_path / "repo", files) as (repo, index):
        layout = RepoLayout(repo)
        service = TestingService(repo, CodePlaneConfig().tests, layout, ArtifactStore(layout.artifacts_dir, 1),
                                 impact=ImpactIndex(index.read_connection))
        try:
            inspected = service.inspect_affected(["lib/utils.js"])
            discovered = service.discover(affected_by=["lib/utils.js"])
        finally:
            service.close()
    assert inspected.matches == () and inspected.hint == NO_TARGETS_HINT
    assert discovered.impact is not None and discovered.impact.hint == NO_TARGETS_HINT

FAULTS = {
    "src/shop/pricing.py": ("return len(name)", "raise RuntimeError('injected')"),
    "src/shop/tax/rates.py": ("return 0.2 if", "raise RuntimeError('injected')\n    return 0.2 if"),
    "src/shop/cart.py": ("self.items = []", "raise RuntimeError('injected')"),
}


def test_injected_faults_fail_only_selected_tests(shop: tuple[Path, IndexService],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The small version of benchmarks/impact_recall.py: 100 % recall on three injected faults."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    repo, index = shop
    layout = RepoLayout(repo)
    service = TestingService(repo, CodePlaneConfig().tests.model_copy(update={"retry_failed": False}), layout,
                             ArtifactStore(layout.artifacts_dir, 1), impact=ImpactIndex(index.read_connection))
    try:
        for path, (old, new) in FAULTS.items():
            selected = set(service.tests_for([path]))
            original = (repo / path).read_text()
            (repo / path).write_text(original.replace(old, new))
            try:
                record = service.start_run(["tests"])
                while not record.finished:
                    record.wait(record.version, 1.0)
                snapshot = record.snapshot()
            finally:
                (repo / path).write_text(original)
            failing = {r.target.target_id for r in snapshot.targets if r.outcome in ("failed", "error")}
            assert failing, f"fault in {path} broke no test"
            assert failing <= selected, f"{path}: missed {sorted(failing - selected)}"
    finally:
        service.close()


def _reader(root: Path) -> Callable[[str], list[str]]:
    """A file's current lines, as the tests service hands them to a selection."""
    return lambda path: (root / path).read_text().splitlines()


def test_a_module_no_test_imports_but_one_names_in_a_string_is_selected_and_partial(tmp_path: Path) -> None:
    """flask's ``tests/test_apps/cliapp/factory.py`` is loaded by ``locate_app("cliapp.factory")`` (``__import__``):
    a change there selected 0 tests, "complete", and 4 failed. A test naming the module in a string is selected
    (low), and a change no test reaches is never claimed complete."""
    files = {"pytest.ini": "[pytest]\n",
             "src/loader.py": "def locate(name):\n    return __import__(name)\n",
             "tests/conftest.py": ("import sys, os\n"
                                   "sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'apps'))\n"),
             "tests/apps/cliapp/__init__.py": "",
             "tests/apps/cliapp/factory.py": "def create_app():\n    return 'app'\n",
             "tests/apps/script.py": "print('run by hand')\n",
             "tests/test_cli.py": "from loader import locate\n\n\ndef test_locate():\n"
                                  "    assert locate('cliapp.factory').__name__ == 'cliapp.factory'\n",
             "tests/test_other.py": "def test_x():\n    assert True\n"}
    tests = ["tests/test_cli.py", "tests/test_other.py"]
    with indexed_repo(tmp_path / "repo", files) as (root, index):
        impact = ImpactIndex(index.read_connection)
        lines = _reader(root)
        for ranges in (None, {"tests/apps/cliapp/factory.py": [(2, 2)]}):
            found = impact.affected(["tests/apps/cliapp/factory.py"], tests, ranges=ranges, read_lines=lines)
            assert _matches(found) == {"tests/test_cli.py": "low"}, (ranges, found)
            assert found.confidence == "partial", ranges
            assert "names cliapp.factory in a string" in found.matches[0].reasons[0], found.matches[0].reasons
        alone = impact.affected(["tests/apps/script.py"], tests, read_lines=lines)
        assert not alone.matches and alone.confidence == "partial", alone


def test_a_module_loaded_from_a_directory_a_test_changes_into_selects_the_test_naming_it(tmp_path: Path) -> None:
    """flask's ``test_scriptinfo`` does ``monkeypatch.chdir(test_path / "helloworld")`` and ``load_app()`` imports
    ``wsgi.py``, which imports ``hello.py``, from there: a change to either selected nothing. A test naming the
    directory (outside any package) in a string is selected (low); a directory's name within a word is no name."""
    files = {"pytest.ini": "[pytest]\n",
             "tests/apps/helloworld/hello.py": "def greet():\n    return 'hello'\n",
             "tests/apps/helloworld/wsgi.py": "from hello import greet\n\napp = greet()\n",
             "tests/test_cli.py": ("import importlib\nfrom pathlib import Path\n\n\ndef test_load(monkeypatch):\n"
                                   "    monkeypatch.chdir(Path(__file__).parent / 'apps' / 'helloworld')\n"
                                   "    monkeypatch.syspath_prepend('.')\n"
                                   "    assert importlib.import_module('wsgi').app == 'hello'\n"),
             "tests/test_other.py": "def test_x():\n    assert 'helloworlds'\n"}
    tests = ["tests/test_cli.py", "tests/test_other.py"]
    with indexed_repo(tmp_path / "repo", files) as (root, index):
        impact = ImpactIndex(index.read_connection)
        found = impact.affected(["tests/apps/helloworld/hello.py"], tests, ranges={
            "tests/apps/helloworld/hello.py": [(2, 2)]}, read_lines=_reader(root))
    assert _matches(found) == {"tests/test_cli.py": "low"}, found
    assert found.confidence == "partial", found.matches
    assert "names the directory helloworld in a string" in found.matches[0].reasons[0], found.matches[0].reasons


def test_the_runners_config_selects_every_test_and_a_data_file_the_tests_naming_it(tmp_path: Path) -> None:
    """click's ``setup.cfg`` ``[tool:pytest]`` gained a ``usefixtures`` that errored all 589 tests, and flask's
    ``tests/static/config.json`` changed a value a test reads: both selected nothing."""
    files = {"setup.cfg": "[metadata]\nname = x\n\n[tool:pytest]\ntestpaths = tests\n",
             "docs.cfg": "[docs]\nx = 1\n",
             "tests/static/config.json": '{"TEST_KEY": "foo"}\n',
             "tests/test_config.py": "import json, os\n\n\ndef test_json():\n"
                                     "    path = os.path.join(os.path.dirname(__file__), 'static', 'config.json')\n"
                                     "    assert json.load(open(path))['TEST_KEY'] == 'foo'\n",
             "tests/test_other.py": "def test_x():\n    assert True\n"}
    tests = ["tests/test_config.py", "tests/test_other.py"]
    with indexed_repo(tmp_path / "repo", files) as (root, index):
        impact = ImpactIndex(index.read_connection)
        lines = _reader(root)
        config = impact.affected(["setup.cfg"], tests, read_lines=lines)
        assert _matches(config) == {"tests/test_config.py": "low", "tests/test_other.py": "low"}, config
        data = impact.affected(["tests/static/config.json"], tests, read_lines=lines)
        assert _matches(data) == {"tests/test_config.py": "low"} and data.confidence == "partial", data
        other = impact.affected(["docs.cfg"], tests, read_lines=lines)
        assert not other.matches and other.confidence == "partial"
