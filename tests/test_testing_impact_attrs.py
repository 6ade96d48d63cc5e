"""Instance attributes of one certain class in symbol-level impact selection (issue 22, ``impact_attrs.py``):
``self.x.m()`` reaches only ``m`` of the class every store of ``x`` constructs, and any doubt widens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.index.service import IndexService
from codeplane.testing import ImpactIndex, ImpactResult
from codeplane.testing.impact_attrs import self_attribute
from tests.builders import indexed_repo

#: Writers shared with ``test_testing_impact_locals.py``: the same classes, reached through typed locals there.
WRITERS = (
    "from collections.abc import Sized\n"              # 1
    "\n\n"
    "def stamp(text):\n"                                # 4
    "    return text\n"                                 # 5
    "\n\n"
    "class Plain:\n"                                    # 8
    "    def write(self, text):\n"                      # 9
    "        return stamp(text)\n"                      # 10
    "\n\n"
    "class Fancy:\n"                                    # 13
    "    def write(self, text):\n"                      # 14
    "        return '*' + stamp(text)\n"                # 15
    "\n\n"
    "class Loud(Plain, Sized):\n"                       # 18: a standard abstract base adds no hooks
    "    def __len__(self):\n"
    "        return 0\n")
FILES: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src tests\n",
    "src/pkg/__init__.py": "",
    "src/pkg/writers.py": WRITERS,
    # ``self.out`` is only ever a Loud: Loud.write is Plain.write, Fancy.write is never called through it.
    "src/pkg/report.py": (
        "from pkg.writers import Loud\n"
        "\n\n"
        "class Report:\n"
        "    def __init__(self):\n"
        "        self.out = Loud()\n"
        "\n"
        "    def render(self, text):\n"
        "        return self.out.write(text)\n"),
    # ``self.sink`` is a Plain in one method and a Fancy in another: untyped, matched by name.
    "src/pkg/mixed.py": (
        "from pkg.writers import Fancy, Plain\n"
        "\n\n"
        "class Mixed:\n"
        "    def __init__(self):\n"
        "        self.sink = Plain()\n"
        "\n"
        "    def fancy(self):\n"
        "        self.sink = Fancy()\n"
        "\n"
        "    def mix(self, text):\n"
        "        return self.sink.write(text)\n"),
    # ``self.pen`` is a Plain here, but a test stores another object in it: untyped.
    "src/pkg/poked.py": (
        "from pkg.writers import Plain\n"
        "\n\n"
        "class Poked:\n"
        "    def __init__(self):\n"
        "        self.pen = Plain()\n"
        "\n"
        "    def poke(self, text):\n"
        "        return self.pen.write(text)\n"),
    # A test class's fixture method runs on the instance running the test: ``self.w`` is a Loud there too.
    "tests/test_table.py": (
        "import pytest\n\nfrom pkg.writers import Loud\n\n\n"
        "class TestTable:\n    @pytest.fixture(autouse=True)\n    def setup(self):\n        self.w = Loud()\n\n"
        "    def test_write(self):\n        assert self.w.write('a')\n"),
    "src/pkg/api.py": "def write(text):\n    return text\n",
    "tests/test_api.py": "from pkg import api\n\n\ndef test_write():\n    assert api.write('a')\n",
    "tests/test_report.py": "from pkg.report import Report\n\n\ndef test_show():\n    assert Report().render('a')\n",
    "tests/test_mixed.py": "from pkg.mixed import Mixed\n\n\ndef test_show():\n    assert Mixed().mix('a')\n",
    "tests/test_poked.py": (
        "from pkg.poked import Poked\nfrom pkg.writers import Fancy\n\n\n"
        "def test_show():\n    p = Poked()\n    p.pen = Fancy()\n    assert p.poke('a')\n"),
}
TESTS = sorted(p for p in FILES if p.rsplit("/", 1)[-1].startswith("test_"))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService]]:
    with indexed_repo(tmp_path_factory.mktemp("attrs") / "repo", FILES) as indexed:
        yield indexed


def _files(repo: tuple[Path, IndexService], path: str, line: int) -> set[str]:
    root, index = repo

    def read(rel: str) -> list[str]:
        return (root / rel).read_text().splitlines()

    result: ImpactResult = ImpactIndex(index.read_connection).affected(
        [path], TESTS, ranges={path: [(line, line)]}, read_lines=read)
    assert result.confidence == "complete"
    return {m.test_file for m in result.matches}


def test_a_method_of_an_unrelated_class_is_not_reached_through_a_typed_attribute(
        repo: tuple[Path, IndexService]) -> None:
    # Fancy.write: Report's ``self.out`` is a Loud, so only the untyped attributes reach it.
    assert _files(repo, "src/pkg/writers.py", 15) == {"tests/test_mixed.py", "tests/test_poked.py"}


def test_a_base_class_method_is_reached_through_a_typed_attribute(repo: tuple[Path, IndexService]) -> None:
    # Plain.write is what Loud().write runs.
    assert _files(repo, "src/pkg/writers.py", 10) == {"tests/test_report.py", "tests/test_mixed.py",
                                                      "tests/test_poked.py", "tests/test_table.py"}


def test_the_method_a_typed_attribute_denotes_is_reached_with_high_confidence(
        repo: tuple[Path, IndexService]) -> None:
    root, index = repo
    result = ImpactIndex(index.read_connection).affected(
        ["src/pkg/writers.py"], TESTS, ranges={"src/pkg/writers.py": [(10, 10)]},
        read_lines=lambda rel: (root / rel).read_text().splitlines())
    confidence = {m.test_file: m.confidence for m in result.matches}
    # ``self.w.write`` in TestTable: ``self.w`` is a Loud, whose classes define one ``write``, Plain's.
    assert confidence["tests/test_table.py"] == "high"
    assert confidence["tests/test_mixed.py"] == "low"  # ``self.sink`` is a Plain or a Fancy: matched by name


def test_a_module_function_is_not_reached_through_a_typed_attribute(repo: tuple[Path, IndexService]) -> None:
    # In a test file ``x.write`` may be a module's function (a fixture may hand over a module), but ``self.w``
    # in TestTable is a Loud, whose classes bind no ``write`` to a value.
    assert _files(repo, "src/pkg/api.py", 2) == {"tests/test_api.py"}


def test_a_use_left_out_for_one_class_is_still_followed_for_another(repo: tuple[Path, IndexService]) -> None:
    # stamp() reaches Plain.write and Fancy.write in one walk: ``self.out.write`` in Report, left out for
    # Fancy, is Plain's, whichever of the two the walk reaches first.
    assert _files(repo, "src/pkg/writers.py", 5) == {"tests/test_report.py", "tests/test_mixed.py",
                                                      "tests/test_poked.py", "tests/test_table.py"}


def test_a_string_naming_the_attribute_in_a_setattr_call_widens(tmp_path: Path) -> None:
    files = {**FILES, "tests/test_report.py": (
        "from pkg.report import Report\nfrom pkg.writers import Fancy\n\n\n"
        "def test_show(monkeypatch):\n    r = Report()\n    monkeypatch.setattr(r, 'out', Fancy())\n"
        "    assert r.render('a')\n")}
    with indexed_repo(tmp_path / "repo", files) as indexed:
        assert "tests/test_report.py" in _files(indexed, "src/pkg/writers.py", 15)


@pytest.mark.parametrize("extra", [
    # Some instance stores its own ``write``: ``k.write`` may be another object's method.
    "class Proxy:\n    def __init__(self, out):\n        self.write = out.write\n",
    # A subclass answers unset attributes: ``self.out`` may be anything before ``__init__`` stored it.
    "from pkg.report import Report\n\n\nclass Lazy(Report):\n    def __getattr__(self, name):\n"
    "        return None\n",
])
def test_an_instance_member_store_or_an_attribute_hook_widens(tmp_path: Path, extra: str) -> None:
    with indexed_repo(tmp_path / "repo", {**FILES, "src/pkg/extra.py": extra}) as indexed:
        assert "tests/test_report.py" in _files(indexed, "src/pkg/writers.py", 15)


def test_self_attribute_reads_the_receiver() -> None:
    assert self_attribute("        return self.out.write(text)", 24) == (15, "out")
    assert self_attribute("        return other.self.out.write(text)", 30) is None
    assert self_attribute("        return out.write(text)", 19) is None


RECEIVERS: dict[str, str] = {
    "box/__init__.py": "",
    "box/store.py": "class Store:\n    def get(self, key):\n        return key\n",      # 3: Store.get's body
    "box/util.py": (
        "import os\n\nfrom box.store import Store\n\n\n"
        "def env(key):\n    return os.environ.get(key) or os.environ.get(key.upper())\n\n\n"
        "def opts(*args, **kwargs):\n    return kwargs.get('a'), args.index(1)\n\n\n"
        "def rebound(**kwargs):\n    kwargs = Store()\n    return kwargs.get('a')\n"),
    "tests/test_util.py": (
        "from box import util\nfrom box.store import Store\n\n\n"
        "def test_env():\n    util.env('HOME')\n\n\n"
        "def test_opts():\n    util.opts(1, a=1)\n\n\n"
        "def test_rebound():\n    util.rebound(a=1)\n\n\n"
        "def test_store():\n    Store().get(1)\n"),
}


def test_a_keyword_before_a_foreign_module_and_packed_parameters_are_no_uses(tmp_path: Path) -> None:
    """``return os.environ.get(key)`` is ``os``'s (a keyword before the dotted name does not hide it); ``kwargs.get``
    of a ``**kwargs`` parameter is ``dict.get``, ``args.index`` of ``*args`` ``tuple.index``; a packed parameter
    rebound to something else counts."""
    with indexed_repo(tmp_path / "repo", RECEIVERS) as (root, index):
        result = ImpactIndex(index.read_connection).affected(
            ["box/store.py"], ["tests/test_util.py"], ranges={"box/store.py": [(3, 3)]},
            read_lines=lambda rel: (root / rel).read_text().splitlines())
    assert {n for m in result.matches for n in m.node_ids} == {"tests/test_util.py::test_rebound",
                                                               "tests/test_util.py::test_store"}
