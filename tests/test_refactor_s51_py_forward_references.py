"""An attribute assigned from a parameter annotated with a forward reference (``ctx: t.Optional["Context"]``, as
click's ``OptionParser`` has) is typed by it: renaming ``Context.resilient_parsing`` left ``self.ctx.resilient_parsing``
``low unresolved_receiver`` and the default apply broke 21 click tests (AttributeError)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.refactor_builders import refactor_env

FILES = {
    "cpkg/__init__.py": "",
    "cpkg/core.py": ("from .parser import OptionParser\n\n\nclass Context:\n    def __init__(self):\n"
                     "        self.resilient_parsing = True\n\n    def parser(self):\n"
                     "        return OptionParser(self)\n\n\n"
                     "class Option:\n    resilient_parsing = 1\n"),
    "cpkg/parser.py": ("import typing as t\n\nif t.TYPE_CHECKING:\n    from .core import Context\n\n\n"
                       "class OptionParser:\n    def __init__(self, ctx: t.Optional[\"Context\"] = None) -> None:\n"
                       "        self.ctx = ctx\n\n    def parse(self):\n        if self.ctx is not None:\n"
                       "            return self.ctx.resilient_parsing\n        return False\n"),
    "main.py": "from cpkg.core import Context\n\nprint(Context().parser().parse())\n",
}


def test_an_attribute_typed_by_a_quoted_annotation_renames_its_members(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename("cpkg.core.Context.resilient_parsing", "lenient_parsing")
        edits = {(e.path, e.line): (e.certainty, e.reason) for e in preview.edits}
        assert edits[("cpkg/parser.py", 13)] == ("medium", "attribute_receiver")
        assert edits[("cpkg/core.py", 13)][0] == "low"  # Option's own attribute
        env.service.apply(preview.refactor_id)
        ran = subprocess.run([sys.executable, "main.py"], cwd=env.root, capture_output=True, text=True, check=False,
                             timeout=60)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout == "True\n"
