"""A module move takes the packaging entry points naming the module along: ``flask = "flask.cli:main"`` in
``[project.scripts]`` stayed as it was (not even listed) while the preview claimed full coverage, and the installed
console script failed to load."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.refactor_builders import refactor_env

FILES = {
    "pkg/__init__.py": "",
    "pkg/cli.py": "def main():\n    print('cli ran')\n",
    "pyproject.toml": ('[project]\nname = "pkg"\nversion = "1"\n\n[project.scripts]\npkg-cli = "pkg.cli:main"\n\n'
                       '[tool.notes]\nmodules = ["pkg.cli"]\n'),
    "setup.cfg": "[options.entry_points]\nconsole_scripts =\n    pkg-cli = pkg.cli:main\n",
}
LOAD = ("import tomllib, configparser\nfrom importlib.metadata import EntryPoint\n"
        "value = tomllib.load(open('pyproject.toml', 'rb'))['project']['scripts']['pkg-cli']\n"
        "EntryPoint('pkg-cli', value, 'console_scripts').load()()\n"
        "cfg = configparser.ConfigParser()\ncfg.read('setup.cfg')\n"
        "name, _, value = cfg['options.entry_points']['console_scripts'].strip().partition(' = ')\n"
        "EntryPoint(name, value, 'console_scripts').load()()\n")


def _load(root: Path) -> str:
    proc = subprocess.run([sys.executable, "-c", LOAD], cwd=root, capture_output=True, text=True, check=False,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_module_move_rewrites_the_entry_points_naming_it(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        assert _load(env.root) == "cli ran\ncli ran\n"
        preview = env.service.move("pkg/cli.py", "pkg/commands.py")
        edits = {(e.path, e.line): (e.certainty, e.reason) for e in preview.edits}
        assert edits[("pyproject.toml", 6)] == ("medium", "entry_point")
        assert edits[("setup.cfg", 3)] == ("medium", "entry_point")
        assert edits[("pyproject.toml", 9)] == ("low", "packaging")  # named, not an entry point: proposed
        env.service.apply(preview.refactor_id)
        assert 'pkg-cli = "pkg.commands:main"' in env.read("pyproject.toml")
        assert 'modules = ["pkg.cli"]' in env.read("pyproject.toml")
        assert _load(env.root) == "cli ran\ncli ran\n"
