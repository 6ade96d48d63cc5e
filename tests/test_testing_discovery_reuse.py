"""Discovery outlives an index epoch that only rewrote Python source that is no target, and only that."""

from __future__ import annotations

from pathlib import Path

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.testing import TestingService
from codeplane.testing.discovery import indexed_paths, written_since
from tests.builders import indexed_repo

FILES = {
    "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['src']\n",
    "src/shop/__init__.py": "",
    "src/shop/pricing.py": "def price(n):\n    return n\n",
    "tests/test_pricing.py": "from shop.pricing import price\n\n\ndef test_price():\n    assert price(1) == 1\n",
}


def _write(repo: Path, index: IndexService, path: str, text: str) -> None:
    (repo / path).write_text(text, encoding="utf-8")
    index.refresh_paths([path])


def test_discovery_is_kept_across_an_edit_that_cannot_change_it_and_redone_otherwise(tmp_path: Path) -> None:
    with indexed_repo(tmp_path / "repo", FILES) as (repo, index):
        layout = RepoLayout(repo)
        service = TestingService(repo, CodePlaneConfig().tests, layout, ArtifactStore(layout.artifacts_dir, 1),
                                 files_version=lambda: index.epoch,
                                 files_source=lambda: indexed_paths(index.read_connection),
                                 files_written_since=lambda epoch: written_since(index.read_connection, epoch))
        try:
            first = service.discovery()
            assert [t.target_id for t in first.targets] == ["tests/test_pricing.py"]
            before = index.epoch
            _write(repo, index, "src/shop/pricing.py", "def price(n):\n    return n * 1\n")  # a module
            assert written_since(index.read_connection, before) == ["src/shop/pricing.py"]
            assert service.discovery() is first
            # a test file: its size is its cost estimate
            _write(repo, index, "tests/test_pricing.py", FILES["tests/test_pricing.py"] + "\n# longer\n" * 400)
            second = service.discovery()
            assert second is not first
            assert second.targets[0].estimated_cost > first.targets[0].estimated_cost
            # a file added: nothing written since can be trusted
            added_at = index.epoch
            _write(repo, index, "tests/test_more.py", "def test_more():\n    pass\n")
            assert written_since(index.read_connection, added_at) is None
            third = service.discovery()
            assert [t.target_id for t in third.targets] == ["tests/test_more.py", "tests/test_pricing.py"]
            # a config file discovery reads
            _write(repo, index, "pyproject.toml", FILES["pyproject.toml"] + "testpaths = ['nowhere']\n")
            assert service.discovery().targets == ()
        finally:
            service.close()
