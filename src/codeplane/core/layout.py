"""Where CodePlane keeps its state inside a repository (DECISIONS D5).

Everything lives under ``<repo>/.codeplane/``; this module is the single place that names those files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

STATE_DIR_NAME = ".codeplane"


@dataclass(frozen=True)
class RepoLayout:
    root: Path

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR_NAME

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
