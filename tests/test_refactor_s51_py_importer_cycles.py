"""A symbol move that rewrites an importer into an import cycle with the destination is refused (4009), as the
README promises for moves that make two modules import each other at import time. Moving ``click.utils.echo`` into
``termui.py`` rewrote ``exceptions.py`` to ``from .termui import echo`` while ``termui.py`` imports ``.exceptions``:
every edit was ``high`` and ``import click`` failed on the partially initialised module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError, ErrorCode
from tests.refactor_builders import refactor_env

FILES = {
    "pkg/__init__.py": "from .core import run\n",
    "pkg/utils.py": "def echo(msg):\n    print(msg)\n\n\ndef shout(msg):\n    print(msg.upper())\n",
    "pkg/exceptions.py": ("from .utils import echo\n\n\nclass Abort(Exception):\n"
                          "    def show(self):\n        echo('aborted')\n"),
    "pkg/termui.py": ("from .exceptions import Abort\n\n\ndef confirm(value):\n    if not value:\n"
                      "        raise Abort()\n    return value\n"),
    "pkg/formatting.py": "from .termui import confirm\n\n\ndef wrap(value):\n    return [confirm(value)]\n",
    "pkg/core.py": ("from .formatting import wrap\nfrom .termui import confirm\nfrom .utils import echo, shout\n\n\n"
                    "def run():\n    echo(confirm(1))\n    shout(str(wrap(2)))\n"),
    "pkg/later.py": "from .utils import shout\n\n\ndef loud():\n    shout('x')\n",
}


def _imports(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "import pkg; pkg.run()"], cwd=root, capture_output=True, text=True,
                          check=False, timeout=60)


def test_a_move_that_makes_a_rewritten_importer_and_the_destination_import_each_other_is_refused(
        tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        assert _imports(env.root).returncode == 0
        before = env.snapshot()
        with pytest.raises(CodePlaneError) as refused:
            env.service.move_symbol("pkg.utils.echo", "pkg/termui.py")
        assert refused.value.code == ErrorCode.REFACTOR_CIRCULAR_IMPORT.code
        assert refused.value.details["via"] == "pkg/exceptions.py"
        assert "pkg/exceptions.py" in str(refused.value) and "pkg/termui.py" in str(refused.value)
        assert env.snapshot() == before


def test_an_importer_the_destination_reaches_through_other_modules_is_warned_about(tmp_path: Path) -> None:
    # termui → exceptions → later, and later's ``from .utils import shout`` becomes ``from .termui import shout``
    files = {**FILES, "pkg/exceptions.py": "from .later import loud\n" + FILES["pkg/exceptions.py"]}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move_symbol("pkg.utils.shout", "pkg/termui.py")
        assert [w for w in preview.warnings if w.startswith("circular-import risk: pkg/later.py will import")]


def test_a_move_whose_importers_the_destination_does_not_import_is_not_refused(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.move_symbol("pkg.utils.shout", "pkg/formatting.py")
        assert preview.status == "ready" and not [w for w in preview.warnings if "circular" in w]
        env.service.apply(preview.refactor_id)
        assert _imports(env.root).returncode == 0
