"""Locating the git work tree and setting up ``.codeplane/`` (``cpl init``)."""

from __future__ import annotations

import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from codeplane.core.atomic import write_atomic
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout

#: §6.5 defaults written to a new ``.cplignore``.
DEFAULT_CPLIGNORE = """\
# CodePlane ignore rules (gitignore syntax). Paths matched here are not indexed and cannot be
# written through CodePlane tools. Edit freely; changes are picked up while the server runs.
node_modules/
dist/
build/
.venv/
__pycache__/
*.pyc
*.log
coverage/
pytest_cache/
.pytest_cache/
"""


def find_repo_root(path: Path) -> Path:
    """The root of the git work tree containing ``path``; 2003 if there is none (or it is bare)."""
    start = path.resolve()
    if not start.exists():
        raise CodePlaneError(ErrorCode.NOT_A_GIT_REPOSITORY, f"{path} does not exist",
                             details={"path": str(path)})
    found = pygit2.discover_repository(str(start))
    if found is None:
        raise CodePlaneError(
            ErrorCode.NOT_A_GIT_REPOSITORY,
            f"{start} is not inside a git work tree (run `git init` first)",
            details={"path": str(start)},
        )
    repo = pygit2.Repository(found)
    if repo.is_bare or repo.workdir is None:
        raise CodePlaneError(ErrorCode.NOT_A_GIT_REPOSITORY, f"{found} is a bare repository",
                             details={"path": str(start)})
    return Path(repo.workdir).resolve()


def pick_free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class InitReport:
    root: Path
    created: list[str] = field(default_factory=list)
    repo_id: str = ""
    port: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.created)


CONFIG_TEMPLATE = """\
# CodePlane settings for this repository. This file is yours: CodePlane creates it once and never
# rewrites it. Layers, lowest first: built-in defaults < ~/.config/codeplane/config.yaml < this file
# < CODEPLANE__SECTION__KEY environment variables < `cpl up --set section.key=value`.
# The port clients connect to ({port}) was picked by `cpl init` and is kept in .codeplane/chosen_port;
# to choose one yourself:
# server:
#   port: {port}
"""


def _chosen_port(layout: RepoLayout, report: InitReport) -> int:
    """The stored port, or a free one picked now and stored (CodePlane's own state file, not the config)."""
    try:
        port = int(layout.chosen_port_file.read_text(encoding="utf-8").strip())
        if 0 < port < 65536:
            return port
    except (OSError, ValueError):
        pass
    port = pick_free_port()
    write_atomic(layout.chosen_port_file, f"{port}\n".encode())
    report.created.append(".codeplane/chosen_port")
    return port


def initialize(root: Path) -> InitReport:
    """Create what is missing under ``.codeplane/`` and ``.cplignore``; never overwrite what exists.

    ``config.yaml`` is the user's: written once as a commented template when absent, never read or
    rewritten here (a broken one is reported by whoever loads the config, with its line and column).
    """
    layout = RepoLayout(root)
    report = InitReport(root=root)
    layout.require_state_dir_place()
    layout.state_dir.mkdir(exist_ok=True)
    if not layout.gitignore_file.exists():
        write_atomic(layout.gitignore_file, b"*\n")
        report.created.append(".codeplane/.gitignore")
    repo_id = layout.repo_id_file.read_text(encoding="utf-8").strip() if layout.repo_id_file.is_file() else ""
    if not repo_id:
        write_atomic(layout.repo_id_file, f"{uuid.uuid4()}\n".encode())
        report.created.append(".codeplane/repo_id")
    report.repo_id = layout.repo_id_file.read_text(encoding="utf-8").strip()
    report.port = _chosen_port(layout, report)
    if not layout.config_file.exists():
        write_atomic(layout.config_file, CONFIG_TEMPLATE.format(port=report.port).encode())
        report.created.append(".codeplane/config.yaml")
    if not layout.cplignore_file.exists():
        write_atomic(layout.cplignore_file, DEFAULT_CPLIGNORE.encode())
        report.created.append(".cplignore")
        _exclude_locally(root, "/.cplignore")
    elif _reads(layout.cplignore_file) == DEFAULT_CPLIGNORE:
        _exclude_locally(root, "/.cplignore")  # one an earlier version wrote and left untracked
    return report


def _reads(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _exclude_locally(root: Path, pattern: str) -> None:
    """List ``pattern`` in the repository's ``info/exclude`` (this clone only, never committed), so a file CodePlane
    wrote does not show as untracked, and ``git_stage_and_commit(all=true)`` or ``git add -A`` does not put it in
    the user's next commit. A team that wants to share its rules commits it with ``git add -f``. Best effort: a
    clone whose git directory cannot be written only sees the file as untracked."""
    try:
        git_dir = Path(pygit2.Repository(str(root)).path)
        common = git_dir / "commondir"  # a linked worktree: info/exclude lives in the main git directory
        if common.is_file():
            git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
        exclude = git_dir / "info" / "exclude"
        text = exclude.read_text(encoding="utf-8") if exclude.is_file() else ""
        if pattern in text.splitlines():
            return
        exclude.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(exclude, (text + ("" if not text or text.endswith("\n") else "\n") + pattern + "\n").encode())
    except (OSError, pygit2.GitError):
        return


@dataclass(frozen=True)
class HeadInfo:
    branch: str | None
    head: str | None
    detached: bool


def head_info(root: Path) -> HeadInfo:
    """Current branch and HEAD commit; ``None`` fields for an unborn HEAD."""
    repo = pygit2.Repository(str(root))
    if repo.head_is_unborn:
        target = repo.references.get("HEAD")
        name = target.target if target is not None and isinstance(target.target, str) else None
        return HeadInfo(branch=name.removeprefix("refs/heads/") if name else None, head=None, detached=False)
    if repo.head_is_detached:
        return HeadInfo(branch=None, head=str(repo.head.target), detached=True)
    return HeadInfo(branch=repo.head.shorthand, head=str(repo.head.target), detached=False)
