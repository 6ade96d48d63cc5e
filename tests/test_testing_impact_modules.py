"""Impact selection names modules as Python's import system does: namespace packages (PEP 420), ``src/``
layouts and import roots declared in ``pyproject.toml``. A module it cannot name is never ``complete``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.modules import python_names
from codeplane.testing import ImpactIndex, TestingService
from tests.builders import indexed_repo

# Shaped like flask 3.1.2: ``src/flask/sansio/`` has no ``__init__.py``.
FLASKISH: dict[str, str] = {
    "pyproject.toml": "[project]\nname = 'flaskish'\n\n[tool.pytest.ini_options]\npythonpath = ['src', 'lib']\n",
    "src/flask/__init__.py": "from .app import Flask as Flask\n",
    "src/flask/app.py": "from .sansio.app import App\n\n\nclass Flask(App):\n    pass\n",
    "src/flask/sansio/app.py": "from .scaffold import Scaffold\n\n\nclass App(Scaffold):\n    pass\n",
    "src/flask/sansio/scaffold.py": (
        "class Scaffold:\n    static_folder = None\n\n    @property\n    def has_static_folder(self):\n"
        "        return self.static_folder is not None\n"),
    "src/acme/plugins/foo/__init__.py": "def hello():\n    return 'hi'\n",
    "lib/tool.py": "def twice(x):\n    return 2 * x\n",
    "src/other/__init__.py": "try:\n    from ._speedups import fast\nexcept ImportError:\n    fast = None\n",
    "tests/test_static.py": ("import flask\n\n\ndef test_static():\n"
                             "    assert flask.Flask().has_static_folder is False\n"),
    "tests/test_plugin.py": "from acme.plugins.foo import hello\n\n\ndef test_hello():\n    assert hello() == 'hi'\n",
    "tests/test_tool.py": "from tool import twice\n\n\ndef test_twice():\n    assert twice(2) == 4\n",
}
TESTS = sorted(p for p in FLASKISH if p.startswith("tests/test_"))


@pytest.fixture(scope="module")
def flaskish(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService]]:
    with indexed_repo(tmp_path_factory.mktemp("nspkg") / "repo", FLASKISH) as indexed:
        yield indexed


def test_module_names_follow_the_import_system() -> None:
    packages = {"src/flask", "src/acme/plugins/foo"}
    assert python_names("src/flask/sansio/scaffold.py", packages)[0] == "flask.sansio.scaffold"
    assert python_names("src/acme/plugins/foo/__init__.py", packages)[0] == "acme.plugins.foo"
    assert python_names("lib/tool.py", set(), {"lib": ""})[0] == "tool"
    # a test file is importable as pytest imports it, and from the repository root
    assert python_names("tests/test_static.py", packages) == ["test_static", "tests.test_static"]
    assert python_names("src/flask/bad-name/x.py", packages) == []


def test_a_namespace_package_module_selects_its_tests(flaskish: tuple[Path, IndexService]) -> None:
    _, index = flaskish
    result = ImpactIndex(index.read_connection).affected(["src/flask/sansio/scaffold.py"], TESTS)
    assert result.changed_modules == ("flask.sansio.scaffold",)
    assert result.confidence == "complete"
    assert result.test_files == ("tests/test_static.py",)
    plugin = ImpactIndex(index.read_connection).affected(["src/acme/plugins/foo/__init__.py"], TESTS)
    assert plugin.changed_modules == ("acme.plugins.foo",) and plugin.test_files == ("tests/test_plugin.py",)
    tool = ImpactIndex(index.read_connection).affected(["lib/tool.py"], TESTS)
    assert tool.changed_modules == ("tool",) and tool.test_files == ("tests/test_tool.py",)


def test_an_unnameable_python_file_is_partial(flaskish: tuple[Path, IndexService]) -> None:
    _, index = flaskish
    result = ImpactIndex(index.read_connection).affected(["src/flask/bad-name/x.py"], TESTS)
    assert result.confidence == "partial" and result.unresolved_files == ("src/flask/bad-name/x.py",)


def test_an_import_of_the_package_that_names_no_file_is_partial(flaskish: tuple[Path, IndexService]) -> None:
    _, index = flaskish
    result = ImpactIndex(index.read_connection).affected(["src/other/__init__.py"], TESTS)
    assert result.confidence == "partial"
    assert result.unresolved_imports == ("src/other/__init__.py imports other._speedups",)
    assert "resolve to no file" in result.hint


def test_a_fault_in_a_namespace_package_fails_only_selected_tests(
        flaskish: tuple[Path, IndexService], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    repo, index = flaskish
    layout = RepoLayout(repo)
    service = TestingService(repo, CodePlaneConfig().tests.model_copy(update={"retry_failed": False}), layout,
                             ArtifactStore(layout.artifacts_dir, 1), impact=ImpactIndex(index.read_connection))
    path = repo / "src/flask/sansio/scaffold.py"
    original = path.read_text()
    try:
        selected = set(service.tests_for(["src/flask/sansio/scaffold.py"]))
        path.write_text(original.replace("return self.static_folder", "raise RuntimeError('injected')\n"
                                         "        return self.static_folder"))
        record = service.start_run(["tests"])
        while not record.finished:
            record.wait(record.version, 1.0)
        failing = {r.target.target_id for r in record.snapshot().targets if r.outcome in ("failed", "error")}
    finally:
        path.write_text(original)
        service.close()
    assert failing == {"tests/test_static.py"}
    assert failing <= selected


def test_package_prefixes_are_the_key_up_to_each_dot() -> None:
    """The fast form agrees with the definition (the dotted parts joined up to each one) on random keys."""
    import random

    from codeplane.testing.impact_local import package_prefixes

    def by_definition(key: str) -> list[str]:
        if not key.startswith("py:"):
            return []
        parts = key[3:].split(".")
        return [f"py:{'.'.join(parts[:i])}" for i in range(1, len(parts))]

    assert package_prefixes("py:a.b.c") == ["py:a", "py:a.b"] and package_prefixes("js:a.b") == []
    rng = random.Random(7)
    for _ in range(20_000):
        key = rng.choice(["py:", "js:", "py", ""]) + "".join(rng.choice("ab.") for _ in range(rng.randint(0, 8)))
        assert package_prefixes(key) == by_definition(key), key
