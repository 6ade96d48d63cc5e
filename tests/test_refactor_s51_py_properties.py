"""A property's ``@width.setter`` / ``@width.deleter`` names the property being renamed: the class body is one
namespace. Left behind (it was ``low other_binding`` while both ``def``s were ``high``), the class body raised
NameError when the module was imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.refactor_builders import refactor_env

FILES = {
    "pkg/__init__.py": "from .shapes import Box\n",
    "pkg/shapes.py": ("class Box:\n    def __init__(self, width):\n        self._width = width\n\n"
                      "    @property\n    def width(self):\n        return self._width\n\n"
                      "    @width.setter\n    def width(self, value):\n        self._width = value\n\n"
                      "    @width.deleter\n    def width(self):\n        self._width = 0\n\n"
                      "    def doubled(self):\n        width = 2\n        return self.width * width\n"),
    "use.py": "from pkg import Box\n\nb = Box(2)\nb.width = 3\nprint(b.width, b.doubled())\n",
}


def test_renaming_a_property_renames_its_setter_and_deleter_decorators(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename("pkg.shapes.Box.width", "size")
        edits = {(e.path, e.line, e.column): (e.certainty, e.reason) for e in preview.edits}
        assert edits[("pkg/shapes.py", 9, 5)][0] == "high"  # @width.setter
        assert edits[("pkg/shapes.py", 13, 5)][0] == "high"  # @width.deleter
        # a local of a method is not the class body's name
        assert edits.get(("pkg/shapes.py", 18, 8), ("low",))[0] == "low"
        env.service.apply(preview.refactor_id)
        shapes = env.read("pkg/shapes.py")
        assert "@size.setter" in shapes and "@size.deleter" in shapes and "width = 2" in shapes
        assert "b.size = 3" in env.read("use.py")
        proc = subprocess.run([sys.executable, "use.py"], cwd=env.root, capture_output=True, text=True,
                              check=False, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "3 6\n"
