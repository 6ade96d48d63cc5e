"""``map_repo``'s per-section cache (``map_cache.py``): after every kind of edit, a long-lived service answers
exactly what a fresh one computes from scratch at the same epoch (real git repository, real index)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.index.structural.service import SECTIONS, StructuralService
from tests.builders import make_repo, write_files

FILES = {
    "pyproject.toml": "[project]\nname = 'shop'\n[project.scripts]\nshop = 'shop.cli:main'\n",
    # "main" names a build's output, which the repository does not hold
    "package.json": '{"name": "web", "bin": {"web": "web/index.js"}, "main": "dist/web.js"}\n',
    "manage.py": "import sys\nimport django\n\n\ndef main():\n    return sys.argv\n",
    "shop/__init__.py": "from shop.core import Cart\n__all__ = ['Cart']\n",
    # ``nsp.nowhere`` names this repository's namespace package (never a dependency); ``ns`` only its first letters
    "shop/core.py": ("import requests\nimport nsp.nowhere\nimport ns\nfrom shop import util\n\n\n"
                     "class Cart:\n    pass\n"),
    "nsp/mod.py": "VALUE = 1\n",
    "shop/util.py": "import os\n\n\ndef helper():\n    return os.sep\n",
    "shop/cli.py": "from shop.util import helper\n\n\ndef main():\n    return helper()\n",
    "shop/deep/inner/leaf.py": "import numpy\n",
    "tests/test_core.py": "import pytest\nfrom shop.core import Cart\n\n\ndef test_cart():\n    assert Cart\n",
    "tests/test_old.py": "def test_old():\n    pass\n",
    # a ``main`` nested in a test, as click's tests define one to invoke: no entry point
    "tests/test_nested.py": "def test_cli():\n    def main():\n        pass\n\n    main()\n",
    "web/index.js": "const lib = require('./lib');\nimport React from 'react';\n",
    "web/lib.js": "export function helper(x) { return x; }\n",
    "docs/guide.md": "# Guide\n",
}
#: (include, depth, limit) asked before and after each edit, so every cached tree gets patched; no depth: a tree
#: folded to the limit, which opens the directories with most code first (a file turned text or binary reorders).
ASKS: tuple[tuple[tuple[str, ...], int | None, int], ...] = (
    ((), 1, 1000), ((), 2, 1000), ((), 3, 1000), (("structure",), 4, 1000), (("dependencies", "entry_points"), 3, 1000),
    (("languages", "test_layout"), 3, 1000), (("public_api", "contexts"), 2, 1000), (("structure",), None, 14))


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[Path, IndexService]]:
    root = make_repo(tmp_path / "repo", FILES)
    service = IndexService(root, RepoLayout(root), IndexConfig(watch=False))
    service.register_indexer(StructuralIndexer())
    service.start()
    try:
        assert service.wait_ready(60), service.status()
        yield root, service
    finally:
        service.stop()


def _answers(structural: StructuralService) -> str:
    out = []
    for include, depth, limit in ASKS:
        got = dataclasses.asdict(structural.map_repo(include, depth=depth, limit=limit))
        got.pop("next_cursor")
        out.append(got)
    return json.dumps(out, sort_keys=True, default=str)


def _edit(root: Path, service: IndexService, *, write: dict[str, str | bytes] | None = None,
          delete: tuple[str, ...] = (), rename: tuple[str, str] | None = None) -> None:
    touched = [*(write or {}), *delete]
    write_files(root, write or {})
    for path in delete:
        (root / path).unlink()
    if rename is not None:
        (root / rename[0]).rename(root / rename[1])
        touched += rename
    service.refresh_paths(touched)


EDITS: dict[str, dict[str, object]] = {
    "content, same paths": {"write": {"shop/util.py": "import os\nimport yaml\n\n\ndef helper():\n    return os\n\n"
                                                      "\ndef main():\n    pass\n"}},
    "content, one line more deep": {"write": {"shop/deep/inner/leaf.py": "import numpy\nimport scipy\n"}},
    "a script renamed in pyproject": {"write": {"pyproject.toml": "[project]\nname = 'shop'\n[project.scripts]\n"
                                                                  "shopper = 'shop.util:main'\n"}},
    "files added": {"write": {"shop/extra.py": "import attrs\n", "tests/test_extra.py": "def test_x():\n    pass\n"}},
    "a file deleted": {"delete": ("tests/test_old.py",)},
    "a module renamed (its importers no longer resolve)": {"rename": ("shop/util.py", "shop/helpers.py")},
    "code renamed to text": {"rename": ("shop/extra.py", "shop/extra.txt")},
    "a conventional entry file turned binary (its status changes, its path does not)":
        {"write": {"manage.py": b"\x00\x01\x02binary"}},
    "added and deleted at once": {"write": {"cli.py": "def main():\n    pass\n"}, "delete": ("manage.py",)},
}


def test_each_edit_leaves_the_cached_map_equal_to_a_fresh_one(index: tuple[Path, IndexService]) -> None:
    root, service = index
    cached = StructuralService(service, root, RepoLayout(root).index_db)
    before = _answers(cached)
    assert before == _answers(StructuralService(service, root, RepoLayout(root).index_db))
    for name, edit in EDITS.items():
        _edit(root, service, **edit)  # type: ignore[arg-type]
        after = _answers(cached)
        assert after != before, name  # every edit shows in the map: a cache that missed it would fail here
        assert after == _answers(StructuralService(service, root, RepoLayout(root).index_db)), name
        before = after


def test_entry_points_are_scripts_module_level_mains_and_entry_files(index: tuple[Path, IndexService]) -> None:
    root, service = index
    found = StructuralService(service, root, RepoLayout(root).index_db).map_repo(("entry_points",), depth=1,
                                                                                  limit=1000).entry_points
    assert sorted((e.path, e.qualified_name or "", e.evidence, e.indexed) for e in found) == [
        ("dist/web.js", "", "declared_script", False),
        ("manage.py", "", "conventional_file", True), ("manage.py", "manage.main", "main_function", True),
        ("shop/cli.py", "", "conventional_file", True), ("shop/cli.py", "shop.cli.main", "declared_script", True),
        ("shop/cli.py", "shop.cli.main", "main_function", True), ("web/index.js", "", "conventional_file", True),
        ("web/index.js", "", "declared_script", True)]


def test_a_content_edit_patches_line_counts_without_rebuilding_the_tree(index: tuple[Path, IndexService]) -> None:
    root, service = index
    cached = StructuralService(service, root, RepoLayout(root).index_db)
    first = cached.map_repo(("structure",), depth=2, limit=1000)
    _edit(root, service, write={"shop/core.py": FILES["shop/core.py"] + "\n\nVALUE = 1\n"})
    second = cached.map_repo(("structure",), depth=2, limit=1000)
    assert second.epoch > first.epoch
    lines = {n.path: n.line_count for n in second.tree}
    assert lines["shop/core.py"] == FILES["shop/core.py"].count("\n") + 3
    assert {n.path: n.line_count for n in first.tree}["shop/core.py"] == FILES["shop/core.py"].count("\n")
    fresh = StructuralService(service, root, RepoLayout(root).index_db).map_repo(("structure",), depth=2, limit=1000)
    assert second.tree == fresh.tree and second.file_count == fresh.file_count


def test_sections_asked_alone_match_those_asked_together(index: tuple[Path, IndexService]) -> None:
    root, service = index
    cached = StructuralService(service, root, RepoLayout(root).index_db)
    together = cached.map_repo((), depth=3, limit=1000)
    for section in SECTIONS:
        alone = cached.map_repo((section,), depth=3, limit=1000)
        field = {"structure": "tree", "entry_points": "entry_points"}.get(section, section)
        assert getattr(alone, field) == getattr(together, field), section


def test_dependencies_leave_out_this_repositorys_unresolved_modules_only(index: tuple[Path, IndexService]) -> None:
    root, service = index
    deps = StructuralService(service, root, RepoLayout(root).index_db).map_repo(("dependencies",), depth=1, limit=1)
    assert deps.dependencies is not None
    names = dict(deps.dependencies.external_modules)
    assert {"requests", "numpy", "ns", "react", "django"} <= set(names) and "nsp" not in names, names
