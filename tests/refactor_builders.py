"""Refactor service over a real repository: git repo, index service with the structural indexer, mutation
engine. No server; tests drive :class:`RefactorService` directly (fast), a few go through MCP elsewhere."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.mutation import MutationEngine
from codeplane.refactor.service import RefactorService
from tests.builders import make_repo
from tests.runner_projects import JS_DIR


@dataclass
class RefactorEnv:
    root: Path
    index: IndexService
    mutation: MutationEngine
    service: RefactorService

    def read(self, path: str) -> str:
        return (self.root / path).read_text(encoding="utf-8")

    def snapshot(self) -> dict[str, bytes]:
        return {p.relative_to(self.root).as_posix(): p.read_bytes() for p in sorted(self.root.rglob("*"))
                if p.is_file() and ".git" not in p.parts and ".codeplane" not in p.parts}


@contextmanager
def refactor_env(root: Path, files: Mapping[str, str], config: CodePlaneConfig | None = None,
                 ) -> Iterator[RefactorEnv]:
    cfg = config or CodePlaneConfig()
    make_repo(root, files)
    layout = RepoLayout(root)
    layout.state_dir.mkdir(exist_ok=True)
    index = IndexService(root, layout, cfg.index.model_copy(update={"watch": False}))
    index.register_indexer(StructuralIndexer(workers=1))
    index.start()
    assert index.wait_ready(60), index.error
    mutation = MutationEngine(root, cfg.mutation, after_write=index.refresh_paths)
    service = RefactorService.for_repository(root, cfg.refactor, index, mutation)
    try:
        yield RefactorEnv(root, index, mutation, service)
    finally:
        index.stop()
        mutation.close()


def run_node(env: RefactorEnv, path: str = "lib/index.js") -> str:
    """Run ``path`` under node in the repository; its output (the run must succeed)."""
    proc = subprocess.run(["node", path], cwd=env.root, capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def assert_tsc_passes(env: RefactorEnv, shown: str = "") -> None:
    """``tsc -p .`` in the repository exits 0 (skipped where ``.ci/run`` has not installed typescript)."""
    tsc = JS_DIR / "node_modules/.bin/tsc"
    if not tsc.is_file() or shutil.which("node") is None:
        pytest.skip("typescript is not installed (.ci/run installs it with npm)")
    checked = subprocess.run([str(tsc), "-p", "."], cwd=env.root, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + shown


def build_and_run(root: Path, compiler: str, *sources: str) -> str:
    """Compile ``sources`` (``-Isrc``) into ``prog`` with ``compiler`` and run it: its output."""
    built = subprocess.run([compiler, "-Isrc", "-o", "prog", *sources], cwd=root, capture_output=True, text=True,
                           check=False)
    assert built.returncode == 0, built.stderr
    return subprocess.run(["./prog"], cwd=root, capture_output=True, text=True, check=True).stdout


def rename_all_high(env: RefactorEnv, symbol: str, new_name: str) -> set[tuple[str, int, int]]:
    """Rename ``symbol``; every edit must be high but a use in a macro's body (medium: the preprocessor's text);
    nothing is left for a person to judge. The edited positions."""
    preview = env.service.rename(symbol, new_name)
    assert preview.status == "ready", preview
    assert {(e.certainty, e.reason) for e in preview.edits if e.certainty != "high"} <= {
        ("medium", "macro_body")}, (symbol, [
        (e.path, e.line, e.column, e.certainty, e.reason) for e in preview.edits if e.certainty != "high"])
    env.service.apply(preview.refactor_id)
    return {(e.path, e.line, e.column) for e in preview.edits}
