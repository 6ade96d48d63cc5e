"""A test file named as a target that another program created or deleted a moment ago, before the watcher said
so (QA38): discovery follows the index's file table, so the new one answered 7005 naming another file and the
deleted one still ran. Targets named by file are reindexed first (D6). The index here has no watcher, so "a
moment ago" lasts the whole test; the testing service is wired to it as the server wires them."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core import config
from codeplane.core.artifacts import ArtifactStore
from codeplane.core.errors import CodePlaneError
from codeplane.core.layout import RepoLayout
from codeplane.testing import TestingService
from codeplane.testing.discovery import indexed_paths
from tests.builders import make_repo
from tests.index_helpers import running_index
from tests.testing_service import finish

pytestmark = pytest.mark.usefixtures("lean_pytest")

FILES = {
    "pytest.ini": "[pytest]\npythonpath = .\n",
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_old.py": "from calc import add\n\n\ndef test_old():\n    assert add(1, 1) == 2\n",
}


def test_test_files_created_or_deleted_a_moment_ago_are_seen(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    layout = RepoLayout(repo)
    with running_index(repo) as index:
        assert config.IndexConfig().watch and not index._pipeline.config.watch  # (no watcher: nothing else catches up)
        service = TestingService(repo, config.TestsConfig(workers=1), layout, ArtifactStore(layout.artifacts_dir, 8),
                                 files_version=lambda: index.epoch,
                                 files_source=lambda: indexed_paths(index.read_connection),
                                 refresh_files=index.refresh_if_changed)
        try:
            assert [t.target_id for t in service.discovery().targets] == ["tests/test_old.py"]
            (repo / "tests" / "test_new.py").write_text(
                "from calc import add\n\n\ndef test_new():\n    assert add(2, 2) == 4\n")
            run = finish(service.start_run(["tests/test_new.py"]))
            assert run.state == "passed" and run.counts.passed == 1, run
            (repo / "tests" / "test_old.py").unlink()
            with pytest.raises(CodePlaneError) as gone:
                service.start_run(["tests/test_old.py"])
            assert gone.value.code == 7005
            with pytest.raises(CodePlaneError) as outside:  # a path outside the repository is still 7005
                service.start_run(["../elsewhere/test_x.py"])
            assert outside.value.code == 7005
        finally:
            service.close()
