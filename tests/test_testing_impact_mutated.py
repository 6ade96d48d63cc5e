"""A module-level statement that only mutates a function's object selects no extra tests (issue 22).

flask's ``cli.py`` ends ``run_command.params.insert(0, _debug_option)``: the list of a click command's options
gains one. The walk read it as ``_debug_option`` storing ``run_command``, then as module-level code using that
variable, and fell back to every importer of ``flask.cli``: a change anywhere ``run_command`` reaches
(``find_best_app``, ``ScriptInfo.load_app``) selected all 27 test files, where 1 to 3 fail. Growing a list held
by a function's object runs nothing of the function; calling through the object (``f.callback(...)``,
``f.__wrapped__(...)``) does, and still falls back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.index.service import IndexService
from codeplane.testing import ImpactIndex, ImpactResult
from tests.builders import indexed_repo

DECO = ("def command(f):\n"
        "    f.params = []\n"
        "    f.callback = f\n"
        "    return f\n")
CLI = ("from pkg.deco import command\n"        # 1
       "\n\n"
       "def find_app(name):\n"                 # 4
       "    return name.upper()\n"             # 5
       "\n\n"
       "@command\n"                            # 8
       "def run_command(name):\n"              # 9
       "    return find_app(name)\n"           # 10
       "\n\n"
       "_debug_option = object()\n"            # 13
       "run_command.params.insert(0, _debug_option)\n"
       "run_command.params.append(_debug_option)\n")
CALLED = CLI.replace("run_command.params.append(_debug_option)\n", "run_command.callback('warm')\n")
FILES: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/deco.py": DECO,
    "src/pkg/cli.py": CLI,
    "src/pkg/called.py": CALLED,
    "src/pkg/other.py": "def other():\n    return 1\n",
    "tests/test_cli.py": "from pkg.cli import run_command\n\n\ndef test_run():\n    assert run_command('a') == 'A'\n",
    "tests/test_called.py": "from pkg import called\n\n\ndef test_run():\n    assert called.run_command('a') == 'A'\n",
    "tests/test_other.py": ("from pkg import cli, called\nfrom pkg.other import other\n\n\n"
                            "def test_other():\n    assert other() == 1 and cli and called\n"),
}
TESTS = sorted(p for p in FILES if p.rsplit("/", 1)[-1].startswith("test_"))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService]]:
    with indexed_repo(tmp_path_factory.mktemp("mutated") / "repo", FILES) as indexed:
        yield indexed


def _files(repo: tuple[Path, IndexService], path: str, line: int) -> set[str]:
    root, index = repo
    result: ImpactResult = ImpactIndex(index.read_connection).affected(
        [path], TESTS, ranges={path: [(line, line)]}, read_lines=lambda rel: (root / rel).read_text().splitlines())
    return {m.test_file for m in result.matches}


def test_growing_a_list_a_function_object_holds_at_import_selects_only_the_callers(
        repo: tuple[Path, IndexService]) -> None:
    assert _files(repo, "src/pkg/cli.py", 5) == {"tests/test_cli.py"}


def test_calling_through_the_function_object_at_import_still_selects_every_importer(
        repo: tuple[Path, IndexService]) -> None:
    assert _files(repo, "src/pkg/called.py", 5) == {"tests/test_called.py", "tests/test_other.py"}
