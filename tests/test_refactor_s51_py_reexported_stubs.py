"""A package stub's declaration of a function its runtime ``__init__`` re-exports from a private module is that
function's type description (README: a ``.pyi`` declaration is renamed with its definition). Renaming
``attr._funcs.assoc`` left ``def assoc`` in ``attr/__init__.pyi`` ``low other_binding`` while ``attrs/__init__.pyi``'s
``from attr import assoc as assoc`` was renamed: mypy then found no ``attr.assoc_changes``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.refactor_builders import refactor_env

FILES = {
    "lib/__init__.py": "from ._funcs import assoc, other\n\n__all__ = ['assoc', 'other']\n",
    "lib/__init__.pyi": ("from typing import Any\n\n\n"
                         "def assoc(inst: dict[str, Any], **changes: Any) -> dict[str, Any]: ...\n"
                         "def other() -> None: ...\n"),
    "lib/_funcs.py": ("def assoc(inst, **changes):\n    return dict(inst, **changes)\n\n\n"
                      "def other():\n    return None\n"),
    "lib2/__init__.pyi": "from lib import assoc as assoc\n",
    "lib2/__init__.py": "from lib import assoc\n",
    "uselib.py": "import lib\nfrom lib2 import assoc\n\nprint(lib.assoc({'a': 1}, b=2), assoc({}, c=3))\n",
}


def _mypy(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "uselib.py"], cwd=root,
                          capture_output=True, text=True, check=False, timeout=120)


def test_a_package_stub_declaration_of_a_reexported_function_is_renamed_with_it(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename("lib._funcs.assoc", "assoc_changes")
        edits = {(e.path, e.line): (e.certainty, e.reason) for e in preview.edits}
        assert edits[("lib/__init__.pyi", 4)] == ("high", "stub")
        assert not [e for e in preview.edits if e.certainty == "low"]
        env.service.apply(preview.refactor_id)
        assert "def assoc_changes(inst" in env.read("lib/__init__.pyi")
        assert "def other() -> None" in env.read("lib/__init__.pyi")
        checked = _mypy(env.root)
        assert checked.returncode == 0, checked.stdout
        ran = subprocess.run([sys.executable, "uselib.py"], cwd=env.root, capture_output=True, text=True,
                             check=False, timeout=60)
        assert ran.returncode == 0, ran.stderr


def test_a_stub_of_another_function_of_the_same_name_stays(tmp_path: Path) -> None:
    # ``other/__init__.pyi`` declares its own ``assoc`` (its runtime module defines it): not the renamed one
    files = {**FILES, "other/__init__.py": "def assoc(x):\n    return x\n",
             "other/__init__.pyi": "def assoc(x: int) -> int: ...\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("lib._funcs.assoc", "assoc_changes")
        assert not [e for e in preview.edits if e.path.startswith("other/") and e.certainty != "low"]
