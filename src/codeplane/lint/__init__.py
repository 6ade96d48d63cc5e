"""The lint subsystem (spec §23.4 Lint Tools): which linters a repository uses and their diagnostics in one
shape, with fixes applied through the mutation engine, never by the linter.

Public surface: :class:`LintService` (``tools``, ``check``, ``page``, ``plan_fixes``/``apply_fixes``) and
the models it answers with. Linters run as subprocesses through ``core.procs`` (timeout, process-group
kill); their machine formats are parsed in ``formats/``.
"""

from codeplane.lint.fixing import FixPlan
from codeplane.lint.models import Diagnostic, FixedFile, FixOutcome, LinterInfo, LintReport, ToolRun
from codeplane.lint.runner import Progress
from codeplane.lint.service import LintService

__all__ = ["Diagnostic", "FixOutcome", "FixPlan", "FixedFile", "LintReport", "LintService", "LinterInfo", "Progress",
           "ToolRun"]
