"""Resolving the repository a command acts on, and its effective config."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codeplane.core.config import CodePlaneConfig, load_config
from codeplane.core.layout import RepoLayout
from codeplane.repo.workspace import find_repo_root


@dataclass(frozen=True)
class RepoContext:
    root: Path
    layout: RepoLayout
    config: CodePlaneConfig


def resolve(path: Path | None, overrides: list[str] | None = None) -> RepoContext:
    root = find_repo_root(path or Path.cwd())
    config = load_config(root, overrides=overrides or [])
    return RepoContext(root=root, layout=RepoLayout(root), config=config)
