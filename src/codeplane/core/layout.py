"""Where CodePlane keeps its state inside a repository (DECISIONS D5).

Everything lives under ``<repo>/.codeplane/``; this module is the single place that names those files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.errors import CodePlaneError, ErrorCode

STATE_DIR_NAME = ".codeplane"


@dataclass(frozen=True)
class RepoLayout:
    root: Path

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR_NAME

    def state_dir_problem(self) -> CodePlaneError | None:
        """2007 when something other than a directory is at ``.codeplane`` (a file, a link): it is not CodePlane's
        to replace or delete, and every command needs the directory there."""
        path = self.state_dir
        if path.is_symlink():
            # A link (committed in a cloned repository, say) would have CodePlane write its stores, and replace
            # files of theirs names it finds "damaged", wherever it points: outside the repository too.
            return CodePlaneError(ErrorCode.NOT_INITIALIZED, f"{path} is a symbolic link (to {os.readlink(path)}); "
                                  "CodePlane keeps its state only in a real directory there: remove the link",
                                  details={"path": str(path), "link_target": os.readlink(path)})
        if path.is_dir() or not path.exists():
            return None
        return CodePlaneError(ErrorCode.NOT_INITIALIZED, f"{path} is not a directory; CodePlane keeps its state "
                              "there: move or delete what is in its place", details={"path": str(path)})

    def require_state_dir_place(self) -> None:
        problem = self.state_dir_problem()
        if problem is not None:
            raise problem

    @property
    def config_file(self) -> Path:
        return self.state_dir / "config.yaml"

    @property
    def repo_id_file(self) -> Path:
        return self.state_dir / "repo_id"

    @property
    def gitignore_file(self) -> Path:
        return self.state_dir / ".gitignore"

    @property
    def cplignore_file(self) -> Path:
        return self.root / ".cplignore"

    @property
    def port_file(self) -> Path:
        return self.state_dir / "port"

    @property
    def chosen_port_file(self) -> Path:
        """The port ``cpl init`` picked once, used while the user's config sets no ``server.port`` (kept out
        of ``config.yaml``, which is the user's and never rewritten)."""
        return self.state_dir / "chosen_port"

    @property
    def pid_file(self) -> Path:
        return self.state_dir / "server.pid"

    @property
    def lock_file(self) -> Path:
        return self.state_dir / "server.lock"

    @property
    def last_error_file(self) -> Path:
        return self.state_dir / "last_error"

    @property
    def logs_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def log_file(self) -> Path:
        return self.logs_dir / "codeplane.jsonl"

    @property
    def index_db(self) -> Path:
        return self.state_dir / "index.db"

    @property
    def tantivy_dir(self) -> Path:
        return self.state_dir / "tantivy"

    @property
    def ledger_db(self) -> Path:
        return self.state_dir / "ledger.db"

    @property
    def journal_dir(self) -> Path:
        return self.state_dir / "journal"

    @property
    def artifacts_dir(self) -> Path:
        return self.state_dir / "artifacts"

    @property
    def test_runs_db(self) -> Path:
        return self.state_dir / "test_runs.db"

    @property
    def pycache_dir(self) -> Path:
        """Bytecode of Python test processes when the environment forbids writing it beside the sources
        (``core.bytecode``)."""
        return self.state_dir / "pycache"

    @property
    def token_file(self) -> Path:
        return self.state_dir / "token"
