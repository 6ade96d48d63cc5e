"""What the lint subsystem answers with: linters found for a repository, diagnostics, per-run outcomes.

Positions are 1-based lines and 1-based columns, as every supported linter prints them (mypy's JSON
columns are 0-based and are shifted on parsing); ``end_column`` is exclusive. Paths are repo-relative POSIX.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from codeplane.mutation import Delta

Severity = Literal["error", "warning", "info"]
RunStatus = Literal["ok", "failed", "timed_out", "missing", "unsupported"]


class _Frozen(BaseModel):
    # defer_build: built on first use, or by the server's warm-up after /ready (issue 19's warm restart)
    model_config = ConfigDict(frozen=True, defer_build=True)


class Diagnostic(_Frozen):
    """One finding of one linter, in the shape shared by every linter."""

    path: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None
    #: In a Jupyter notebook, the 1-based cell (ruff counts every cell) that ``line`` and ``column`` are
    #: relative to, as ``ruff check`` reports them; ``None`` in any other file.
    cell: int | None = None
    code: str = ""
    severity: Severity = "error"
    message: str
    #: ``lint_check(fix=true)`` would fix it (the linter offers a fix it applies by default).
    fixable: bool = False
    tool: str

    def sort_key(self) -> tuple[str, int, int, int, str, str, str]:
        return (self.path, self.cell or 0, self.line, self.column, self.tool, self.code, self.message)


class LinterInfo(_Frozen):
    """One linter as configured (or conventional) for one project directory of the repository."""

    #: ``ruff``, ``mypy``, ``eslint``, ``biome``, ``tsc``, ``go vet``, ``golangci-lint``, ``clippy``.
    name: str
    #: The project directory it runs in (repo-relative, ``.`` for the root); it covers files below it.
    root: str
    #: The config file that enables or configures it; ``None`` = conventional for the project (defaults).
    config_file: str | None = None
    #: File suffixes it lints below ``root``.
    extensions: tuple[str, ...] = ()
    #: Absolute path of the executable, ``None`` when not found.
    executable: str | None = None
    found: bool = False
    can_fix: bool = False
    #: How to install it when it is missing.
    install_hint: str | None = None
    #: False when CodePlane lists the linter but cannot run it yet (no parser for its output).
    runnable: bool = True

    @property
    def key(self) -> str:
        """Stable id of this instance: the name, plus the root when it is not the repository's."""
        return self.name if self.root == "." else f"{self.name}@{self.root}"


class ToolRun(_Frozen):
    """How one linter instance's run went; a failing linter never fails ``lint_check``."""

    tool: str
    root: str
    status: RunStatus
    exit_code: int | None = None
    duration_ms: int = 0
    #: Diagnostics it reported in the paths asked about.
    diagnostics: int = 0
    #: Diagnostics it reported in other files (mypy checks what the paths import), left out of the answer.
    elsewhere: int = 0
    #: Why it failed, timed out or was skipped (the start and end of stderr, bounded, or the install hint).
    message: str | None = None


class FixedFile(_Frozen):
    path: str
    tool: str
    old_sha256: str
    new_sha256: str | None = None
    edits: int = 0


class FixOutcome(_Frozen):
    """The fixes ``lint_check(fix=true)`` applied: one mutation batch, all files or none."""

    mutation_id: str
    files: tuple[FixedFile, ...] = ()
    delta: Delta


class LintReport(_Frozen):
    """One page of a lint run's diagnostics (sorted by path, cell, line, column, tool, code, message)."""

    diagnostics: tuple[Diagnostic, ...] = ()
    #: Diagnostics the run found (every page; may exceed what was kept, see ``truncated``).
    total: int = 0
    errors: int = 0
    warnings: int = 0
    fixable: int = 0
    #: Index of this page's first diagnostic in the run.
    offset: int = 0
    next_cursor: str | None = None
    #: The cursor that answers this same page again (``LintService.page``), e.g. with a smaller limit.
    cursor: str = ""
    #: More than ``lint.max_diagnostics`` were found; only the first ones (in order) can be paged.
    truncated: bool = False
    #: Each linter's run (first page only).
    runs: tuple[ToolRun, ...] = ()
    fix: FixOutcome | None = None
    #: Fixes that were not applied, and why (first page only).
    notes: tuple[str, ...] = ()
