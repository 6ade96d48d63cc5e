"""QA51 #1: a symbol/definitions/references cursor continued after its page's file changed must be refused (1005),
as lexical pages are: its hits carry the first page's line numbers, and a snippet read from the new text paired
``qa_fn3``'s id with a ``return`` line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.config import IndexConfig
from codeplane.core.errors import CodePlaneError
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.index.structural.service import StructuralService, SymbolRequest
from tests.builders import make_repo

SOURCE = ("def qa_fn1():\n    return 1\n\n\ndef qa_fn2():\n    return qa_fn1()\n\n\n"
          "def qa_fn3():\n    return qa_fn1()\n\n\nclass K:\n    def qa_fn1(self):\n        return 2\n")


@pytest.fixture
def structural(tmp_path: Path) -> Iterator[tuple[Path, IndexService, StructuralService]]:
    root = make_repo(tmp_path / "repo", {"mod.py": SOURCE, "other.py": "from mod import qa_fn1\n\nqa_fn1()\n"})
    service = IndexService(root, RepoLayout(root), IndexConfig(watch=False))
    service.register_indexer(StructuralIndexer())
    service.start()
    try:
        assert service.wait_ready(60), service.status()
        yield root, service, StructuralService(service, root, RepoLayout(root).index_db)
    finally:
        service.stop()


@pytest.mark.parametrize("mode", ["symbol", "definitions", "references"])
def test_a_later_page_of_a_changed_file_is_refused(structural: tuple[Path, IndexService, StructuralService],
                                                   mode: str) -> None:
    root, index, symbols = structural
    request = SymbolRequest(mode=mode, query="qa_fn" if mode == "symbol" else "qa_fn1")  # type: ignore[arg-type]
    first = symbols.search(request, limit=1)
    assert first.next_cursor is not None
    unchanged = symbols.search(request, limit=1, cursor=first.next_cursor)
    assert unchanged.hits, "a cursor whose files did not change still pages"
    # Lines inserted above everything (as an editor or a write would): the stored line numbers are now wrong.
    (root / "mod.py").write_text("import os\nimport re\nimport sys\n" + SOURCE)
    if mode == "symbol":
        index.refresh_paths(["mod.py"])  # seen by the index already (a write, the watcher) or not: both refuse
    with pytest.raises(CodePlaneError) as refused:
        symbols.search(request, limit=1, cursor=first.next_cursor)
    assert refused.value.code == 1005 and "changed since the cursor" in refused.value.message
    fresh = symbols.search(request, limit=10)
    assert all(snippet is not None and h.line > 3 for h, snippet in zip(fresh.hits, fresh.snippets, strict=True)
               if h.path == "mod.py")


def test_a_file_changed_off_the_page_does_not_refuse(structural: tuple[Path, IndexService, StructuralService]
                                                     ) -> None:
    root, index, symbols = structural
    request = SymbolRequest(mode="symbol", query="qa_fn")
    first = symbols.search(request, limit=1)
    assert first.next_cursor is not None
    (root / "other.py").write_text("x = 1\n")
    index.refresh_paths(["other.py"])
    assert symbols.search(request, limit=1, cursor=first.next_cursor).hits
