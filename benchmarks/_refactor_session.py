"""An in-process index and refactor service on a benchmark's working copy (the rename benchmarks).

The index runs without a watcher and with one structural worker, like a small ``cpl up``; the mutation engine
refreshes it after each write, so a rename's apply is visible to the next query.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.mutation import MutationEngine
from codeplane.refactor.service import RefactorService


@dataclass(frozen=True)
class RefactorSession:
    service: RefactorService
    index: IndexService


@contextmanager
def refactor_session(root: Path, *, ready_within_s: float = 300) -> Iterator[RefactorSession]:
    cfg = CodePlaneConfig()
    RepoLayout(root).state_dir.mkdir(exist_ok=True)
    index = IndexService(root, RepoLayout(root), cfg.index.model_copy(update={"watch": False}))
    index.register_indexer(StructuralIndexer(workers=1))
    index.start()
    mutation = MutationEngine(root, cfg.mutation, after_write=index.refresh_paths)
    try:
        assert index.wait_ready(ready_within_s), index.error
        yield RefactorSession(RefactorService.for_repository(root, cfg.refactor, index, mutation), index)
    finally:
        index.stop()
        mutation.close()


def git(root: Path, *args: str) -> None:
    """Run git in a benchmark's working copy, as a fixed author (the copies are committed to compare against)."""
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
                        "GIT_COMMITTER_EMAIL": "b@b"})


def commit_base(root: Path) -> Path:
    """Make ``root`` a repository whose one commit holds what it contains (a benchmark's fresh working copy)."""
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root
