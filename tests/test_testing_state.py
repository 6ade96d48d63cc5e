"""What test runs leave on disk: bytecode where the environment forbids it beside the sources, and the runs
themselves (answered after a restart)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.core.layout import RepoLayout
from codeplane.testing import TestingService
from tests.builders import make_repo
from tests.runner_projects import PYTEST_PROJECT
from tests.testing_service import finish, service_for

pytestmark = pytest.mark.usefixtures("lean_pytest")


def _bytecode_written(repo: Path) -> tuple[list[str], list[str]]:
    """Cached bytecode of the repo's files: below CodePlane's prefix (names), and beside the sources."""
    mirror = Path(RepoLayout(repo).pycache_dir, *repo.parts[1:])
    kept = sorted(str(p.relative_to(mirror)) for p in mirror.rglob("*.pyc")) if mirror.is_dir() else []
    beside = []
    for directory, subdirs, _ in os.walk(repo):
        subdirs[:] = [d for d in subdirs if d not in (".codeplane", ".git")]
        beside += [os.path.join(directory, d) for d in subdirs if d == "__pycache__"]
    return kept, beside


@pytest.mark.parametrize("bytecode_cache", [True, False])
def test_where_bytecode_may_not_be_written_runs_cache_it_under_codeplane_only_if_allowed(
        tmp_path: Path, services: list[TestingService], monkeypatch: pytest.MonkeyPatch, bytecode_cache: bool) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\npythonpath = .\n", "settings.py": "X = 1\n",
        "tests/test_settings.py": "import settings\n\ndef test_x():\n    assert settings.X == 1\n"})
    service = service_for(repo, bytecode_cache=bytecode_cache)
    services.append(service)
    assert finish(service.start_run()).state == "passed"
    kept, beside = _bytecode_written(repo)
    assert beside == [], "nothing may be written beside the sources"
    if not bytecode_cache:
        assert not RepoLayout(repo).pycache_dir.exists()
        return
    tag = sys.implementation.cache_tag
    assert f"settings.{tag}.pyc" in kept
    assert any(k.startswith(f"tests/test_settings.{tag}-pytest-") for k in kept), kept
    # The run after reads that cache (pytest's start-up no longer pays for compiling), and then prunes the
    # bytecode of modules that are gone.
    orphan = Path(RepoLayout(repo).pycache_dir, *repo.parts[1:], f"deleted.{tag}.pyc")
    orphan.write_bytes(b"")
    assert finish(service.start_run()).state == "passed"
    deadline = time.monotonic() + 10
    while orphan.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _bytecode_written(repo) == (kept, [])


def test_finished_runs_are_kept_on_disk_the_newest_keep_runs_of_them(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", PYTEST_PROJECT)
    first = service_for(repo, retry_failed=False, keep_runs=2)
    services.append(first)
    runs = [finish(first.start_run(["tests/test_ok.py"])) for _ in range(3)]
    first.close()  # waits for each run's thread, which stores the run after it finishes
    again = service_for(repo, keep_runs=2)
    services.append(again)
    assert [again.get_run(r.run_id).snapshot() for r in runs[1:]] == runs[1:]
    with pytest.raises(CodePlaneError) as gone:
        again.get_run(runs[0].run_id)
    assert gone.value.code == 7004 and "last 2 runs" in gone.value.message
    stored = again.cancel(runs[2].run_id)
    assert stored.finished and stored.snapshot().state == runs[2].state, "a finished run stays as it ended"
