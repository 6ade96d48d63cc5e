"""Resolving the repository a command acts on, and its effective config."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codeplane.core.config import ENV_PREFIX, CodePlaneConfig, global_config_path, load_config
from codeplane.core.config_diagnostics import locate
from codeplane.core.config_file import read_yaml
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.repo.workspace import find_repo_root

_ABSENT = object()
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
        check_runners(root, config, overrides or [])
    except CodePlaneError as exc:
        if not tolerant or exc.error not in _CONFIG_ERRORS:
            raise
        return RepoContext(root=root, layout=RepoLayout(root), config=CodePlaneConfig(), config_error=exc)
    return RepoContext(root=root, layout=RepoLayout(root), config=config)


def check_runners(root: Path, config: CodePlaneConfig, overrides: Sequence[str] = ()) -> None:
    """Refuse (2002) a ``tests.runners`` entry no run could use, named like every config error: the file, line
    and column of its key, or the layer that set it (the check lives with the runners, away from the loader)."""
    if not config.tests.runners:
        return
    from codeplane.testing.discovery import check_runner_config  # ~0.1 s to import: only when runners are set

    try:
        check_runner_config(config.tests)
    except CodePlaneError as exc:
        key = exc.details.get("key")
        if exc.error is not ErrorCode.CONFIG_INVALID_VALUE or not isinstance(key, str) or "file" in exc.details:
            raise
        raise _placed(exc, key, root, overrides) from None


def _placed(exc: CodePlaneError, key: str, root: Path, overrides: Sequence[str]) -> CodePlaneError:
    """``exc`` naming where ``key`` was set, by the loader's precedence: ``--set``, environment, repo, global."""
    details = dict(exc.details)

    def related(dotted: str) -> bool:
        return dotted == key or key.startswith(f"{dotted}.") or dotted.startswith(f"{key}.")

    for text in reversed(overrides):
        if related(text.partition("=")[0].strip()):
            return CodePlaneError(exc.error, f"{exc.message} (from --set {text})", details={**details,
                                  "source": f"--set {text}"})
    for name in sorted(os.environ, reverse=True):
        if name.startswith(ENV_PREFIX) and related(name[len(ENV_PREFIX):].lower().replace("__", ".")):
            return CodePlaneError(exc.error, f"{exc.message} (from environment variable {name})",
                                  details={**details, "source": f"environment variable {name}"})
    for path, layer in ((root / ".codeplane" / "config.yaml", "repo config"), (global_config_path(), "global config")):
        if not path.is_file():
            continue
        values, text = read_yaml(path)
        node: Any = values
        for part in key.split("."):  # this file must set the key itself: a global one a repo value overrode is not it
            node = node[part] if isinstance(node, dict) and part in node else _ABSENT
        found = locate(text, key) if node is not _ABSENT else None
        if found is not None:
            details.update(source=f"{layer} {path}", file=str(path), line=found[0], column=found[1])
            return CodePlaneError(exc.error, f"{path}:{found[0]}:{found[1]}: {exc.message}", details=details)
    return exc
