"""Locals of one certain class in symbol-level impact selection (issue 22, ``impact_locals.py``): after
``w = K(...)``, ``w.m()`` reaches only ``m`` as ``K``'s classes define it, with high confidence, and any other
way the name is bound leaves it untyped (matched by name, as before)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.index.service import IndexService
from codeplane.testing import ImpactIndex, ImpactResult
from tests.builders import indexed_repo
from tests.test_testing_impact_attrs import WRITERS

_HEAD = "from pkg.writers import Fancy, Loud, Plain\n\n\n"
#: Each test binds ``w`` to a Loud, and to a Fancy in another way a name can be bound (or takes it as a
#: parameter): only the assignment is certain, so every one of them may call Fancy.write.
BOUND_OTHERWISE = {
    "param": "def test_it(w=Fancy()):\n    assert w.write('a')\n",
    "for": "def test_it():\n    w = Loud()\n    for w in (Fancy(),):\n        assert w.write('a')\n",
    "tuple": "def test_it():\n    w = Loud()\n    w, n = Fancy(), 1\n    assert w.write('a')\n",
    "with": "def test_it():\n    w = Loud()\n    with open('f') as w:\n        assert w.write('a')\n",
    "augmented": "def test_it():\n    w = Loud()\n    w += 1\n    assert w.write('a')\n",
    "walrus": "def test_it():\n    w = Loud()\n    if (w := Fancy()):\n        assert w.write('a')\n",
    "except": "def test_it():\n    w = Loud()\n    try:\n        pass\n    except Exception as w:\n"
              "        assert w.write('a')\n",
    "nonlocal": "def test_it():\n    w = Loud()\n\n    def swap():\n        nonlocal w\n        w = Fancy()\n\n"
                "    swap()\n    assert w.write('a')\n",
    "global": "w = Fancy()\n\n\ndef test_it():\n    global w\n    w = Loud()\n    assert w.write('a')\n",
    "match": "def test_it(x=Fancy()):\n    w = Loud()\n    match x:\n        case Fancy() as w:\n"
             "            assert w.write('a')\n",
    "match capture": "def test_it(x=Fancy()):\n    w = Loud()\n    match x:\n        case w:\n"
                     "            assert w.write('a')\n",
    "comprehension": "def test_it():\n    w = Loud()\n    assert [w.write('a') for w in (Fancy(),)]\n",
    "lambda": "def test_it():\n    w = Loud()\n    assert (lambda w: w.write('a'))(Fancy())\n",
    "import": "def test_it():\n    w = Loud()\n    import pkg.fancy_module as w\n    assert w.write('a')\n",
    "two classes": ("def test_it(flag=True):\n    w = Loud()\n    if flag:\n        w = Fancy()\n"
                    "    assert w.write('a')\n"),
    "a function's result": ("def make():\n    return Fancy()\n\n\ndef test_it():\n    w = make()\n"
                            "    assert w.write('a')\n"),
}
FILES: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src tests\n",
    "src/pkg/__init__.py": "",
    "src/pkg/writers.py": WRITERS,
    "tests/test_local.py": _HEAD + "def test_local():\n    w = Loud()\n    assert w.write('a')\n",
    **{f"tests/test_{name.replace(' ', '_').replace(chr(39), '')}.py": _HEAD + body
       for name, body in BOUND_OTHERWISE.items()},
}
TESTS = sorted(p for p in FILES if p.rsplit("/", 1)[-1].startswith("test_"))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService]]:
    with indexed_repo(tmp_path_factory.mktemp("locals") / "repo", FILES) as indexed:
        yield indexed


def _affected(repo: tuple[Path, IndexService], line: int, files: dict[str, str] = FILES) -> ImpactResult:
    root, index = repo

    def read(rel: str) -> list[str]:
        return (root / rel).read_text().splitlines()

    path = "src/pkg/writers.py"
    result = ImpactIndex(index.read_connection).affected(
        [path], sorted(p for p in files if p.rsplit("/", 1)[-1].startswith("test_")), ranges={path: [(line, line)]},
        read_lines=read)
    assert result.confidence == "complete"
    return result


def test_a_method_of_an_unrelated_class_is_not_reached_through_a_typed_local(
        repo: tuple[Path, IndexService]) -> None:
    # Fancy.write: ``w = Loud()`` then ``w.write`` is Plain's; every other way of binding ``w`` keeps the use.
    files = {m.test_file for m in _affected(repo, 15).matches}
    assert files == {p for p in TESTS if p != "tests/test_local.py"}


def test_the_method_a_typed_local_denotes_is_reached_with_high_confidence(repo: tuple[Path, IndexService]) -> None:
    result = _affected(repo, 10)  # Plain.write, which Loud inherits
    local = next(m for m in result.matches if m.test_file == "tests/test_local.py")
    assert local.confidence == "high" and local.cases[0].chain == (
        "tests/test_local.py::test_local", "pkg.writers.Plain.write (changed)")
    assert next(m for m in result.matches if m.test_file == "tests/test_param.py").confidence == "low"


def test_a_use_left_out_for_one_class_is_still_followed_for_another(repo: tuple[Path, IndexService]) -> None:
    # stamp() reaches Plain.write and Fancy.write in one walk: ``w.write`` in test_local, left out for Fancy, is
    # Plain's, whichever of the two the walk reaches first.
    assert "tests/test_local.py" in {m.test_file for m in _affected(repo, 5).matches}


def test_a_subclass_overriding_the_method_keeps_the_typed_use_off_the_base(tmp_path: Path) -> None:
    files = {**FILES, "src/pkg/writers.py": WRITERS + "\n    def write(self, text):\n        return text\n"}
    with indexed_repo(tmp_path / "repo", files) as indexed:
        # Loud.write (line 22) is what ``w.write`` runs; Plain.write is another definition of the name in Loud's
        # classes, so the use is Loud's alone, not Plain's.
        assert "tests/test_local.py" in {m.test_file for m in _affected(indexed, 22, files).matches}
        assert "tests/test_local.py" not in {m.test_file for m in _affected(indexed, 10, files).matches}


def test_an_instance_storing_its_own_method_widens(tmp_path: Path) -> None:
    # Some object stores its own ``write``: ``w.write`` may be another object's method, anywhere.
    files = {**FILES, "tests/test_local.py": _HEAD + "def test_local():\n    w = Loud()\n    w.write = Fancy().write\n"
             "    assert w.write('a')\n"}
    with indexed_repo(tmp_path / "repo", files) as indexed:
        assert "tests/test_local.py" in {m.test_file for m in _affected(indexed, 15, files).matches}
