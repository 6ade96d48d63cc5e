"""Locating the git work tree and setting up ``.codeplane/`` (``cpl init``)."""

from __future__ import annotations

import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pygit2
import yaml

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


def read_repo_config(layout: RepoLayout) -> dict[str, object]:
    if not layout.config_file.is_file():
        return {}
    loaded = yaml.safe_load(layout.config_file.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else {}


def initialize(root: Path) -> InitReport:
    """Create what is missing under ``.codeplane/`` and ``.cplignore``; never overwrite what exists."""
    layout = RepoLayout(root)
    report = InitReport(root=root)
    layout.state_dir.mkdir(exist_ok=True)
    if not layout.gitignore_file.exists():
        write_atomic(layout.gitignore_file, b"*\n")
        report.created.append(".codeplane/.gitignore")
    if not layout.repo_id_file.exists():
        write_atomic(layout.repo_id_file, f"{uuid.uuid4()}\n".encode())
        report.created.append(".codeplane/repo_id")
    report.repo_id = layout.repo_id_file.read_text(encoding="utf-8").strip()
    config = read_repo_config(layout)
    server = config.get("server")
    port = server.get("port") if isinstance(server, dict) else None
    if not isinstance(port, int) or port <= 0:
        port = pick_free_port()
        merged = dict(config)
        merged["server"] = {**(server if isinstance(server, dict) else {}), "port": port}
        write_atomic(layout.config_file, yaml.safe_dump(merged, sort_keys=True).encode())
        report.created.append(".codeplane/config.yaml")
    report.port = port
    if not layout.cplignore_file.exists():
        write_atomic(layout.cplignore_file, DEFAULT_CPLIGNORE.encode())
        report.created.append(".cplignore")
    return report


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
