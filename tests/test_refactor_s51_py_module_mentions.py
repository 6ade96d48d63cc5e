"""A module's other mentions follow it as surely as the syntax says. Moving a module left
``mock.patch("pkg.shapes.area")`` and the chain ``pkg.shapes.Box`` through ``import pkg`` ``low`` (a rename and a
symbol move make the string ``medium``, a symbol move the chain ``high``): the default apply broke the tests.
Renaming a class left ``Box(4)`` under ``from .shapes import *`` and ``shapes.Box`` in a file that also star-imports
``low``: NameError / AttributeError after the default apply."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.refactor_builders import refactor_env

FILES = {
    "pkg/__init__.py": "from .shapes import Box, area\n",
    "pkg/shapes.py": ("class Box:\n    def __init__(self, width):\n        self.width = width\n\n\n"
                      "def area(box):\n    return box.width * box.width\n"),
    "pkg/usestar.py": "from .shapes import *  # noqa: F403\n\n\ndef make_star():\n    return Box(4)  # noqa: F405\n",
    "pkg/helpers.py": ("from .shapes import *  # noqa: F403\nfrom . import shapes\n\n\n"
                       "def big_box():\n    return shapes.Box(10)\n"),
    "check.py": ("from unittest import mock\n\nimport pkg\nfrom pkg.helpers import big_box\n"
                 "from pkg.usestar import make_star\n\n"
                 "with mock.patch(\"pkg.shapes.area\", return_value=7):\n    import pkg.shapes as s\n"
                 "    patched = s.area(pkg.shapes.Box(1))\n"
                 "print(patched, make_star().width, big_box().width, 'see pkg.shapes')\n"),
}
OUTPUT = "7 4 10 see pkg.shapes\n"


def _run(root: Path) -> str:
    proc = subprocess.run([sys.executable, "check.py"], cwd=root, capture_output=True, text=True, check=False,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_module_move_rewrites_its_dotted_path_strings_and_attribute_chains(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        assert _run(env.root) == OUTPUT
        preview = env.service.move("pkg/shapes.py", "pkg/geo/shapes.py")
        edits = {(e.path, e.line, e.column): (e.certainty, e.reason) for e in preview.edits}
        assert edits[("check.py", 7, 17)] == ("medium", "dotted_path_string")
        assert edits[("check.py", 9, 21)] == ("high", "module_reference")
        assert edits[("check.py", 10, 56)] == ("low", "string")  # prose in a string: not a dotted path
        env.service.apply(preview.refactor_id)
        check = env.read("check.py")
        assert 'mock.patch("pkg.geo.shapes.area"' in check and "s.area(pkg.geo.shapes.Box(1))" in check
        assert _run(env.root) == OUTPUT


def test_a_class_rename_renames_uses_bound_by_a_star_import(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename("pkg.shapes.Box", "Crate")
        edits = {(e.path, e.line): (e.certainty, e.reason) for e in preview.edits}
        assert edits[("pkg/usestar.py", 5)] == ("medium", "star_import")
        assert edits[("pkg/helpers.py", 6)][0] == "high"  # ``shapes.Box`` though the star might bind ``shapes``
        env.service.apply(preview.refactor_id)
        assert "return Crate(4)" in env.read("pkg/usestar.py")
        assert "shapes.Crate(10)" in env.read("pkg/helpers.py")
        assert _run(env.root) == OUTPUT
