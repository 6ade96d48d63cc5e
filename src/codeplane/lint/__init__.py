"""The lint subsystem (spec §23.4 Lint Tools): which linters a repository uses and their diagnostics in one
shape, with fixes applied through the mutation engine, never by the linter.

Public surface: :class:`LintService` (``tools``, ``check``, ``page``, ``plan_fixes``/``apply_fixes``) and
the models it answers with. Linters run as subprocesses through ``core.procs`` (timeout, process-group
kill); their machine formats are parsed in ``formats/``.

The names load on first use: the server imports ``lint.models`` for its answer schemas before ``/ready``,
and must not pay for the runner, the catalog and the fixer until a lint tool is called.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codeplane.lint.fixing import FixPlan
    from codeplane.lint.models import Diagnostic, FixedFile, FixOutcome, LinterInfo, LintReport, ToolRun
    from codeplane.lint.runner import Progress
    from codeplane.lint.service import LintService

_HOMES = {
    "FixPlan": "codeplane.lint.fixing",
    "Diagnostic": "codeplane.lint.models", "FixedFile": "codeplane.lint.models", "FixOutcome": "codeplane.lint.models",
    "LinterInfo": "codeplane.lint.models", "LintReport": "codeplane.lint.models", "ToolRun": "codeplane.lint.models",
    "Progress": "codeplane.lint.runner",
    "LintService": "codeplane.lint.service",
}

__all__ = ["Diagnostic", "FixOutcome", "FixPlan", "FixedFile", "LintReport", "LintService", "LinterInfo", "Progress",
           "ToolRun"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
