"""QA33 (1, 2) through the real server, on a small package shaped like attrs.

- ``pkg/__init__.pyi`` declares ``class Attribute`` with ``evolve`` while ``pkg/__init__.py`` re-exports the runtime
  class from ``pkg._make``: the stub's method and the runtime one are one rename target, whichever is named;
- a doc mention qualified by another owner (``pkg.evolve``, the module's function, while renaming the method
  ``Attribute.evolve``; ``Attribute.evolve`` while renaming the function), or a doctest's bare name while renaming a
  class member, is ``low``, which ``apply_docs`` leaves;
- the preview counts the doc edits ``apply_docs`` applies, as the apply then reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.builders import call, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {
    "pyproject.toml": "[project]\nname = 'pkg'\nversion = '0'\n",
    "src/pkg/__init__.py": "from pkg._funcs import evolve\nfrom pkg._make import Attribute\n\n"
                           "__all__ = ['Attribute', 'evolve']\n",
    "src/pkg/__init__.pyi": (
        "from typing import Any\n"
        "\n"
        "class Attribute:\n"
        "    name: str\n"
        "    def evolve(self, **changes: Any) -> Attribute: ...\n"
        "\n"
        "def evolve(inst: Any, **changes: Any) -> Any: ...\n"
    ),
    "src/pkg/_make.py": (
        "class Attribute:\n"
        "    def __init__(self, name):\n"
        "        self.name = name\n"
        "\n"
        "    # Don't use pkg.evolve since it wants an instance of a decorated class\n"
        "    def evolve(self, **changes):\n"
        '        """Copy this field, as `pkg.evolve` copies an instance."""\n'
        "        return Attribute(changes.get('name', self.name))\n"
        "\n"
        "\n"
        "def inherited(a: Attribute) -> Attribute:\n"
        "    return a.evolve(name='x')\n"
    ),
    "src/pkg/_funcs.py": (
        "def evolve(inst, **changes):\n"
        '    """A new instance with ``changes``; fields are copied with `Attribute.evolve`."""\n'
        "    return inst\n"
    ),
    "src/other/__init__.py": "",
    "src/other/model.py": (
        "class Attribute:\n"
        "    def evolve(self):\n"
        "        return self\n"
    ),
    "tests/test_pkg.py": (
        "from pkg import Attribute, evolve\n"
        "\n"
        "\n"
        "def test_evolve():\n"
        "    a = Attribute('a')\n"
        "    assert a.evolve(name='b').name == 'b'\n"
        "    assert evolve(a) is a\n"
    ),
    "docs/api.rst": (
        ".. autofunction:: pkg.evolve\n"
        "\n"
        "   >>> i2 = pkg.evolve(i1, y=3)\n"
        "\n"
        "`pkg.Attribute.evolve` copies one field.\n"
    ),
    "docs/examples.md": "```pycon\n>>> from pkg import evolve\n>>> i2 = evolve(i1)\n```\n",
}


def _edits(preview: dict[str, Any]) -> list[tuple[str, int, int, str]]:
    return sorted((e["path"], e["line"], e["column"], e["certainty"]) for e in preview["edits"])


async def test_stub_method_and_the_runtime_method_it_describes_are_one_target(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            runtime = await call(client, "refactor_rename", {"symbol": "pkg._make.Attribute.evolve",
                                                             "new_name": "evolved"})
            via_stub = await call(client, "refactor_rename", {"symbol": "pkg.Attribute.evolve",
                                                              "new_name": "evolved"})
            at_stub = await call(client, "refactor_rename", {"path": "src/pkg/__init__.pyi", "line": 5,
                                                             "new_name": "evolved"})
            # Another package's ``Attribute.evolve`` is a genuinely different method: still a decision, between
            # the two runtime methods only (the stub is no third candidate).
            ambiguous = await call(client, "refactor_rename", {"symbol": "Attribute.evolve", "new_name": "evolved"})
            assert [c["symbol"]["path"] for c in ambiguous["candidates"]] == ["src/other/model.py",
                                                                               "src/pkg/_make.py"]
            assert runtime["status"] == via_stub["status"] == at_stub["status"] == "ready"
            assert via_stub["symbol"]["qualified_name"] == "pkg._make.Attribute.evolve"
            assert _edits(via_stub) == _edits(at_stub) == _edits(runtime)
            assert {(path, line) for path, line, _, c in _edits(runtime) if c != "low"} == {
                ("src/pkg/__init__.pyi", 5), ("src/pkg/_make.py", 6), ("src/pkg/_make.py", 12),
                ("tests/test_pkg.py", 6)}
            await call(client, "refactor_apply", {"refactor_id": via_stub["refactor_id"]})
    assert "def evolved(self, **changes: Any)" in (repo / "src/pkg/__init__.pyi").read_text()
    made = (repo / "src/pkg/_make.py").read_text()
    assert "def evolved(self, **changes):" in made and "a.evolved(name='x')" in made
    assert "a.evolved(name='b')" in (repo / "tests/test_pkg.py").read_text()


async def test_doc_mentions_qualified_by_another_owner_are_not_applied(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            preview = await call(client, "refactor_rename", {"symbol": "pkg._make.Attribute.evolve",
                                                             "new_name": "evolved"})
            docs = preview["doc_edits"]
            # Ours: ``pkg.Attribute.evolve`` (docs/api.rst) and ``Attribute.evolve`` (_funcs.py). Another symbol's:
            # the module's function ``pkg.evolve`` (twice in docs/api.rst, a comment and a docstring) and the
            # doctest's bare ``evolve`` (module-level code, never a class member: docs/examples.md).
            assert docs["by_confidence"] == {"high": 2, "low": 6} and docs["applies"] == 2, docs
            applied = await call(client, "refactor_apply", {"refactor_id": preview["refactor_id"],
                                                            "apply_docs": True})
            assert applied["applied_doc_edits"] == docs["applies"]
    api = (repo / "docs/api.rst").read_text()
    assert api == FILES["docs/api.rst"].replace("`pkg.Attribute.evolve`", "`pkg.Attribute.evolved`")
    made = (repo / "src/pkg/_make.py").read_text()
    assert "# Don't use pkg.evolve since" in made and "as `pkg.evolve` copies" in made
    assert "with `Attribute.evolved`." in (repo / "src/pkg/_funcs.py").read_text()
    assert (repo / "docs/examples.md").read_text() == FILES["docs/examples.md"]


async def test_doc_mentions_of_a_function_through_its_reexporting_module_are_its_own(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            preview = await call(client, "refactor_rename", {"symbol": "pkg._funcs.evolve", "new_name": "evolve2"})
            await call(client, "refactor_apply", {"refactor_id": preview["refactor_id"], "apply_docs": True})
    # ``pkg`` re-exports the function: ``pkg.evolve`` is it. ``pkg.Attribute.evolve`` is a class's method.
    api = (repo / "docs/api.rst").read_text()
    assert api == FILES["docs/api.rst"].replace("pkg.evolve", "pkg.evolve2")
    made = (repo / "src/pkg/_make.py").read_text()
    assert "# Don't use pkg.evolve2 since" in made and "as `pkg.evolve2` copies" in made
    assert "with `Attribute.evolve`." in (repo / "src/pkg/_funcs.py").read_text()
    assert (repo / "docs/examples.md").read_text() == FILES["docs/examples.md"].replace("evolve", "evolve2")
