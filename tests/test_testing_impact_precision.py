"""Rules that keep symbol-level impact selection sharp where a use cannot run the changed code (issue 22): what
``from m import name`` binds, what a module-level variable bound to a literal is at import time, which code written
into a string a test runs, which instance a marked test method's ``self`` is. Each case also shows the use that must
still select."""

from __future__ import annotations

from pathlib import Path

from codeplane.testing import ImpactIndex
from codeplane.testing.line_cache import LineCache
from tests.builders import indexed_repo


def _cases(root: Path, index: object, path: str, line: int, tests: list[str]) -> set[str]:
    result = ImpactIndex(index.read_connection).affected(  # type: ignore[attr-defined]
        [path], tests, ranges={path: [(line, line)]}, read_lines=lambda rel: (root / rel).read_text().splitlines())
    return {n for m in result.matches for n in m.node_ids}


REEXPORT: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "from .api import get\n\n\ndef fetch():\n    return api.get()\n",
    "src/pkg/api.py": "def get():\n    return 1\n",                                  # 2: get's body
    "src/pkg/certs.py": "WHERE = 'here'\n",
    # ``from . import certs`` imports the package but binds ``certs``: ``headers.get`` is no ``pkg.get``.
    "src/pkg/utils.py": "from . import certs\n\n\ndef encoding(headers):\n    return headers.get('type')\n",
    # ``import pkg`` binds the package: ``module.get`` may be ``pkg.get``.
    "src/pkg/loose.py": "import pkg\n\n\ndef call(module):\n    return module.get()\n",
    "tests/test_utils.py": (
        "from pkg.utils import encoding\n\n\ndef test_encoding():\n    assert encoding({}) is None\n"),
    "tests/test_loose.py": "from pkg.loose import call\n\n\ndef test_call():\n    assert call(object) is None\n",
    "tests/test_fetch.py": "import pkg\n\n\ndef test_fetch():\n    assert pkg.fetch() == 1\n",
}


def test_a_from_import_binds_the_name_not_the_module_it_names(tmp_path: Path) -> None:
    """``x.get`` is the module function ``pkg.get`` only where ``x`` can be a module holding it. ``from . import
    certs`` binds ``certs``: ``headers.get`` there is not it. ``import pkg`` binds the package, and in the package
    itself ``from .api import get`` binds ``api`` too: both still select."""
    with indexed_repo(tmp_path / "repo", REEXPORT) as (root, index):
        cases = _cases(root, index, "src/pkg/api.py", 2,
                       ["tests/test_fetch.py", "tests/test_loose.py", "tests/test_utils.py"])
    assert cases == {"tests/test_fetch.py::test_fetch", "tests/test_loose.py::test_call"}


LITERALS: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/bar.py": "class ProgressBar:\n    def update(self, n):\n        return n\n\n\nBAR = ProgressBar()\n",  # 3
    # At import time a module-level set is a set: its ``update`` is no ``ProgressBar.update``.
    "tests/test_imports.py": (
        "import pkg.bar\n\nALLOWED = {'a'}\nALLOWED.update(['b'])\n\n\n"
        "def test_allowed():\n    assert 'b' in ALLOWED\n"),
    # In a function another module may have rebound it: ``SEEN`` is patched by a dotted path (``KEPT`` by nothing);
    # a ``global`` statement may rebind ``BAR``.
    "tests/test_bar.py": (
        "from pkg.bar import ProgressBar\n\nSEEN = []\nKEPT = []\nBAR = []\n\n\n"
        "def rebind():\n    global BAR\n    BAR = ProgressBar()\n\n\n"
        "def test_seen():\n    SEEN.update(1)\n\n\n"
        "def test_kept():\n    KEPT.update(1)\n\n\n"
        "def test_plain(monkeypatch):\n    monkeypatch.setattr(\"tests.test_bar.SEEN\", ProgressBar())\n\n\n"
        "rebind()\nBAR.update(1)\n"),
}


def test_a_module_variable_bound_to_a_literal_is_that_literal_at_import_time(tmp_path: Path) -> None:
    """``ALLOWED.update(...)`` at module level, ``ALLOWED`` bound only to a set display: a set's ``update``, so the
    test module is not selected whole for a change in ``ProgressBar.update``. Inside a test the same spelling
    counts when some code may rebind the name from outside (``SEEN``: a ``monkeypatch.setattr`` of its dotted path),
    not otherwise (``KEPT``); an import-time use of a variable a ``global`` statement rebinds selects the file."""
    with indexed_repo(tmp_path / "repo", LITERALS) as (root, index):
        assert _cases(root, index, "src/pkg/bar.py", 3, ["tests/test_imports.py"]) == set()
        assert _cases(root, index, "src/pkg/bar.py", 3, ["tests/test_bar.py"]) == {"tests/test_bar.py"}
    # A name an import may bind as well is not only a literal.
    imported = {**LITERALS, "tests/test_imports.py": (
        "try:\n    from pkg.bar import BAR as CHOSEN\nexcept ImportError:\n    CHOSEN = []\nCHOSEN.update(1)\n\n\n"
        "def test_chosen():\n    assert CHOSEN\n")}
    with indexed_repo(tmp_path / "imported", imported) as (root, index):
        assert _cases(root, index, "src/pkg/bar.py", 3, ["tests/test_imports.py"]) == {"tests/test_imports.py"}
    unbound = {**LITERALS, "tests/test_bar.py": LITERALS["tests/test_bar.py"].replace("rebind()\nBAR", "SEEN")}
    with indexed_repo(tmp_path / "again", unbound) as (root, index):
        assert _cases(root, index, "src/pkg/bar.py", 3, ["tests/test_bar.py"]) == {"tests/test_bar.py::test_seen"}


STRINGS: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "from pkg.out import echo\n",
    "src/pkg/out.py": "def echo(x):\n    return x\n",                            # 2: echo's body
    # ``import pkg`` on a line of its own inside a string, run in a subprocess (click's test_light_imports).
    "tests/test_sub.py": (
        "import subprocess\nimport sys\n\n"
        'CODE = """\\\nimport builtins\nreal = builtins.__import__\nimport pkg\npkg.echo(1)\n"""\n\n\n'
        "def test_sub():\n    subprocess.run([sys.executable, '-c', CODE], check=True)\n"),
    # Code written over several implicitly concatenated literals; a real import statement is no string.
    "tests/test_written.py": (
        "import pkg\n\n\ndef test_written(tmp_path):\n    (tmp_path / 'm.py').write_text(\n"
        "        'import os\\n'\n        'import pkg\\n'\n        'pkg.echo(1)\\n'\n    )\n\n\n"
        "def test_plain():\n    assert pkg\n"),
}


def test_code_written_on_a_line_of_its_own_in_a_string_selects_its_test(tmp_path: Path) -> None:
    """``import pkg`` on a line of its own in a multi-line string (no import statement of the file) is code the
    test runs (click's ``test_light_imports`` pipes such a string into a subprocess): the file is selected for a
    change in ``pkg``, as a string that starts with the import is. ``import pkg`` as the file's own statement
    selects nothing by itself."""
    tests = ["tests/test_sub.py", "tests/test_written.py"]
    with indexed_repo(tmp_path / "repo", STRINGS) as (root, index):
        assert _cases(root, index, "src/pkg/out.py", 2, tests) == {
            "tests/test_sub.py", "tests/test_written.py::test_written"}


def test_code_written_in_a_string_is_rescanned_once_its_file_changes(tmp_path: Path) -> None:
    """The scans of test files for code in strings outlive an epoch (an edit elsewhere need not rescan 800 test
    files); a test file that changes is scanned again: one that starts writing ``import pkg`` is selected."""
    files = {**STRINGS, "tests/test_later.py": "def test_later():\n    assert True\n"}
    tests = ["tests/test_later.py"]
    with indexed_repo(tmp_path / "repo", files) as (root, index):
        impact, lines = ImpactIndex(index.read_connection), LineCache(root).lines

        def selected() -> set[str]:
            result = impact.affected(["src/pkg/out.py"], tests, ranges={"src/pkg/out.py": [(2, 2)]},
                                     read_lines=lines)
            return {n for m in result.matches for n in m.node_ids}

        assert selected() == set()
        (root / "tests/test_later.py").write_text(
            "import subprocess\nimport sys\n\n\ndef test_later():\n"
            "    subprocess.run([sys.executable, '-c', 'import pkg; pkg.echo(1)'], check=True)\n")
        index.refresh_paths(["tests/test_later.py"])
        assert selected() == {"tests/test_later.py::test_later"}


MARKS: dict[str, str] = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    # Reading ``__dict__`` stores no attribute: a ``Box`` has no ``get`` but its class's.
    "src/pkg/box.py": (
        "class Box(dict):\n    def get(self, key, default=None):\n        return self.__dict__.get(key, default)\n"),
    "src/pkg/session.py": "class Session:\n    def get(self, url):\n        return url\n",        # 3: Session.get
    "tests/test_box.py": (
        "import pytest\n\nfrom pkg.box import Box\nfrom pkg.session import Session\n\n\n"
        "class TestBox:\n    @pytest.fixture(autouse=True)\n    def setup(self):\n        self.box = Box()\n\n"
        "    params = pytest.mark.parametrize('key', ['a', 'b'])\n\n"
        "    @params\n    def test_get(self, key):\n        assert self.box.get(key) is None\n\n"
        "    @pytest.mark.parametrize('key', ['a'])\n    def test_marked(self, key):\n"
        "        assert self.box.get(key) is None\n\n"
        "    def test_session(self):\n        assert Session().get('u') == 'u'\n"),
    # Another decorator may hand the method anything as ``self``.
    "tests/test_other.py": (
        "from pkg.box import Box\n\n\ndef deco(f):\n    return f\n\n\n"
        "class TestOther:\n    def setup_method(self):\n        self.other = Box()\n\n"
        "    @deco\n    def test_get(self):\n        assert self.other.get('a') is None\n"),
}


def test_a_pytest_mark_keeps_self_the_test_class_instance(tmp_path: Path) -> None:
    """``self.box.get(...)`` in a test method marked with ``pytest.mark.parametrize`` (directly, or through a name
    bound to the mark) is ``Box.get``: a mark hands back the method itself, so ``self`` is a ``TestBox`` whose
    ``box`` is always a ``Box``, and ``Session.get`` changing selects neither test. Under another decorator
    ``self`` may be anything: that test is selected."""
    with indexed_repo(tmp_path / "repo", MARKS) as (root, index):
        cases = _cases(root, index, "src/pkg/session.py", 3, ["tests/test_box.py", "tests/test_other.py"])
    assert cases == {"tests/test_box.py::TestBox::test_session", "tests/test_other.py::TestOther::test_get"}
