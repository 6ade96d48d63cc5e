"""QA65 F2 and F4, the blast radius ``semantic_diff`` gives a move and a removal.

F2: between two commits (``target`` given) a move whose old module imports the name back was "breaking" with a
hint to rewrite imports that work: the re-export was looked for only in a work-tree diff. The old module is now read
as the target has it. F4: a removed class still used through ``from .k import K`` showed "0 same-name unresolved"
refs, and its removed ``__init__`` counted every unrelated ``__init__`` in the repository."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.analysis.service import SemanticDiffService
from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from tests.builders import ServerHandle, answer_text, git, make_repo, mcp_client, running_server, write_files

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def _commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD").stdout.strip()


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService, list[str]]]:
    """``f`` moved from ``pkg/a.py`` to ``pkg/b.py`` and imported back (commit 1), then the re-export dropped (2),
    and the work tree drops ``g``'s the same way: each revision's old module says whether it re-exports."""
    root = make_repo(tmp_path_factory.mktemp("qa65_f2") / "repo", {
        ".gitignore": ".codeplane/\n", "pkg/__init__.py": "",
        "pkg/a.py": "def f(x):\n    return x + 1\n\n\ndef g():\n    return 2\n",
        "pkg/use.py": "from .a import f, g\n\n\ndef h():\n    return f(1) + g()\n",
        "pkg/side.py": "from .b import VERSION\n"})
    first = git(root, "rev-parse", "HEAD").stdout.strip()
    write_files(root, {"pkg/a.py": "from .b import f, g  # noqa: F401\n",
                       "pkg/b.py": "VERSION = 1\n\n\ndef f(x):\n    return x + 1\n\n\ndef g():\n    return 2\n"})
    reexporting = _commit(root, "move f and g to b, re-export them from a")
    write_files(root, {"pkg/a.py": "from .b import g  # noqa: F401\n"})
    dropped = _commit(root, "a re-exports g only")
    write_files(root, {"pkg/a.py": ""})  # the work tree re-exports neither
    index = IndexService(root, RepoLayout(root), IndexConfig(watch=False))
    index.register_indexer(StructuralIndexer())
    index.start()
    assert index.wait_ready(60), index.status()
    try:
        yield root, index, [first, reexporting, dropped]
    finally:
        index.stop()


def test_a_range_diff_reads_the_re_export_in_the_target_commits_old_module(
        moved: tuple[Path, IndexService, list[str]]) -> None:
    root, index, (first, reexporting, dropped) = moved
    service = SemanticDiffService(root, index)
    page = service.diff(first, reexporting, limit=100)
    found = {c.qualified_name: c for c in page.changes}
    for name in ("f", "g"):
        assert (found[name].change, found[name].delta_tags) == ("moved", ("symbol_moved", "reexported")), found
        assert found[name].structural_severity == "non_breaking", found[name]
    assert "update the imports" not in page.agentic_hint, page.agentic_hint
    # At ``dropped`` the old module re-exports ``g`` only: ``f`` breaks its importers there.
    page = service.diff(first, dropped, limit=100)
    found = {c.qualified_name: c for c in page.changes}
    assert "reexported" in found["g"].delta_tags and "reexported" not in found["f"].delta_tags, found
    assert found["f"].structural_severity == "breaking", found["f"]


@pytest.fixture(scope="module")
def removed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """Class ``K`` deleted from ``pkg/k.py`` while ``pkg/k_use.py`` still raises it; other classes call
    ``__init__`` by name."""
    root = make_repo(tmp_path_factory.mktemp("qa65_f4") / "repo", {
        ".gitignore": ".codeplane/\n", "pkg/__init__.py": "",
        "pkg/k.py": "class K(TypeError):\n    def __init__(self, m):\n        self.m = m\n",
        "pkg/k_use.py": "from .k import K\n\n\ndef boom():\n    raise K('x')\n\n\ndef again():\n    return K('y')\n",
        "pkg/other.py": ("class O:\n    def __init__(self):\n        super().__init__()\n\n\n"
                         "class P(O):\n    def __init__(self):\n        super().__init__()\n"
                         "        self.__init__()\n")})
    (root / "pkg/k.py").write_text("")
    with running_server(root) as handle:
        yield handle


async def test_a_removed_class_counts_its_uses_through_imports_and_its_init_no_other_init(
        removed: ServerHandle) -> None:
    async with mcp_client(removed) as client:
        res = await client.call_tool("semantic_diff", {"paths": ["pkg/k.py"]})
    text = answer_text(res)
    lines = {line.split()[3]: line for line in text.splitlines() if "removed [symbol_removed]" in line}
    assert "refs: not in index, 2 proven, 0 strong through imports, 0 same-name unresolved" in lines["K(TypeError)"], \
        text
    assert "refs: not in index, 0 same-name unresolved" in lines["K.__init__(self,"], text
    assert "check references to 2 removed symbols: K (2 proven, 0 strong), K.__init__" in text, text
