"""An editor's save seen by the index drops the saved module's cached bytecode (QA38): Python trusts a ``.pyc``
whose source has the same size and whole-second mtime, so ``V = 2`` saved over ``V = 1`` within a second made the
next test run import ``V = 1`` and pass a test that fails. CodePlane's own writers already dropped it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from tests.builders import make_repo


def _imported_value(repo: Path) -> str:
    """``V`` as a test process imports it, caching bytecode where CodePlane's test runs do."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(RepoLayout(repo).pycache_dir), "PYTHONDONTWRITEBYTECODE": ""}
    ran = subprocess.run([sys.executable, "-c", "import a; print(a.V)"], cwd=repo, env=env, capture_output=True,
                         text=True, timeout=60, check=True)
    return ran.stdout.strip()


def test_a_same_size_save_within_the_second_is_not_run_from_stale_bytecode(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "V = 1\n"})
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    service.build()
    assert _imported_value(repo) == "1"
    source = repo / "a.py"
    before = source.stat()
    source.write_text("V = 2\n")  # an editor's save: same size, and (as the cache sees it) the same second
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    service._pipeline.open()
    try:
        service._pipeline.refresh(["a.py"], "watcher")
    finally:
        service._pipeline.close()
    assert _imported_value(repo) == "2"
