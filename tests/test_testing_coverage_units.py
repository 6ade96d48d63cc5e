"""``testing/coverage_units.py`` over the real structural index: which part of a file each line and each code
object Python compiles belongs to, and what an edit changes (a function body, or code that runs at import)."""

from __future__ import annotations

import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.index.service import IndexService
from codeplane.testing.coverage_units import Change, FileUnits, compare, file_units, index_defs
from tests.builders import indexed_repo

SOURCE = (
    "import functools\n"                                  # 1
    "\n"                                                  # 2
    "LIMIT = 3\n"                                         # 3
    "\n"                                                  # 4
    "\n"                                                  # 5
    "@functools.lru_cache\n"                              # 6
    "def cached(x,\n"                                     # 7
    "           y=LIMIT):\n"                              # 8
    "    # a comment in the body\n"                       # 9
    "    return [i for i in range(x)]\n"                  # 10
    "\n"                                                  # 11
    "\n"                                                  # 12
    "def outer(x):\n"                                     # 13
    "    def inner(y=x):\n"                               # 14
    "        return y + 1\n"                              # 15
    "    return inner() + (lambda: 2)()\n"               # 16
    "\n"                                                  # 17
    "\n"                                                  # 18
    "class Shape:\n"                                      # 19
    "    sides = 4\n"                                     # 20
    "\n"                                                  # 21
    "    @property\n"                                     # 22
    "    def area(self):\n"                               # 23
    "        return self.sides * 2\n"                     # 24
)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService]]:
    files = {"pkg/__init__.py": "", "pkg/shapes.py": SOURCE}
    with indexed_repo(tmp_path_factory.mktemp("units") / "repo", files) as indexed:
        yield indexed


def _units(repo: Path, index: IndexService, text: str) -> FileUnits:
    (repo / "pkg/shapes.py").write_text(text)
    index.refresh_paths(["pkg/shapes.py"])
    with index.read_connection() as conn:
        found = index_defs(conn, "pkg/shapes.py")
    assert found is not None
    units = file_units(found[1], text)
    assert units is not None
    return units


def test_lines_belong_to_the_innermost_function_body_or_to_import_time(
        indexed: tuple[Path, IndexService]) -> None:
    repo, index = indexed
    units = _units(repo, index, SOURCE)
    owners = {line: units.owner(line) for line in range(1, 25)}
    assert {line for line, owner in owners.items() if owner is None} >= {1, 3, 6, 7, 8, 13, 19, 20, 22, 23}
    assert owners[10] == "pkg.shapes.cached"
    assert owners[14] == owners[16] == "pkg.shapes.outer", "a nested def's header runs in the enclosing body"
    assert owners[15] == "pkg.shapes.outer.inner"
    assert owners[24] == "pkg.shapes.Shape.area"


def test_every_code_object_python_compiles_maps_to_its_unit(indexed: tuple[Path, IndexService]) -> None:
    repo, index = indexed
    units = _units(repo, index, SOURCE)
    found: dict[tuple[str, int], str | None] = {}
    todo = [compile(SOURCE, "pkg/shapes.py", "exec")]
    while todo:
        code = todo.pop()
        todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        found[(code.co_name, code.co_firstlineno)] = units.unit_of_code(
            code.co_firstlineno, code.co_name, bool(code.co_flags & 0x1))
    assert found[("<module>", 1)] is None and found[("Shape", 19)] is None
    assert found[("cached", 6)] == "pkg.shapes.cached", "a decorated function's code starts at its decorator"
    assert found[("outer", 13)] == "pkg.shapes.outer" and found[("inner", 14)] == "pkg.shapes.outer.inner"
    assert found[("<lambda>", 16)] == "pkg.shapes.outer"
    assert found[("area", 22)] == "pkg.shapes.Shape.area"
    comprehension = [unit for (name, _), unit in found.items() if name == "<listcomp>"]
    assert comprehension in ([], ["pkg.shapes.cached"])  # inlined since Python 3.12


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("return self.sides * 2", "return self.sides * 3", Change(False, frozenset({"pkg.shapes.Shape.area"}))),
    ("        return y + 1", "        return y + 2", Change(False, frozenset({"pkg.shapes.outer.inner"}))),
    ("# a comment in the body", "# another comment", Change(False)),
    ("import functools\n", "import functools\n\n# moved down\n", Change(False)),
    ("y=LIMIT", "y=LIMIT + 1", Change(True, why="code that runs at import changed")),
    ("@functools.lru_cache\n", "", Change(True, why="code that runs at import changed")),
    ("LIMIT = 3", "LIMIT = 4", Change(True, why="code that runs at import changed")),
    ("    sides = 4\n", "    sides = 4\n\n    def extra(self):\n        return 1\n",
     Change(True, why="code that runs at import changed")),
    ("    def inner(y=x):", "    def inner(y=x + 1):", Change(False, frozenset({"pkg.shapes.outer"}))),
])
def test_an_edit_changes_function_bodies_or_code_that_runs_at_import(
        indexed: tuple[Path, IndexService], old: str, new: str, expected: Change) -> None:
    repo, index = indexed
    before = _units(repo, index, SOURCE)
    assert old in SOURCE
    after = _units(repo, index, SOURCE.replace(old, new))
    assert compare(FileUnits.decode(before.encode()) or before, after) == expected
    assert compare(before, None).import_time, "unknown current units are never assumed unchanged"
