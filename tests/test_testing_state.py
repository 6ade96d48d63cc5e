"""What test runs leave on disk: bytecode where the environment forbids it beside the sources, and the runs
themselves (answered after a restart)."""

from __future__ import annotations

import importlib.util
import marshal
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


def _pyc(source: Path, compiled_from: str) -> bytes:
    """A ``.pyc`` whose header matches ``source`` (mtime, size) but whose code is ``compiled_from``."""
    st = source.stat()
    header = (importlib.util.MAGIC_NUMBER + b"\0\0\0\0" + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
              + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
    return header + marshal.dumps(compile(compiled_from, str(source), "exec"))


def test_a_cold_cache_reads_the_bytecode_installed_beside_sources_and_writes_only_its_own_tree(
        tmp_path: Path, services: list[TestingService], monkeypatch: pytest.MonkeyPatch) -> None:
    # A prefix alone hides every installed __pycache__: the first run compiled the stdlib, pytest and its plugins.
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    lib = tmp_path / "lib"  # stands for site-packages: compiled by its installer
    tag = sys.implementation.cache_tag
    for name in ("fresh", "stale"):
        (lib / "__pycache__").mkdir(parents=True, exist_ok=True)
        source = lib / f"installed_{name}.py"
        source.write_text("VALUE = 'src'\n")
        # Same length as the source: the header's size matches, so only the mtime tells a stale one.
        pyc = _pyc(source, "VALUE = 'pyc'\n")
        if name == "stale":
            pyc = pyc[:8] + (int(source.stat().st_mtime) - 10 & 0xFFFFFFFF).to_bytes(4, "little") + pyc[12:]
        (lib / "__pycache__" / f"installed_{name}.{tag}.pyc").write_bytes(pyc)
    # The environment's own sitecustomize still runs (CodePlane's shadows it on the path).
    (lib / "sitecustomize.py").write_text("import os\nos.environ['CPL_TEST_CHAINED'] = '1'\n")
    monkeypatch.setenv("PYTHONPATH", str(lib))
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\npythonpath = .\n", "mine.py": "X = 1\n",
        "tests/test_it.py": "import os\nimport installed_fresh, installed_stale, mine\n\ndef test_x():\n"
                            "    assert installed_fresh.VALUE == 'pyc', 'the valid installed pyc was not read'\n"
                            "    assert installed_stale.VALUE == 'src', 'a stale pyc must not be trusted'\n"
                            "    assert os.environ.get('CPL_TEST_CHAINED') == '1'\n"})
    stale_pyc = (lib / "__pycache__" / f"installed_stale.{tag}.pyc").read_bytes()
    service = service_for(repo)
    services.append(service)
    run = finish(service.start_run())
    assert run.state == "passed", run.targets[0].attempts[-1].result
    mirror = Path(RepoLayout(repo).pycache_dir, *lib.parts[1:])
    assert sorted(p.name for p in mirror.glob("*.pyc")) == [f"installed_stale.{tag}.pyc", f"sitecustomize.{tag}.pyc"]
    assert (lib / "__pycache__" / f"installed_stale.{tag}.pyc").read_bytes() == stale_pyc, "nothing written beside"
    assert _bytecode_written(repo)[1] == []
    assert f"mine.{tag}.pyc" in _bytecode_written(repo)[0]
