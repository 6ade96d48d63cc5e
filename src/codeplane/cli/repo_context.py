"""Resolving the repository a command acts on, and its effective config."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codeplane.core.config import CodePlaneConfig, load_config
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.repo.workspace import find_repo_root

_CONFIG_ERRORS = (ErrorCode.CONFIG_PARSE_ERROR, ErrorCode.CONFIG_INVALID_VALUE)


@dataclass(frozen=True)
class RepoContext:
    root: Path
    layout: RepoLayout
    config: CodePlaneConfig
    #: Set only by a tolerant resolve: the config error, while ``config`` holds the defaults.
    config_error: CodePlaneError | None = None


def resolve(path: Path | None, overrides: list[str] | None = None, *, tolerant: bool = False) -> RepoContext:
    """The repository and its config. ``tolerant``: a broken config gives the defaults plus the error, for
    commands that need only the repository root (``status``, ``clear``, ``down``), so a user can always
    look and clean up."""
    root = find_repo_root(path or Path.cwd())
    try:
        config = load_config(root, overrides=overrides or [])
        if config.tests.runners:  # the runners' names live with the runners (~0.1 s to import), not in core
            from codeplane.testing.discovery import check_runner_config

            check_runner_config(config.tests)
    except CodePlaneError as exc:
        if not tolerant or exc.error not in _CONFIG_ERRORS:
            raise
        return RepoContext(root=root, layout=RepoLayout(root), config=CodePlaneConfig(), config_error=exc)
    return RepoContext(root=root, layout=RepoLayout(root), config=config)
