"""Issue 22 precision: ``x.title`` on an object certainly of another class never runs a class attribute's
descriptor (``impact_descriptors``), even where instances store an attribute so named.

packaging's ``req = Requirement(s)`` then ``req.name`` was matched to ``Metadata.name = _Validator()`` (whose
``__get__`` runs the field converters) because ``Requirement.__init__`` stores ``self.name``. On a real git
repository and the real index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.index.service import IndexService
from codeplane.testing import ImpactIndex
from tests.builders import indexed_repo

FILES: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = .\n",
    "pkg/__init__.py": "",
    "pkg/fields.py": (
        "class Field:\n"
        "    def __init__(self):\n"
        "        self.key = ''\n"
        "\n"
        "    def __set_name__(self, owner, name):\n"
        "        self.key = name\n"
        "\n"
        "    def __get__(self, instance, owner):\n"
        "        return convert(instance)\n"
        "\n"
        "\n"
        "class Hook(Field):\n"                    # a descriptor Python also runs as a callable: ``item.handler()``
        "    def __call__(self):\n"
        "        return 1\n"
        "\n"
        "\n"
        "def convert(value):\n"
        "    return value  # CHANGED\n"),
    "pkg/model.py": (
        "from pkg.fields import Field, Hook\n"
        "\n"
        "\n"
        "class Model:\n"
        "    title = Field()\n"
        "    handler = Hook()\n"),
    # Instances of an unrelated class store attributes of the same names.
    "pkg/item.py": (
        "class Item:\n"
        "    def __init__(self, title, handler):\n"
        "        self.title = title\n"
        "        self.handler = handler\n"),
    "tests/__init__.py": "",
    "tests/test_item.py": (
        "from pkg.item import Item\n"
        "\n"
        "\n"
        "def test_item_title():\n"
        "    item = Item('a', None)\n"
        "    assert item.title == 'a'\n"
        "\n"
        "\n"
        "def test_item_handler():\n"
        "    item = Item('a', None)\n"
        "    assert item.handler is None\n"),
    "tests/test_model.py": (
        "from pkg.model import Model\n"
        "\n"
        "\n"
        "def test_model_title():\n"
        "    model = Model()\n"
        "    assert model.title is model\n"),
}
TESTS = ["tests/test_item.py", "tests/test_model.py"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService]]:
    with indexed_repo(tmp_path_factory.mktemp("s52") / "repo", FILES) as indexed:
        yield indexed


def _selected(repo: Path, index: IndexService) -> set[str]:
    line = FILES["pkg/fields.py"].splitlines().index("    return value  # CHANGED") + 1
    result = ImpactIndex(index.read_connection).affected(
        ["pkg/fields.py"], TESTS, ranges={"pkg/fields.py": [(line, line)]},
        read_lines=lambda rel: (repo / rel).read_text().splitlines())
    return {node for m in result.matches for node in m.node_ids}


def test_an_unrelated_class_s_attribute_read_runs_no_descriptor(repo: tuple[Path, IndexService]) -> None:
    selected = _selected(*repo)
    assert "tests/test_model.py::test_model_title" in selected  # a ``Model``'s lookup runs ``Field.__get__``
    assert "tests/test_item.py::test_item_title" not in selected  # an ``Item``'s never does
    assert "tests/test_item.py" not in selected


def test_a_descriptor_python_may_call_still_counts(repo: tuple[Path, IndexService]) -> None:
    """``Hook`` defines ``__call__``: an ``Item`` may hold the ``Hook`` object itself (``self.handler =
    vars(Model)["handler"]``), and calling it would run Python's protocol on it; the read stays a use."""
    assert "tests/test_item.py::test_item_handler" in _selected(*repo)
