"""A record class's field is a keyword of its constructor: renaming the field renames ``P(name=...)`` too
(``pyfields.py``). Each rename is applied and the code is run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.refactor_builders import refactor_env

FILES = {
    "pkg/__init__.py": "",
    "pkg/models.py": ("import dataclasses\nfrom typing import NamedTuple\n\n\n"
                      "@dataclasses.dataclass(\n    frozen=True,\n)\n"
                      "class Point:\n    name: str\n    x: int = 0\n\n\n"
                      "class Pair(NamedTuple):\n    name: str\n    y: int\n\n\n"
                      "class Plain:\n    name = 'plain'\n\n    def __init__(self, name: str) -> None:\n"
                      "        self.label = name\n"),
    "pkg/use.py": ("import dataclasses\n\nfrom pkg import models\nfrom pkg.models import Pair, Plain, Point\n\n\n"
                   "def build():\n    p = Point(name='a', x=1)\n    q = models.Point(\n        name='b',\n    )\n"
                   "    r = dataclasses.replace(p, name='c')\n"
                   "    return [p.name, q.name, r.x, Pair(name='d', y=2).name, Plain(name='e').label]\n\n\n"
                   "print(build())\n"),
}
OUTPUT = "['a', 'b', 1, 'd', 'e']\n"


def _run(root: Path) -> str:
    proc = subprocess.run([sys.executable, "-m", "pkg.use"], cwd=root, capture_output=True, text=True, check=False,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_dataclass_field_renames_its_constructor_keywords_and_proposes_its_copiers(tmp_path: Path) -> None:
    # ``Point(name='a')`` kept its keyword: the renamed dataclass raised TypeError (the sweep had set the keyword
    # aside as a bare name outside a class body, "never a member").
    with refactor_env(tmp_path / "repo", FILES) as env:
        assert _run(env.root) == OUTPUT
        preview = env.service.rename("Point.name", "title")
        edits = {(e.path, e.line): (e.certainty, e.reason) for e in preview.edits}
        assert edits[("pkg/use.py", 8)] == ("medium", "field_keyword")
        assert edits[("pkg/use.py", 10)] == ("medium", "field_keyword")  # ``models.Point(\n name='b'``
        assert edits[("pkg/use.py", 12)] == ("low", "copy_keyword")  # whose instance ``replace`` copies: unknown
        # ``Pair(name=...)`` and ``Plain(name=...)`` are other classes' keywords
        assert all(edits[k][0] == "low" for k in edits if k[0] == "pkg/use.py" and k[1] == 13 and
                   edits[k][1] not in ("annotated_receiver", "constructed_receiver"))
        copier = [e.edit_id for e in preview.edits if e.reason == "copy_keyword"]
        env.service.apply(preview.refactor_id, include=copier)
        use = env.read("pkg/use.py")
        assert "Point(title='a', x=1)" in use and "        title='b',\n" in use
        assert "replace(p, title='c')" in use and "Pair(name='d', y=2)" in use and "Plain(name='e')" in use
        assert _run(env.root) == OUTPUT


def test_a_named_tuple_field_renames_its_keyword_and_a_plain_class_keeps_its_parameter(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        pair = env.service.rename("Pair.name", "first")
        assert ("pkg/use.py", 13, "medium") in {(e.path, e.line, e.certainty) for e in pair.edits
                                               if e.reason == "field_keyword"}
        plain = env.service.rename("Plain.name", "kind")  # a class attribute: ``__init__``'s parameter is not it
        assert not [e for e in plain.edits if e.reason == "field_keyword"]
