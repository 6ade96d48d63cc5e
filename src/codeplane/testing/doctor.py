"""``cpl doctor`` check for test runners (§11.5 "Runner Not Found")."""

from __future__ import annotations

from pathlib import Path

from codeplane.core.config import load_config
from codeplane.core.doctor import CheckResult
from codeplane.testing.discovery import discover


def check_test_runners(root: Path) -> list[CheckResult]:
    """One failing line per runner the repository's tests need but PATH lacks; else one ok line."""
    found = discover(root, load_config(root).tests)
    missing = found.missing
    if missing:
        return [CheckResult(f"test runner {m.runner}", False,
                            f"'{m.command}' (tests.runners.{m.runner}.cmd) not found (project {m.project})"
                            if m.command else f"Test runner '{m.runner}' not found in PATH (project {m.project})",
                            m.hint)
                for m in missing]
    runners = sorted({p.runner for p in found.projects})
    detail = f"{', '.join(runners)} ({len(found.targets)} targets)" if runners else "no test targets found"
    return [CheckResult("test runners", True, detail)]
