"""Python renames at their edges: forward references (a quoted annotation is code that type checkers and
``typing.get_type_hints`` evaluate, so a rename changes the names in it; ``Literal``'s values and ``Annotated``'s
metadata stay), and doc mentions that must not hold back applying the code's edits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.refactor_builders import refactor_env

FILES = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": (
        "from typing import Annotated, Literal, Optional\n"
        "\n"
        "\n"
        "class Widget:\n"
        "    kind: Literal['Widget'] = 'Widget'\n"
        "\n"
        "    def clone(self) -> \"Widget\":\n"
        "        return Widget()\n"
        "\n"
        "    def parent(self) -> Optional['Widget']:\n"
        "        return None\n"
        "\n"
        "    def kids(self, label: Annotated[str, 'Widget'] = '') -> \"list[Widget]\":\n"
        "        return []\n"
    ),
    "pkg/use.py": (
        "from typing import TYPE_CHECKING\n"
        "\n"
        "if TYPE_CHECKING:\n"
        "    from pkg.shapes import Widget\n"
        "\n"
        "\n"
        "def make(w: \"Widget | None\") -> 'Widget':\n"
        "    x: 'Widget' = w\n"
        "    return x\n"
    ),
}

CHECK = """
import typing
import pkg.shapes, pkg.use
from pkg.shapes import Gadget
for fn in (Gadget.clone, Gadget.parent, Gadget.kids):
    typing.get_type_hints(fn)
typing.get_type_hints(pkg.use.make, globalns={**vars(pkg.use), "Gadget": Gadget})
assert Gadget.kind == "Widget"
print("ok")
"""


def test_a_class_rename_changes_its_quoted_annotations_and_the_code_still_resolves_them(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename("pkg.shapes.Widget", "Gadget")
        assert preview.status == "ready"
        by_pos = {(e.path, e.line, e.column): (e.certainty, e.reason) for e in preview.edits}
        for quoted in [("pkg/shapes.py", 7, 24), ("pkg/shapes.py", 10, 34), ("pkg/shapes.py", 13, 66),
                       ("pkg/use.py", 7, 13), ("pkg/use.py", 7, 33), ("pkg/use.py", 8, 8)]:
            assert by_pos[quoted][0] == "high", (quoted, by_pos.get(quoted))
        for value in [("pkg/shapes.py", 5, 19), ("pkg/shapes.py", 5, 31), ("pkg/shapes.py", 13, 42)]:
            assert by_pos[value] == ("low", "string"), value
        env.service.apply(preview.refactor_id)
        shapes, use = env.read("pkg/shapes.py"), env.read("pkg/use.py")
        assert "kind: Literal['Widget'] = 'Widget'" in shapes and "Annotated[str, 'Widget']" in shapes
        assert "-> \"list[Gadget]\"" in shapes and "def make(w: \"Gadget | None\") -> 'Gadget':" in use
        run = subprocess.run([sys.executable, "-c", CHECK], check=False, cwd=env.root, capture_output=True, text=True)
        assert run.stdout.strip() == "ok", run.stderr


def test_low_doc_mentions_left_to_apply_docs_do_not_hold_back_apply_now(tmp_path: Path) -> None:
    """Every code edit high and two prose mentions below high (not applied by default: doc_sweep.auto_apply is off):
    ``apply: true`` answered "not applied: 2 doc edits below high confidence"."""
    files = {"app/__init__.py": "", "app/clock.py": "def tick():\n    return 1\n",
             "app/timer.py": ("from app.clock import tick\n\n\ndef run():\n    # we tick here, maybe\n"
                              "    return tick()\n"),
             "NOTES.md": "The tick of a clock.\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("app.clock.tick", "tock")
        assert preview.counts["low"] == 0 and preview.doc_edits.by_confidence.get("low")
        outcome = env.service.apply_when_certain(preview)
        assert not isinstance(outcome, str), outcome
        assert "return tock()" in env.read("app/timer.py") and "# we tick here" in env.read("app/timer.py")
        assert env.read("NOTES.md") == "The tick of a clock.\n"
